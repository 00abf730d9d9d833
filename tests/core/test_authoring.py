"""The authoring kit: plans in phases, checked builders, dry runs, split-aware names, trigger rules."""

import numpy as np
import pytest

from sttgym.authoring import Author, Plan
from sttgym.task import Ref
from sttgym.triggers import Observable, Trigger
from tests.toy_domain import LockerWorld, toy_scenario


@pytest.fixture
def author():
    return Author(LockerWorld, np.random.default_rng(0))


def test_calls_are_checked_against_the_tool_schemas(author):
    call = author.call.reserve_locker(locker_id="L1", parcel_id=Ref(step="p"), save_as="r")
    assert call.name == "reserve_locker" and call.save_as == "r"
    with pytest.raises(ValueError, match="missing argument"):
        author.call.reserve_locker(locker_id="L1")
    with pytest.raises(ValueError, match="must be string"):
        author.call.get_locker(locker_id=7)
    with pytest.raises(AttributeError, match="no tool 'get_lockers'"):
        author.call.get_lockers(locker_id="L1")
    assert author.call.chat_with_user(message="hello").name == "chat_with_user"


def test_predicates_and_operations_are_checked_against_their_signatures(author):
    assert author.pred.holds_parcel(locker_id="L1", parcel_id="P1").args == {"locker_id": "L1", "parcel_id": "P1"}
    with pytest.raises(ValueError, match="missing"):
        author.pred.holds_parcel(locker_id="L1")
    with pytest.raises(ValueError, match="unknown"):
        author.op.set_field(path=["a"], value=1, extra=2)
    with pytest.raises(AttributeError, match="no Pred"):
        author.pred.nope()


def test_plans_have_named_phases(author):
    read, go = author.call.get_locker(locker_id="L1"), author.call.reserve_locker(locker_id="L1", parcel_id="P")
    plan = Plan(read=[read], commit=[go]).then(check=[read])
    assert plan.calls == [read, go, read]
    assert plan.upto("commit") == [read, go] and plan.upto("commit", inclusive=False) == [read]
    assert plan.without("read").calls == [go, read] and plan["check"] == [read]
    with pytest.raises(KeyError, match="no phase"):
        plan.upto("load")


def test_a_dry_run_times_the_real_tools_and_leaves_the_state_alone(author):
    state = {"lockers": {"L1": {"status": "free", "parcel": None}}}
    calls = [author.call.get_locker(locker_id="L1"), author.call.reserve_locker(locker_id="L1", parcel_id="P"),
             author.call.chat_with_user(message="done")]
    run = author.dry_run(state, "2024-05-01T09:00", calls)
    assert run.times == ["2024-05-01T09:01", "2024-05-01T09:06", "2024-05-01T09:08"]  # 1 + 5 + 2 minutes
    assert run.ok() and run.state["lockers"]["L1"]["parcel"] == "P" and state["lockers"]["L1"]["parcel"] is None
    assert run.at(0) == "2024-05-01T09:00" and run.at(2) == "2024-05-01T09:06" and run.end == "2024-05-01T09:08"


def test_a_continued_run_equals_one_run_of_both_plans_and_leaves_the_first_alone(author):
    state = {"lockers": {x: {"status": "free", "parcel": None} for x in ("L1", "L2")}}
    jam = Trigger(name="jam", description="", activation=["reserve_locker"], timing="after",
                  when=author.pred.all_of(preds=[]), observable=Observable(tool="get_locker", args={"locker_id": "L2"}),
                  effect=[author.op.set_field(path=["lockers", "L2", "status"], value="jammed")])
    head = [author.call.reserve_locker(locker_id="L1", parcel_id="P")]
    tail = [author.call.get_locker(locker_id="L2"), author.call.reserve_locker(locker_id="L2", parcel_id="Q"),
            author.call.chat_with_user(message="L2 is jammed")]
    first = author.dry_run(state, "2024-05-01T09:00", head, [jam])
    both = author.dry_run(state, "2024-05-01T09:00", head + tail, [jam])
    continued = first.then(tail)
    assert (continued.results, continued.times, continued.state) == (both.results, both.times, both.state)
    assert continued.firing.log.events == both.firing.log.events and len(both.firing.log.events) == 1  # fired once
    assert not both.results[2]["success"] and both.results[1]["data"]["status"] == "jammed"
    assert len(first.results) == 1 and first.state["lockers"]["L2"] == {"status": "jammed", "parcel": None}
    assert first.then([]).state == first.state and first.then([]).world is not first.world


def test_a_change_alongside_the_story_comes_in_the_same_call_whichever_call_brings_the_story(author):
    state = {"lockers": {x: {"status": "free", "parcel": None} for x in ("L1", "L2")}}
    jam = Trigger(name="jam", description="", activation=["reserve_locker"], timing="after",
                  when=author.pred.field_equals(path=["lockers", "L1", "status"], value="reserved"),
                  observable=Observable(tool="get_locker", args={"locker_id": "L1"}),
                  effect=[author.op.set_field(path=["lockers", "L1", "status"], value="jammed")])
    when, activation = author.alongside([jam])
    assert activation == ["reserve_locker"]
    second = Trigger(name="moved", description="", activation=activation, timing="after", when=when,
                     observable=Observable(tool="get_locker", args={"locker_id": "L2"}),
                     effect=[author.op.set_field(path=["lockers", "L2", "status"], value="jammed")])
    reserve = [author.call.reserve_locker(locker_id=x, parcel_id="P") for x in ("L2", "L1")]
    run = author.dry_run(state, "2024-05-01T09:00", [author.call.get_locker(locker_id="L1"), *reserve],
                         [jam, second])
    assert [(e["trigger"], e["call_index"]) for e in run.firing.log.events] == [("jam", 3), ("moved", 3)]
    timed = jam.model_copy(update={"activation": [], "name": "clock"})  # a story checked on every call
    assert author.alongside([jam, timed])[1] == []


def test_names_come_from_disjoint_halves_of_a_pool_per_split():
    pool = [f"N{i}" for i in range(20)]
    draws = {split: {Author(LockerWorld, np.random.default_rng(s), split).pick(pool) for s in range(50)}
             for split in ("benchmark", "train")}
    assert draws["benchmark"] and draws["train"] and not draws["benchmark"] & draws["train"]
    with pytest.raises(ValueError, match="split"):
        Author(LockerWorld, np.random.default_rng(0), "test")


def test_a_trigger_activated_by_a_read_is_refused(author):
    reading = Trigger(name="t", description="", activation=["get_locker"], when=author.pred.time_reached(moment="2024"),
                      effect=[], observable=Observable(tool="get_locker"))
    with pytest.raises(ValueError, match="only tools that change the world"):
        author.check_trigger(reading)
    hidden = reading.model_copy(update={"activation": [], "observable": Observable(tool="reserve_locker")})
    with pytest.raises(ValueError, match="must be a read tool"):
        author.check_trigger(hidden)


def test_a_task_round_trips_through_json_unchanged(author):
    task = toy_scenario(author)
    again = type(task).model_validate_json(task.model_dump_json())
    assert again == task and again.model_dump_json() == task.model_dump_json()


def test_a_reference_to_an_earlier_result_survives_json_and_still_resolves(author):
    from sttgym.task import Call, resolve

    call = author.call.reserve_locker(locker_id=Ref(step="pick", path=("data", "locker_id")), parcel_id="P")
    again = Call.model_validate_json(call.model_dump_json())
    assert isinstance(again.arguments["locker_id"], Ref) and again == call
    assert resolve(again.arguments, {"pick": {"data": {"locker_id": "L7"}}}) == {"locker_id": "L7", "parcel_id": "P"}
    plain = Call(name="x", arguments={"filter": {"step": "a", "path": []}})  # a dict argument, not a reference
    assert Call.model_validate_json(plain.model_dump_json()).arguments == {"filter": {"step": "a", "path": []}}


def test_a_reference_inside_a_list_argument_is_accepted():
    from sttgym.task import Call, resolve
    from sttgym.tools import ok, tool
    from sttgym.world import World

    class Batches(World):
        domain = "Batches"

        @tool(mutates=True)
        def ship_together(self, shipment_ids: list[str]) -> dict:
            """Ship several shipments on one truck.

            Args:
                shipment_ids: The shipments.
            """
            return ok(shipment_ids)

    author = Author(Batches, np.random.default_rng(0))
    call = author.call.ship_together(shipment_ids=["S-1", Ref(step="made", path=("data", "id"))])
    again = Call.model_validate_json(call.model_dump_json())
    assert resolve(again.arguments, {"made": {"data": {"id": "S-2"}}}) == {"shipment_ids": ["S-1", "S-2"]}
    with pytest.raises(ValueError, match="must be"):
        author.call.ship_together(shipment_ids="S-1")
