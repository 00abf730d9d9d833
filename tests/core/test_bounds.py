"""What an agent sends is bounded and what it reads is encodable: argument names and sizes, observations cut at a
documented cap (saying so), and lone surrogates replaced where they enter (sttgym.actions)."""

from __future__ import annotations

import json

import gymnasium as gym
from hypothesis import given, settings
from hypothesis import strategies as st

import sttgym  # noqa: F401  (registers the ids)
from sttgym.actions import (MAX_ARGUMENTS, MAX_KEY, MAX_OBSERVATION, Reply, ToolCall, encodable, observe,
                            parse_action, read_result, render_result)

# Any text, lone surrogates (category Cs) included: what a Python caller, or JSON's \ud800 escapes, can send.
TEXT = st.text(st.characters(codec=None, categories=None), max_size=60)
VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
                      lambda inner: st.lists(inner, max_size=5) | st.dictionaries(TEXT, inner, max_size=5),
                      max_leaves=25)


def utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@settings(max_examples=120, deadline=None)
@given(name=TEXT, arguments=st.dictionaries(TEXT, VALUES, max_size=6), content=TEXT)
def test_a_parsed_action_holds_only_text_utf8_can_carry(name, arguments, content):
    call = parse_action({"name": name or "x", "arguments": arguments})
    assert isinstance(call, (ToolCall, dict))
    assert utf8(json.dumps(call.arguments if isinstance(call, ToolCall) else call, ensure_ascii=False))
    if isinstance(call, ToolCall):
        assert utf8(call.name) and call.arguments == json.loads(encodable(json.dumps(arguments, ensure_ascii=False)))
    reply = parse_action({"content": content})
    assert isinstance(reply, Reply) and utf8(reply.content) and len(reply.content) == len(content[:20_000])


@settings(max_examples=150, deadline=None)
@given(data=VALUES, pad=st.sampled_from(["x", '"', "\x00", "\ud800"]), width=st.integers(0, 250_000))
def test_an_observation_is_encodable_json_within_the_cap_and_says_when_it_was_cut(data, pad, width):
    result = {"success": True, "data": data, "pad": pad * width}  # '"' and '\x00' grow when escaped
    observation = observe(result)
    assert len(observation) <= MAX_OBSERVATION and utf8(observation)
    read = read_result(observation)
    if len(render_result(result)) <= MAX_OBSERVATION:
        assert read == json.loads(render_result(result))  # untouched below the cap
    else:
        assert read["success"] is True and "are shown (results are cut at 100,000)" in read["truncated"]
        assert render_result(result).startswith(read["text"][:1000])


def test_argument_names_and_sizes_are_bounded_before_anything_echoes_them():
    env = gym.make("ScrambleTool/Unscrambled")
    env.reset(seed=0)
    for arguments, why in (({"k" * 10_000_000: 1}, f"a key longer than {MAX_KEY}"),
                           ({"paths": ["x" * 19_000] * 6}, f"larger than {MAX_ARGUMENTS:,} values and characters"),
                           ({str(i): i for i in range(60_000)}, "larger than")):
        observation, *_, info = env.step({"name": "list_directory", "arguments": arguments})
        assert why in info["result"]["error"] and len(observation) < 1000  # refused whole, nothing echoed


def test_every_scramble_tool_s_observation_of_a_lone_surrogate_is_encodable():
    """17 of the 30 tools echoed a lone surrogate from their arguments, which no server reply could encode."""
    env = gym.make("ScrambleTool/Unscrambled")
    _, info = env.reset(seed=0)
    for spec in info["tools"]:
        function = spec["function"]
        arguments = {k: "half an emoji \ud83d" if p.get("type") == "string" else 1
                     for k, p in function["parameters"]["properties"].items()}
        observation, *_, step = env.step({"name": function["name"], "arguments": arguments})
        assert utf8(observation) and utf8(json.dumps(step, ensure_ascii=False, default=str)), function["name"]
        if function["name"] in ("submit_solution", "skip_task", "end_episode"):
            env.reset(seed=0)
