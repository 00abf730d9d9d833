"""Triggers, predicates and operations as data: firing modes, recorded changes, JSON round trips."""

import pytest

from sttgym.clock import Clock
from sttgym.checklist import Check, EpisodeLog, evaluate
from sttgym.triggers import Context, Observable, Trigger, diff
from sttgym.schema import Op, Pred
from sttgym.world import World, operation, predicate


class Doors(World):
    domain = "Doors"

    @predicate
    def door_open(self, door_id: str) -> bool:
        return self.doors[door_id]["open"]

    @predicate
    def writing(self, ctx) -> bool:
        return ctx.tool == "write"

    @operation
    def jam(self, door_id: str, note: str) -> None:
        self.doors[door_id].update(open=False, note=note)

    @operation
    def jam_the_one_in_use(self, note: str, ctx) -> None:
        """Binds to the agent's commitment: whichever door the call names."""
        self.doors[ctx.arguments["door_id"]].update(open=False, note=note)


def world(minutes=0):
    clock = Clock("2024-01-01T00:00")
    clock.advance(minutes)
    return Doors({"doors": {"D1": {"open": True, "note": None}}}, clock)


def ctx(tool="write", minutes=0, **arguments):
    return Context(now="2024-01-01T00:00", minutes=minutes, tool=tool, arguments=arguments)


def closing(**extra):
    return Trigger(name="close", description="the door closes at 00:10",
                   when=Pred(name="time_reached", args={"moment": "2024-01-01T00:10"}),
                   effect=[Op(name="set_field", args={"path": ["doors", "D1", "open"], "value": False})],
                   observable=Observable(tool="read", args={"door_id": "D1"}), **extra)


def test_always_once_fires_once_when_its_condition_holds_and_records_the_diff():
    t, w = closing(), world()
    assert t.fire(w, ctx(), "before", fired=0) is None  # 00:00: not yet
    w.clock.advance(10)
    event, changes = t.fire(w, ctx(), "before", fired=0)
    assert event["changes"] == [{"path": "doors.D1.open", "old": True, "new": False}]
    assert changes == [(("doors", "D1", "open"), True, False)]
    assert w.state["doors"]["D1"]["open"] is False
    w.state["doors"]["D1"]["open"] = True
    assert t.fire(w, ctx(), "before", fired=1) is None and w.state["doors"]["D1"]["open"] is True


def test_activation_and_timing_limit_when_a_trigger_is_checked():
    w = world(10)
    t = closing(activation=["write"], timing="after")
    assert t.fire(w, ctx(tool="other"), "after", 0) is None
    assert t.fire(w, ctx(tool="write"), "before", 0) is None
    assert t.fire(w, ctx(tool="write"), "after", 0) is not None


def test_guarded_trigger_refires_until_its_recovery_holds():
    t = Trigger(name="jam", description="the door jams while anyone writes, until it is open again",
                when=Pred(name="writing"), mode="conditional_guarded",
                recovery=Pred(name="field_equals", args={"path": ["doors", "D1", "note"], "value": "fixed"}),
                effect=[Op(name="jam", args={"door_id": "D1", "note": "jammed"})],
                observable=Observable(tool="read"))
    w = world()
    first, _ = t.fire(w, ctx(), "before", 0)
    assert {c["path"] for c in first["changes"]} == {"doors.D1.open", "doors.D1.note"}
    assert t.fire(w, ctx(), "before", 1) is None  # still as the trigger left it
    w.state["doors"]["D1"]["open"] = True
    again, _ = t.fire(w, ctx(), "before", 1)
    assert again["changes"] == [{"path": "doors.D1.open", "old": True, "new": False}]
    w.state["doors"]["D1"].update(open=True, note="fixed")
    assert t.fire(w, ctx(), "before", 2) is None


def test_an_operation_may_change_what_the_call_being_made_commits():
    t = Trigger(name="jam", description="the door the agent writes to jams", when=Pred(name="writing"),
                effect=[Op(name="jam_the_one_in_use", args={"note": "stuck"})], observable=Observable(tool="read"))
    w = world()
    w.state["doors"]["D2"] = {"open": True, "note": None}
    event, _ = t.fire(w, ctx(door_id="D2"), "before", 0)
    assert w.state["doors"]["D2"] == {"open": False, "note": "stuck"} and w.state["doors"]["D1"]["open"] is True
    assert {c["path"] for c in event["changes"]} == {"doors.D2.open", "doors.D2.note"}


def test_guarded_needs_a_recovery_and_unknown_names_are_errors():
    with pytest.raises(ValueError, match="recovery"):
        closing(mode="conditional_guarded")
    with pytest.raises(KeyError, match="no predicate"):
        world().holds(Pred(name="nope"))
    with pytest.raises(KeyError, match="no operation"):
        world().apply(Op(name="nope"))


def test_a_predicate_that_cannot_read_its_fields_does_not_hold():
    assert world().holds(Pred(name="door_open", args={"door_id": "D9"})) is False
    assert world().holds(Pred(name="field_equals", args={"path": ["doors", "D9", "open"], "value": True})) is False


def test_combinators_nest_as_plain_json():
    w = world()
    is_open = {"name": "door_open", "args": {"door_id": "D1"}}
    late = {"name": "time_reached", "args": {"moment": "2024-01-01T01:00"}}
    assert w.holds(Pred(name="all_of", args={"preds": [is_open, {"name": "none_of", "args": {"preds": [late]}}]}))
    assert not w.holds(Pred(name="any_of", args={"preds": [late]}))


def test_operation_values_are_copied_into_the_state():
    w, new = world(), {"text": "wet paint"}
    w.apply(Op(name="set_field", args={"path": ["doors", "D1", "note"], "value": new}))
    new["text"] = "changed"
    assert w.state["doors"]["D1"]["note"] == {"text": "wet paint"}


def test_a_trigger_round_trips_through_json():
    t = closing(activation=["write"])
    assert Trigger.model_validate_json(t.model_dump_json()) == t


def test_diff_reports_added_removed_and_changed_fields():
    assert diff({"a": 1, "b": {"c": 2}}, {"a": 1, "b": {"c": 3, "d": 4}}) == [
        {"path": "b.c", "old": 2, "new": 3}, {"path": "b.d", "old": None, "new": 4}]


def test_gates_zero_the_score_and_milestones_count():
    w, log = world(), EpisodeLog()
    milestone = Check(name="open", description="", holds=Pred(name="door_open", args={"door_id": "D1"}))
    other = Check(name="late", description="", holds=Pred(name="time_reached", args={"moment": "2024-01-02T00:00"}))
    gate = Check(name="noted", description="", gate=True,
                 holds=Pred(name="field_equals", args={"path": ["doors", "D1", "note"], "value": None}))
    assert evaluate([milestone, other, gate], w, log)[0] == 0.5
    w.state["doors"]["D1"]["note"] = "x"
    score, breakdown = evaluate([milestone, other, gate], w, log)
    assert score == 0.0 and [b["passed"] for b in breakdown] == [True, False, False]
    assert evaluate([gate], w, log)[0] == 0.0  # gates alone are no progress


def test_a_recorded_change_does_not_alias_the_live_state():
    t = Trigger(name="note", description="", when=Pred(name="time_reached", args={"moment": "2024-01-01T00:00"}),
                effect=[Op(name="set_field", args={"path": ["doors", "D1", "note"], "value": {"text": "wet"}})],
                observable=Observable(tool="read"))
    w = world()
    event, _ = t.fire(w, ctx(), "before", 0)
    w.state["doors"]["D1"]["note"]["text"] = "dry"
    assert event["changes"] == [{"path": "doors.D1.note", "old": None, "new": {"text": "wet"}}]
