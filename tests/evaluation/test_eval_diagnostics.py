"""Failure-mode labels on hand-made trajectories, one per mode, and their neighbours that must not match."""

from __future__ import annotations

import json

from sttgym.evaluation.diagnostics import count_modes, diagnose

MUTATING = ["dispatch_vehicle", "assign_vehicle", "book_route"]
EVENT = {"trigger": "road_closed", "observable_via": "get_route", "changes": []}


def step(name=None, ok=True, events=(), content=None, **arguments):
    action = {"name": name, "arguments": arguments} if name else {"content": content or "Task Completed"}
    observation = json.dumps({"success": ok, "data" if ok else "error": {} if ok else "failed"})
    return {"action": action, "observation": observation if name else "The conversation has ended.",
            "reward": 0.0, "events": list(events)}


def record(steps, reward=0.5, timing="after", solvable=True, terminated=True):
    return {"reward": reward, "steps": steps, "mutating_tools": MUTATING, "solvable": solvable,
            "trigger_timing": {"road_closed": timing}, "terminated": terminated}


def test_stale_state_acting_after_the_change_without_reading_it():
    steps = [step("get_route", route="R1"), step("book_route", route="R1", events=[EVENT]),
             step("dispatch_vehicle", ok=False, vehicle="V1"), step()]
    assert diagnose(record(steps)) == ["stale_state"]


def test_no_stale_state_when_the_change_was_read_first():
    steps = [step("get_route", route="R1"), step("book_route", route="R1", events=[EVENT]),
             step("get_route", route="R1"), step("book_route", route="R2"), step("get_route", route="R2"), step()]
    assert diagnose(record(steps)) == []


def test_a_trigger_that_fired_before_its_observable_call_was_seen_by_it():
    fired_during_read = [step("get_route", route="R1", events=[EVENT]), step("book_route", route="R2"),
                         step("get_route", route="R2"), step()]
    assert diagnose(record(fired_during_read, timing="before")) == []
    assert diagnose(record(fired_during_read, timing="after")) == ["stale_state"]


def test_misdiagnosis_retrying_the_failing_tool_with_tweaked_arguments():
    steps = [step("get_route", route="R1"), step("book_route", route="R1", events=[EVENT]),
             step("get_route", route="R1"), step("dispatch_vehicle", ok=False, vehicle="V1"),
             step("dispatch_vehicle", ok=False, vehicle="v1"), step("dispatch_vehicle", ok=False, vehicle="V-1"),
             step()]
    assert diagnose(record(steps)) == ["misdiagnosis"]


def test_misdiagnosis_pressing_on_with_changes_after_seeing_a_hard_block():
    steps = [step("get_route", route="R1"), step("book_route", route="R1", events=[EVENT]),
             step("get_route", route="R1"), step("book_route", route="R9"), step("get_route", route="R9"), step()]
    assert diagnose(record(steps, reward=0.0, solvable=False)) == ["misdiagnosis"]
    assert diagnose(record(steps, reward=0.5, solvable=True)) == []


def test_missing_verification_finishing_right_after_the_adaptation():
    steps = [step("get_route", route="R1"), step("book_route", route="R1", events=[EVENT]),
             step("get_route", route="R1"), step("book_route", route="R2"),
             step("chat_with_user", message="Done, rerouted."), step()]
    assert diagnose(record(steps)) == ["missing_verification"]
    cut_off = record(steps[:-1], terminated=False)  # ran out of turns: it never chose to finish
    assert diagnose(cut_off) == []


def test_successes_and_untriggered_failures_get_no_label_and_counts_add_up():
    stale = record([step("get_route", route="R1", events=[EVENT]), step("book_route", route="R1"), step()])
    untriggered = record([step("get_route", route="R1"), step()])
    success = record(stale["steps"], reward=1.0)
    assert diagnose(success) == [] and diagnose(untriggered) == []
    counts = count_modes([stale, untriggered, success])
    assert counts == {"stale_state": 1, "misdiagnosis": 0, "missing_verification": 0, "failed": 2, "unlabelled": 1}
