import json
from typing import Literal

import pytest

from sttgym.actions import read_result, render_result
from sttgym.tools import collect_tools, fail, ok, signature_text, tool, validate_arguments


class Box:
    @tool(mutates=True, cost=7)
    def put(self, item: str, count: int, mode: Literal["fast", "slow"] = "fast", tags: list[str] | None = None,
            weight: float = 1.0, meta: dict | None = None, fragile: bool = False) -> dict:
        """Put items in the box.

        Args:
            item: What to put.
            count: How many,
                at least one.
            mode: How.

        Returns:
            A receipt.
        """
        return ok(message=f"{count} {item}")

    @tool
    def peek(self) -> dict:
        """Look inside."""
        return ok([])

    def helper(self) -> None:
        """Not a tool."""


@pytest.fixture
def specs():
    return collect_tools(Box())


def test_only_marked_methods_become_tools(specs):
    assert sorted(specs) == ["peek", "put"]
    assert specs["put"].mutates and specs["put"].cost == 7
    assert not specs["peek"].mutates and specs["peek"].cost == 1


def test_schema_comes_from_hints_and_docstring(specs):
    fn = specs["put"].schema["function"]
    assert fn["name"] == "put"
    assert fn["description"] == "Put items in the box. [7 min]"  # the clock's minutes, which TIMING explains
    props = fn["parameters"]["properties"]
    assert props["item"] == {"type": "string", "description": "What to put."}
    assert props["count"] == {"type": "integer", "description": "How many, at least one."}
    assert props["mode"]["enum"] == ["fast", "slow"]
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["weight"]["type"] == "number" and props["meta"]["type"] == "object"
    assert fn["parameters"]["required"] == ["item", "count"]
    assert fn["parameters"]["additionalProperties"] is False


@pytest.mark.parametrize("arguments, expected", [
    ({"item": "x", "count": 1}, None),
    ({"item": "x", "count": 1, "weight": 2}, None),  # an integer is a number
    ({"item": "x"}, "missing argument(s) 'count'"),
    ({"item": "x", "count": 1, "colour": "red"}, "unknown argument(s) 'colour'"),
    ({"item": 3, "count": 1}, "argument 'item' must be string"),
    ({"item": "x", "count": True}, "argument 'count' must be integer"),  # bool is not an integer
    ({"item": "x", "count": 1.5}, "argument 'count' must be integer"),
    ({"item": "x", "count": 1, "mode": "medium"}, "must be one of 'fast', 'slow'"),
    ({"item": "x", "count": 1, "tags": ["a", 2]}, "must be array of string"),
    ({"item": "x", "count": 1, "meta": {1: "a"}}, "must be object"),
    (["x", 1], "arguments must be a JSON object"),
])
def test_validation_names_the_problem_and_the_signature(specs, arguments, expected):
    problem = validate_arguments(specs["put"], arguments)
    if expected is None:
        assert problem is None
    else:
        assert expected in problem
        assert signature_text(specs["put"]) in problem


def test_results():
    assert ok({"a": 1}) == {"success": True, "data": {"a": 1}}
    assert ok(message="done") == {"success": True, "message": "done"}
    assert fail("nope") == {"success": False, "error": "nope"}


@pytest.mark.parametrize("result", [
    {"success": True, "data": [{"id": "A-1", "price": 0.1, "seats": 10**30, "late": -0.0, "note": "ümlaut 日本\n\"\\"}]},
    {"success": False, "error": "bad \ud800 surrogate"},  # the fast parser refuses it
    {"deep": json.loads("[" * 300 + "]" * 300)},  # past the fast parser's depth limit
    {"odd": [float("nan"), float("inf"), 1.7976931348623157e308, 5e-324, None, True]},
])
def test_a_rendered_result_reads_back_as_the_standard_library_reads_it(result):
    text = render_result(result)
    back = read_result(text)
    assert json.dumps(back) == json.dumps(json.loads(text)) and back is not result
    assert [type(v) for v in back.values()] == [type(v) for v in json.loads(text).values()]
