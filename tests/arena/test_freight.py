"""Freight: tool behaviour on a hand-made corridor, the customs rules of the world, and cheap exploits that fail."""

from __future__ import annotations

import copy
import json

import gymnasium as gym
import pytest

from tests.arena.harness import WorldHarness
from tests.arena.withheld import assert_unpredictable, assert_withheld_story, play, unasked
from sttgym.agents import NominalAgent, OracleAgent, PlanAgent
from sttgym.agents.probes import BlindWriter
from sttgym.envs.arena.freight.world import FreightWorld
from sttgym.clock import shift
from sttgym.rollout import rollout
from sttgym.task import Call, resolve

START = "2024-05-06T09:00"
DAY = "2024-05-06"


def corridor() -> dict:
    """Terminals TRM-A and TRM-B (export side), depot DEP-Z (import side), crossings BCP-X and BCP-Y.
    TRM-A -> BCP-X 40 min -> DEP-Z 30 min; TRM-A -> BCP-Y 60 min -> DEP-Z 50 min; TRM-A - TRM-B 30 min."""
    def crossing(queue: int, **rules) -> dict:
        return {"status": "open", "outage_until": None, "notice": "", "opens": "00:00", "closes": "24:00",
                "queue_minutes": queue, "banned": [], "permit_for": [], "bonded_for": [],
                "required_docs": ["commercial_invoice", "certificate_of_origin"], "inspected": [],
                "inspection": {"limit": 1, "used": {DAY: 0}}, **rules}

    def slot(x: str, start: str, end: str) -> dict:
        return {"crossing": x, "start": f"{DAY}T{start}", "end": f"{DAY}T{end}", "status": "free",
                "consignment": None, "note": ""}

    return {
        "sites": {"TRM-A": {"name": "A", "kind": "terminal", "country": "N"},
                  "TRM-B": {"name": "B", "kind": "terminal", "country": "N"},
                  "DEP-Z": {"name": "Z", "kind": "depot", "country": "S"},
                  "BCP-X": {"name": "X", "kind": "crossing", "country": "N/S"},
                  "BCP-Y": {"name": "Y", "kind": "crossing", "country": "N/S"}},
        "roads": {"RD-1": {"a": "TRM-A", "b": "BCP-X", "minutes": 40, "open": True},
                  "RD-2": {"a": "BCP-X", "b": "DEP-Z", "minutes": 30, "open": True},
                  "RD-3": {"a": "TRM-A", "b": "BCP-Y", "minutes": 60, "open": True},
                  "RD-4": {"a": "BCP-Y", "b": "DEP-Z", "minutes": 50, "open": True},
                  "RD-5": {"a": "TRM-A", "b": "TRM-B", "minutes": 30, "open": True}},
        "crossings": {"BCP-X": crossing(10, inspected=["wine"]), "BCP-Y": crossing(20, permit_for=["wine"])},
        "slots": {"SL-1": slot("BCP-X", "10:00", "11:00"), "SL-2": slot("BCP-X", "11:00", "12:00"),
                  "SL-3": slot("BCP-Y", "11:00", "12:00")},
        "consignments": {"CN-1": {"shipper": "S", "consignee": "C", "commodity": "wine", "weight_kg": 8000,
                                  "declared_value": 1, "origin": "TRM-A", "location": "TRM-A",
                                  "available_from": START, "destination": "DEP-Z", "deliver_by": f"{DAY}T13:00",
                                  "documents": {"commercial_invoice": "valid", "certificate_of_origin": "rejected"},
                                  "reissuable": ["certificate_of_origin"], "priority": "standard", "truck": None,
                                  "note": ""}},
        "declarations": {}, "permits": {}, "movements": {},
        "carriers": {"CAR-1": {"name": "K", "bonded": False}},
        "trucks": {"TRK-1": {"carrier": "CAR-1", "capacity_kg": 10000, "bonded": False, "location": "TRM-A",
                             "shift_end": f"{DAY}T18:00", "status": "available", "consignment": None, "note": ""},
                   "TRK-2": {"carrier": "CAR-1", "capacity_kg": 5000, "bonded": False, "location": "TRM-A",
                             "shift_end": f"{DAY}T18:00", "status": "available", "consignment": None, "note": ""},
                   "TRK-3": {"carrier": "CAR-1", "capacity_kg": 9000, "bonded": False, "location": "TRM-B",
                             "shift_end": f"{DAY}T18:00", "status": "available", "consignment": None, "note": ""}},
        "permit_desks": {x: {"status": "open", "lead_minutes": 0, "valid_hours": 12, "note": ""}
                         for x in ("BCP-X", "BCP-Y")},
        "counters": {"declaration": 10, "permit": 20, "movement": 30},
    }


class Harness(WorldHarness):
    world_class, start, default_state = FreightWorld, START, staticmethod(corridor)


@pytest.fixture
def w() -> Harness:
    return Harness()


def test_a_held_declaration_clears_once_the_document_is_reissued_and_the_trip_is_timed(w):
    held = w("file_declaration", consignment_id="CN-1", crossing_id="BCP-X")
    assert held["data"] == {"declaration_id": "DEC-11", "status": "held", "missing": ["certificate_of_origin"]}
    assert w("request_document", consignment_id="CN-1", document="certificate_of_origin")["success"]
    assert w("file_declaration", consignment_id="CN-1", crossing_id="BCP-X")["data"]["status"] == "cleared"
    assert w("book_slot", slot_id="SL-1", consignment_id="CN-1")["success"]
    assert w("assign_truck", consignment_id="CN-1", truck_id="TRK-1")["success"]
    assert w.holds("cleared_to_cross", consignment_id="CN-1") and not w.holds("on_time", consignment_id="CN-1")
    sent = w("dispatch", consignment_id="CN-1")
    assert sent["success"], sent
    # Now 09:33; 20 minutes' loading, 40 to the crossing (10:33, inside SL-1), 10 minutes' queue, 30 onward.
    m = sent["data"]
    assert (m["departs"], m["at_crossing"], m["crosses"], m["arrives"]) == (
        f"{DAY}T10:00", f"{DAY}T10:40", f"{DAY}T10:40", f"{DAY}T11:20")
    assert w.world.crossings["BCP-X"]["inspection"]["used"][DAY] == 1  # wine is inspected at X
    assert w.holds("on_time", consignment_id="CN-1") and w.holds("not_late", consignment_id="CN-1")
    assert not w("dispatch", consignment_id="CN-1")["success"]  # already on its way
    assert not w("confirm_delivery", movement_id="MOV-31")["success"]  # arrives only at 11:20
    w.clock.advance(120)
    assert not w("cancel_movement", movement_id="MOV-31")["success"]  # it has left
    assert w("confirm_delivery", movement_id="MOV-31")["success"]
    assert w.holds("on_time", consignment_id="CN-1") and w.world.trucks["TRK-1"]["location"] == "DEP-Z"
    assert w("notify_consignee", consignment_id="CN-1", message="Delivered at 11:20.")["success"]
    assert w("get_consignment", consignment_id="CN-1")["data"]["notices"][0]["message"] == "Delivered at 11:20."


@pytest.mark.parametrize("name,args", [
    ("file_declaration", {"consignment_id": "CN-9", "crossing_id": "BCP-X"}),
    ("file_declaration", {"consignment_id": "CN-1", "crossing_id": "BCP-Q"}),
    ("apply_for_permit", {"consignment_id": "CN-1", "crossing_id": "BCP-X"}),  # X needs none for wine
    ("request_document", {"consignment_id": "CN-1", "document": "health_certificate"}),
    ("book_slot", {"slot_id": "SL-9", "consignment_id": "CN-1"}),
    ("book_slot", {"slot_id": "SL-1", "consignment_id": "CN-9"}),
    ("cancel_slot", {"slot_id": "SL-1"}),
    ("assign_truck", {"consignment_id": "CN-1", "truck_id": "TRK-2"}),  # too small
    ("assign_truck", {"consignment_id": "CN-1", "truck_id": "TRK-3"}),  # at another terminal
    ("transload", {"consignment_id": "CN-1", "terminal_id": "DEP-Z"}),
    ("transload", {"consignment_id": "CN-1", "terminal_id": "TRM-A"}),
    ("dispatch", {"consignment_id": "CN-1"}),
    ("cancel_movement", {"movement_id": "MOV-1"}),
    ("confirm_delivery", {"movement_id": "MOV-1"}),
    ("notify_consignee", {"consignment_id": "CN-9", "message": "hello"}),
    ("notify_consignee", {"consignment_id": "CN-1", "message": "  "}),
])
def test_a_refused_change_changes_nothing(w, name, args):
    before = copy.deepcopy(w.world.state)
    result = w(name, **args)
    assert not result["success"] and result["error"]
    assert w.world.state == before


def ready(w: Harness, crossing: str = "BCP-X", slot: str = "SL-1") -> None:
    w.world.consignments["CN-1"]["documents"]["certificate_of_origin"] = "valid"
    assert w("file_declaration", consignment_id="CN-1", crossing_id=crossing)["data"]["status"] == "cleared"
    assert w("book_slot", slot_id=slot, consignment_id="CN-1")["success"]
    assert w("assign_truck", consignment_id="CN-1", truck_id="TRK-1")["success"]


def test_a_ban_refuses_the_declaration_and_the_dispatch(w):
    ready(w)
    w.world.crossings["BCP-X"].update(banned=["wine"], notice="rule CR-1")
    sent = w("dispatch", consignment_id="CN-1")
    assert not sent["success"] and "may not cross" in sent["error"]
    assert not w.holds("cleared_to_cross", consignment_id="CN-1")
    assert not w("file_declaration", consignment_id="CN-1", crossing_id="BCP-X")["success"]
    assert w("check_route", consignment_id="CN-1", crossing_id="BCP-X")["data"]["rule_problems"]
    assert "may not cross" in w("get_consignment", consignment_id="CN-1")["data"]["crossing_problems"][0]


def test_a_permit_crossing_needs_a_permit_valid_when_the_truck_crosses(w):
    ready(w, "BCP-Y", "SL-3")
    assert "no permit" in w("dispatch", consignment_id="CN-1")["error"]
    w.world.permit_desks["BCP-Y"]["lead_minutes"] = 300  # a permit from 14:3x: too late for SL-3
    assert w("apply_for_permit", consignment_id="CN-1", crossing_id="BCP-Y")["success"]
    assert not w("dispatch", consignment_id="CN-1")["success"]
    w.world.permit_desks["BCP-Y"]["lead_minutes"] = 0
    assert w("apply_for_permit", consignment_id="CN-1", crossing_id="BCP-Y")["success"]
    assert w("dispatch", consignment_id="CN-1")["success"]


def test_the_inspection_quota_counts_by_crossing_day_and_resets_at_midnight(w):
    ready(w)
    w.world.crossings["BCP-X"]["inspection"]["used"][DAY] = 1
    assert "inspection quota" in w("dispatch", consignment_id="CN-1")["error"]
    assert w("get_crossing", crossing_id="BCP-X")["data"]["inspections_left_today"] == 0
    w.world.slots["SL-9"] = {"crossing": "BCP-X", "start": "2024-05-07T00:00", "end": "2024-05-07T01:00",
                             "status": "free", "consignment": None, "note": ""}
    assert w("book_slot", slot_id="SL-9", consignment_id="CN-1")["success"]
    assert w.world.slots["SL-1"]["status"] == "free"  # one slot per consignment: the old one is released
    w.world.trucks["TRK-1"]["shift_end"] = "2024-05-07T06:00"
    assert w("dispatch", consignment_id="CN-1")["success"]


def test_slot_end_driver_shift_and_outage_bound_the_dispatch(w):
    ready(w)
    w.clock.advance(60)  # 10:33 now: the truck would reach X at 11:53, after SL-1 ends
    assert "after slot SL-1 ends" in w("dispatch", consignment_id="CN-1")["error"]
    assert w("book_slot", slot_id="SL-2", consignment_id="CN-1")["success"]
    w.world.trucks["TRK-1"]["shift_end"] = f"{DAY}T12:00"
    assert "off shift" in w("dispatch", consignment_id="CN-1")["error"]
    w.world.trucks["TRK-1"]["shift_end"] = f"{DAY}T18:00"
    w.world.crossings["BCP-X"].update(status="outage", outage_until=f"{DAY}T13:00")
    assert "outage" in w("dispatch", consignment_id="CN-1")["error"]
    w.world.crossings["BCP-X"]["outage_until"] = f"{DAY}T11:00"  # back before the truck crosses
    assert w("dispatch", consignment_id="CN-1")["success"]


def test_transload_moves_the_goods_and_only_a_truck_there_collects_them(w):
    ready(w)
    moved = w("transload", consignment_id="CN-1", terminal_id="TRM-B")
    assert moved["success"] and w.world.consignments["CN-1"]["truck"] is None
    assert w.world.trucks["TRK-1"]["status"] == "available"
    assert w.world.consignments["CN-1"]["available_from"] == f"{DAY}T10:50"  # 09:20 + 30 minutes + an hour
    assert not w("assign_truck", consignment_id="CN-1", truck_id="TRK-1")["success"]
    assert w("assign_truck", consignment_id="CN-1", truck_id="TRK-3")["success"]


# ----------------------------------------------------------------------------- tasks and exploits

CONFLICTS = ["T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3"]


def call(env, name: str, **arguments) -> dict:
    observation, *_ = env.step({"name": name, "arguments": arguments})
    return json.loads(observation)


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_the_blind_writer_meets_every_trigger_and_earns_nothing(conflict):
    env = gym.make(f"STTArena/Freight-{conflict}-medium")
    traj = rollout(env, BlindWriter(), seed=3)
    assert {e["trigger"] for e in traj.info["trigger_log"]} == {t.name for t in env.unwrapped.task.triggers}
    assert traj.reward == 0.0


def stubborn(env, seed: int, same_crossing: bool = True) -> float:
    """The cheapest recoveries: the nominal plan, then, without reading what changed, either re-book the next free
    slots at the same crossing and dispatch again, or (``same_crossing=False``) just dispatch again."""
    env.reset(seed=seed)
    task, saved = env.unwrapped.task, {}
    for c in task.nominal_plan:
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    book = next(c.arguments for c in task.nominal_plan if c.name == "book_slot")
    slots = env.unwrapped.world.state["slots"]  # privileged: the slot table, without a read that would notice
    x = slots[book["slot_id"]]["crossing"]
    later = sorted((s["start"], i) for i, s in slots.items() if s["crossing"] == x and s["status"] == "free"
                   and s["start"] > slots[book["slot_id"]]["start"])
    for _, slot in later[:3]:
        if same_crossing:
            call(env, "book_slot", slot_id=slot, consignment_id=book["consignment_id"])
        if call(env, "dispatch", consignment_id=book["consignment_id"]).get("success"):
            break
    *_, info = env.step({"content": "Task Completed"})
    return info["score"]


@pytest.mark.parametrize("same_crossing", [True, False])
def test_retrying_the_original_crossing_without_reading_earns_nothing(same_crossing):
    scores = [stubborn(gym.make(f"STTArena/Freight-{c}-{lvl}"), seed, same_crossing)
              for c in CONFLICTS for lvl in ("easy", "medium", "hard") for seed in (0, 1)]
    assert sum(scores) / len(scores) <= 0.25


@pytest.mark.parametrize("conflict", ["S3", "T2", "ST2"])
def test_rereading_then_rebooking_the_same_crossing_fails_where_the_crossing_is_closed(conflict):
    """Noticing the change earns the first milestone only; re-booking the closed crossing earns nothing more."""
    env = gym.make(f"STTArena/Freight-{conflict}-hard")
    env.reset(seed=2)
    task = env.unwrapped.task
    shown = task.triggers[0].observable
    stubborn(env, 2)
    env.reset(seed=2)
    saved = {}
    for c in task.nominal_plan:
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    call(env, shown.tool, **shown.args)
    book = next(c.arguments for c in task.nominal_plan if c.name == "book_slot")
    slots = env.unwrapped.world.state["slots"]
    x = slots[book["slot_id"]]["crossing"]
    for slot in [i for i, s in sorted(slots.items()) if s["crossing"] == x and s["status"] == "free"][:3]:
        call(env, "book_slot", slot_id=slot, consignment_id=book["consignment_id"])
        call(env, "dispatch", consignment_id=book["consignment_id"])
    *_, info = env.step({"content": "Task Completed"})
    assert info["score"] <= 1 / 3 + 1e-9


@pytest.mark.parametrize("conflict", ["T1", "S3", "ST2"])
def test_impossible_tasks_need_the_blocking_fact_and_punish_a_dispatch_anyway(conflict):
    env_id = f"STTArena/Freight-{conflict}-impossible"
    assert rollout(gym.make(env_id), OracleAgent(), seed=0).reward == 1.0
    assert rollout(gym.make(env_id), NominalAgent(), seed=0).reward == 0.0
    env = gym.make(env_id)
    env.reset(seed=0)
    vague = [c if c.name != "chat_with_user" else c.model_copy(update={"arguments": {
        "message": "I'm sorry, but I cannot move this consignment; something changed and it no longer works."}})
        for c in env.unwrapped.task.oracle]
    assert rollout(gym.make(env_id), PlanAgent(vague), seed=0).reward == 0.0


def test_refusing_a_solvable_task_earns_nothing():
    for c in CONFLICTS:
        env = gym.make(f"STTArena/Freight-{c}-easy")
        env.reset(seed=4)
        *_, info = env.step({"content": "I'm sorry, this cannot be done: the crossing is closed."})
        assert info["score"] == 0.0


def test_instances_differ_and_a_stored_task_replays():
    a, b = gym.make("STTArena/Freight-S1-medium"), gym.make("STTArena/Freight-S1-medium")
    a.reset(seed=5)
    b.reset(seed=6)
    assert a.unwrapped.task.initial_state != b.unwrapped.task.initial_state
    stored = json.loads(a.unwrapped.task.model_dump_json())
    again = gym.make("STTArena/Freight-S1-medium")
    assert rollout(again, OracleAgent(), seed=5, options={"task": stored}).reward == 1.0


def test_the_choice_predicates_name_the_crossing_and_the_carrier_that_move_the_consignment(w):
    ready(w, "BCP-X", "SL-1")
    assert w.holds("via", consignment_id="CN-1", crossing_id="BCP-X")
    assert not w.holds("via", consignment_id="CN-1", crossing_id="BCP-Y")
    assert w.holds("carried_by", consignment_id="CN-1", carrier_id="CAR-1")
    assert not w.holds("carried_by", consignment_id="CN-1", carrier_id="CAR-2")
    assert w("book_slot", slot_id="SL-3", consignment_id="CN-1")["success"]  # releases SL-1
    assert w.holds("via", consignment_id="CN-1", crossing_id="BCP-Y")


# ------------------------------------------------------------- facts the user withholds until asked

CONSULTED = [(c, lvl) for c in ("S3", "ST1") for lvl in ("easy", "medium", "hard")]


def dispatched(env, seed: int, plan: list[Call]) -> dict:
    """What the successful dispatch of ``plan``, played from ``seed``, reports."""
    steps = rollout(env, PlanAgent(plan), seed=seed).steps
    sent = [json.loads(s["observation"]) for s in steps if s["action"].get("name") == "dispatch"]
    return next(r["data"] for r in sent if r.get("success"))


def others_taken(env, seed: int) -> list[list[Call]]:
    """The oracle's recovery without its question, taking each alternative the user did not choose: for S3 the
    other crossing (on its first free slot from two hours before the oracle's that gets the consignment through),
    for ST1 the other carrier's truck."""
    task = env.unwrapped.task
    state = task.initial_state
    last = {c.name: c.arguments for c in task.oracle}  # each write's last call
    first = {c.name: c.arguments for c in reversed(task.nominal_plan)}
    if "-S3-" in env.spec.id:
        want, slot = last["file_declaration"]["crossing_id"], last["book_slot"]["slot_id"]
        since = shift(state["slots"][slot]["start"], -120)
        plans = []
        for alt in sorted(set(state["crossings"]) - {first["file_declaration"]["crossing_id"], want}):
            free = sorted((s["start"], i) for i, s in state["slots"].items()
                          if s["crossing"] == alt and s["status"] == "free" and s["start"] >= since)
            tries = (unasked(task, {want: alt, slot: i}) for _, i in free)
            plans.append(next(plan for plan in tries if play(env, seed, plan).static))
        return plans
    want, booked = last["assign_truck"]["truck_id"], first["assign_truck"]["truck_id"]
    weight = state["consignments"][first["assign_truck"]["consignment_id"]]["weight_kg"]
    alts = [t for t, x in sorted(state["trucks"].items()) if t not in (want, booked) and x["status"] == "available"
            and x["location"] == state["trucks"][want]["location"] and x["capacity_kg"] >= weight]
    assert alts and all(state["trucks"][t]["carrier"] != state["trucks"][want]["carrier"] for t in alts)
    return [unasked(task, {want: t}) for t in alts]


@pytest.mark.parametrize("conflict,level", CONSULTED)
def test_the_user_tells_the_crossing_or_carrier_only_when_asked_and_no_guess_passes(conflict, level):
    outcomes = assert_withheld_story(f"STTArena/Freight-{conflict}-{level}",
                                     "ask me before you switch: I have a requirement", "asked_user", others_taken)
    assert all(run.static for run in outcomes)  # each other alternative gets the consignment through in time


@pytest.mark.parametrize("conflict,shown", [("S3", "crossing"), ("S3", "arrives"), ("ST1", "truck")])
def test_the_users_choice_follows_no_order_the_tools_show(conflict, shown):
    """Over seeds, the user's alternative is sometimes first and sometimes not by id (and by arrival time)."""
    def cues(env, seed):
        mine = dispatched(env, seed, env.unwrapped.task.oracle)[shown]
        return {f"first by {shown}": mine < min(dispatched(env, seed, plan)[shown] for plan in others_taken(env, seed))}

    assert_unpredictable(f"STTArena/Freight-{conflict}-medium", cues, seeds=range(8))
