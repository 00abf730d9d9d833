"""Reading Qwen/Hermes text: reasoning, tool-call blocks, malformed calls, JSON objects."""

from __future__ import annotations

from sttgym.models.parsing import (extract_json_object, has_malformed_call, parse_assistant_text, parse_tool_calls,
                                   split_reasoning)


def test_reasoning_is_split_off_with_or_without_the_opening_tag():
    assert split_reasoning("<think>a plan</think>\n\nanswer") == ("a plan", "answer")
    assert split_reasoning("a plan</think>answer") == ("a plan", "answer")  # template opened the block
    assert split_reasoning("<think>cut off mid-thought") == ("cut off mid-thought", "")
    assert split_reasoning("just text") == ("", "just text")


def test_tool_calls_are_parsed_and_removed_from_the_content():
    text = ('Checking.\n<tool_call>\n{"name": "get_locker", "arguments": {"locker_id": "L1"}}\n</tool_call>'
            '<tool_call>{"name": "reserve_locker", "arguments": "{\\"locker_id\\": \\"L1\\"}"}</tool_call>')
    calls, rest = parse_tool_calls(text)
    assert calls == [{"name": "get_locker", "arguments": {"locker_id": "L1"}},
                     {"name": "reserve_locker", "arguments": {"locker_id": "L1"}}]
    assert rest == "Checking."


def test_an_unterminated_but_complete_call_counts_and_a_broken_one_stays():
    calls, rest = parse_tool_calls('<tool_call>{"name": "get_locker", "arguments": {}}')
    assert calls == [{"name": "get_locker", "arguments": {}}] and rest == ""
    calls, rest = parse_tool_calls('<tool_call>{"name": "get_locker", "arguments": {locker}}</tool_call>')
    assert calls == [] and has_malformed_call(rest)
    calls, rest = parse_tool_calls('<tool_call>{"arguments": {}}</tool_call>')  # no name: not a call
    assert calls == [] and has_malformed_call(rest)


def test_full_turn():
    content, calls, reasoning = parse_assistant_text(
        '<think>the locker may be gone</think><tool_call>{"name": "get_locker", "parameters": {"locker_id": "L9"}}'
        '</tool_call>')
    assert reasoning == "the locker may be gone" and content == ""
    assert calls == [{"name": "get_locker", "arguments": {"locker_id": "L9"}}]


def test_json_object_is_found_in_prose_and_fences():
    assert extract_json_object('Sure:\n```json\n{"action": {"reply": "x"}}\n```') == {"action": {"reply": "x"}}
    assert extract_json_object("a {broken and then {\"ok\": 1}") == {"ok": 1}
    assert extract_json_object("[1, 2] no object") is None


def test_pathological_replies_parse_to_nothing_and_keep_their_text():
    # Inputs that once made parsing quadratic (a reply like these stalled every worker for a minute).
    spaces = "<tool_call>" + " " * 32_000
    calls, content = parse_tool_calls(spaces)
    assert calls == [] and content == "<tool_call>"
    nested = '{"a":' * 80_000
    assert extract_json_object(nested) is None
    late = "{" * 100 + ' {"verdict": "ok"}'
    assert extract_json_object(late) is None  # only the first MAX_JSON_STARTS braces are tried as starts
