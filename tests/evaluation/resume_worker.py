"""Run by the resume test in a subprocess: a slow scripted LLM evaluation of the test domain into argv[1]."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for the tests package

from tests.evaluation.evaltoy import register  # noqa: E402
from tests.evaluation.scripted import ScriptedModel, nominal_policy  # noqa: E402

from sttgym.evaluation.runner import EvalConfig, Runner  # noqa: E402

RUNS = 4

if __name__ == "__main__":
    register()
    config = EvalConfig(agent="llm", model="scripted-nominal", domains=["EvalToy"], runs=RUNS, workers=3, protocol="full")
    Runner(config, sys.argv[1], model=ScriptedModel(nominal_policy, delay=0.02)).run()
