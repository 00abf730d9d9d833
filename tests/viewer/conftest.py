"""Small runs for the viewer's tests: reference agents on the arena and ScrambleTool, and a scripted
model whose turns and tool results carry markup that must show as text."""

from __future__ import annotations

import pytest
from tests.evaluation.scripted import ScriptedModel

from sttgym.evaluation.runner import EvalConfig, Runner
from sttgym.models.base import ChatResponse

SCRIPT = "<script>window.__pwned = 1</script>"
IMAGE = '<img src=x onerror="window.__pwned = 2">'


def hostile_policy(conversation: list[dict]) -> ChatResponse:
    """A tool name and reply text full of markup: the env echoes the name back in its error result."""
    if not any(m["role"] == "assistant" for m in conversation):
        return ChatResponse(content=f"Let me look. {IMAGE}", reasoning=f"thinking {SCRIPT}",
                            tool_calls=[{"name": SCRIPT, "arguments": {"q": IMAGE}}], prompt_tokens=10,
                            completion_tokens=5)
    return ChatResponse(content="Task Completed", prompt_tokens=12, completion_tokens=2)


@pytest.fixture(scope="session")
def arena_run(tmp_path_factory):
    """Eight nominal-agent episodes: four instances, each with triggers (failing) and without (passing)."""
    out = tmp_path_factory.mktemp("arena") / "run"
    Runner(EvalConfig(agent="nominal", runs=1, limit=4, conditions=("dynamic", "static")), out).run()
    return out


@pytest.fixture(scope="session")
def hostile_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("hostile") / "run"
    Runner(EvalConfig(agent="llm", model="scripted", runs=1, limit=1), out, model=ScriptedModel(hostile_policy)).run()
    return out


@pytest.fixture(scope="session")
def mixed_run(tmp_path_factory):
    """Two episodes of a model: the first plays one call and finishes, the second's server is down."""
    def policy(conversation: list[dict]) -> ChatResponse:
        if "Sofia Romano" not in conversation[1]["content"]:  # only the first instance's traveller gets answers
            return ChatResponse(error="server down: connection refused")
        done = any(m["role"] == "assistant" for m in conversation)
        return ChatResponse(content="Task Completed") if done else ChatResponse(
            tool_calls=[{"name": "list_airports", "arguments": {}}])

    out = tmp_path_factory.mktemp("mixed") / "run"
    Runner(EvalConfig(agent="llm", model="scripted", runs=1, limit=2), out, model=ScriptedModel(policy)).run()
    return out


@pytest.fixture(scope="session")
def scramble_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("scramble") / "run"
    Runner(EvalConfig(suite="scramble", agent="cycle-tracing", runs=1, limit=1), out).run()
    return out
