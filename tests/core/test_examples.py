import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parents[2] / "examples"


def test_quickstart_runs_and_reports_the_breakdown():
    out = subprocess.run([sys.executable, str(EXAMPLES / "quickstart.py")], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert "reward after giving up" in out and "OracleAgent: reward 1.00" in out
    assert "unknown argument(s) 'site'" in out


def test_the_benchmark_runner_prints_every_figure():
    script = EXAMPLES.parent / "benchmarks" / "run.py"
    out = subprocess.run([sys.executable, str(script), "--quick", "--blocks", "1"], capture_output=True, text=True,
                         timeout=300, check=True).stdout
    for row in ("ColdChain step: read", "CarRental step: final reply", "read at turn 50", "ColdChain reset",
                "ScrambleTool/All reset", "gym.make", "TemporalWindow: added per step", "memory per env",
                "import sttgym / import gymnasium", "RL rows per second", "episodes per second"):
        assert row in out, row
