"""Freight: tool behaviour on a hand-made corridor, the customs rules of the world, and cheap exploits that fail."""

from __future__ import annotations

import copy
import json
import re

import gymnasium as gym
import pytest

from tests.arena.harness import WorldHarness, by_level, second_changes, second_changes_with_the_story
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
        "reservations": {}, "declarations": {}, "permits": {}, "movements": {},
        "carriers": {"CAR-1": {"name": "K", "bonded": False}},
        "trucks": {"TRK-1": {"carrier": "CAR-1", "capacity_kg": 10000, "bonded": False, "location": "TRM-A",
                             "shift_end": f"{DAY}T18:00", "status": "available", "consignment": None, "note": ""},
                   "TRK-2": {"carrier": "CAR-1", "capacity_kg": 5000, "bonded": False, "location": "TRM-A",
                             "shift_end": f"{DAY}T18:00", "status": "available", "consignment": None, "note": ""},
                   "TRK-3": {"carrier": "CAR-1", "capacity_kg": 9000, "bonded": False, "location": "TRM-B",
                             "shift_end": f"{DAY}T18:00", "status": "available", "consignment": None, "note": ""}},
        "permit_desks": {x: {"status": "open", "lead_minutes": 0, "valid_hours": 12, "note": ""}
                         for x in ("BCP-X", "BCP-Y")},
        "counters": {"declaration": 10, "permit": 20, "reservation": 40, "movement": 30},
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
    # One declaration in force: the new one voids the held one.
    assert w.world.declarations["DEC-11"]["status"] == "void" and "DEC-12" in w.world.declarations["DEC-11"]["note"]
    assert w("book_slot", slot_id="SL-1", consignment_id="CN-1")["success"]
    assert not w.holds("ready_to_cross", consignment_id="CN-1")  # no truck yet
    assert w("assign_truck", consignment_id="CN-1", truck_id="TRK-1")["success"]
    assert w.holds("ready_to_cross", consignment_id="CN-1") and not w.holds("on_time", consignment_id="CN-1")
    sent = w("dispatch", consignment_id="CN-1")
    assert sent["success"], sent
    # Now 09:33; 20 minutes' loading, 40 to the crossing (10:33, inside SL-1), 10 minutes' queue, 30 onward.
    m = sent["data"]
    assert (m["departs"], m["at_crossing"], m["crosses"], m["arrives"]) == (
        f"{DAY}T10:00", f"{DAY}T10:40", f"{DAY}T10:40", f"{DAY}T11:20")
    # Wine is inspected at X: the movement uses the day's one inspection (counted from it, not written anywhere).
    assert w("get_crossing", crossing_id="BCP-X")["data"]["inspections_left_today"] == 0
    assert w.world.crossings["BCP-X"]["inspection"]["used"][DAY] == 0
    assert w.world.slots["SL-1"]["status"] == "free"  # the crossing's table: the booking is the forwarder's record
    assert w("list_slots", crossing_id="BCP-X")["data"]["slots"][0]["status"] == "used"
    assert w.world.reservations["RSV-41"]["status"] == "used"
    assert w.holds("on_time", consignment_id="CN-1") and w.holds("not_late", consignment_id="CN-1")
    assert w.holds("ready_to_cross", consignment_id="CN-1")  # on its way
    before = copy.deepcopy(w.world.state)
    for name, args in (("dispatch", {}), ("file_declaration", {"crossing_id": "BCP-Y"}),
                       ("book_slot", {"slot_id": "SL-2"}), ("assign_truck", {"truck_id": "TRK-1"})):
        assert "already dispatched" in w(name, consignment_id="CN-1", **args)["error"]  # nothing moves it now
    assert w.world.state == before
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
    ("request_document", {"consignment_id": "CN-1", "document": "commercial_invoice"}),  # valid: nothing to do
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


def test_a_state_stored_before_slot_bookings_were_records_still_plays():
    """Tasks exported by earlier releases have no ``reservations``: the world adds the container, and the check
    they name (``cleared_to_cross``) reads the booking the same way."""
    state = corridor()
    del state["reservations"], state["counters"]["reservation"]
    old = Harness(state)
    ready(old)
    assert old.holds("cleared_to_cross", consignment_id="CN-1") and old.holds("ready_to_cross", consignment_id="CN-1")
    assert old("dispatch", consignment_id="CN-1")["success"] and old.holds("cleared_to_cross", consignment_id="CN-1")


def test_a_ban_refuses_the_declaration_and_the_dispatch(w):
    ready(w)
    w.world.crossings["BCP-X"].update(banned=["wine"], notice="rule CR-1")
    sent = w("dispatch", consignment_id="CN-1")
    assert not sent["success"] and "may not cross" in sent["error"]
    assert not w.holds("ready_to_cross", consignment_id="CN-1")
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


def test_an_outage_cancels_the_bookings_it_voids_and_a_truck_can_be_released(w):
    """Found by a playtest (Freight-ST2-impossible): an outage that cancelled the booked slot left its booking
    "booked", which cancel_slot then refused, and no tool freed the truck standing on demurrage."""
    ready(w)
    w.world.take_slots(crossing_id="BCP-X", until=f"{DAY}T12:00", by="", note="outage OUT-1", status="cancelled")
    assert [(x["status"], x["note"]) for x in w.world.reservations.values()] == [("cancelled", "outage OUT-1")]
    assert w("get_consignment", consignment_id="CN-1")["data"]["slot_bookings"][0]["status"] == "cancelled"
    assert not w("cancel_slot", slot_id="SL-1")["success"]
    assert w("release_truck", consignment_id="CN-1")["success"]
    assert w.world.trucks["TRK-1"]["status"] == "available" and w.world.consignments["CN-1"]["truck"] is None
    assert "no truck assigned" in w("release_truck", consignment_id="CN-1")["error"]
    assert w("assign_truck", consignment_id="CN-1", truck_id="TRK-1")["success"]
    assert w("book_slot", slot_id="SL-3", consignment_id="CN-1")["success"]


def test_a_dispatched_consignment_keeps_its_truck(w):
    ready(w)
    w.world.consignments["CN-1"]["documents"]["certificate_of_origin"] = "valid"
    assert w("dispatch", consignment_id="CN-1")["success"]
    before = copy.deepcopy(w.world.state)
    assert "already dispatched" in w("release_truck", consignment_id="CN-1")["error"]
    assert w.world.state == before


def test_the_dock_is_set_only_to_one_of_the_consignee_s_docks_and_can_change_on_the_way(w):
    w.world.state["consignees"] = {"CNE-1": {"name": "C", "site": "DEP-Z", "docks": ["Dock 1", "Dock 4"],
                                             "receiving_dock": "Dock 4", "note": ""}}
    w.world.consignments["CN-1"]["consignee_id"] = "CNE-1"
    assert "no dock" in w("set_delivery_dock", consignment_id="CN-1", dock="Dock 2")["error"]
    assert w("set_delivery_dock", consignment_id="CN-1", dock="Dock 1")["success"]
    assert not w.holds("dock_as_on_record", consignment_id="CN-1")
    ready(w)
    assert w("dispatch", consignment_id="CN-1")["success"]
    assert w("set_delivery_dock", consignment_id="CN-1", dock="Dock 4")["success"]
    assert w.holds("dock_as_on_record", consignment_id="CN-1")
    assert w("get_consignee", consignee_id="CNE-1")["data"]["receiving_dock"] == "Dock 4"


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
    """The cheapest recoveries: the nominal plan, then, reading nothing, either re-book the next free slots at the
    same crossing and dispatch again, or (``same_crossing=False``) just dispatch again."""
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


SLOT_ONLY = ("T2", "ST2", "ST3")  # at easy, the change leaves the crossing open and only the slot goes


@pytest.mark.parametrize("same_crossing", [True, False])
def test_retrying_the_original_crossing_earns_nothing_unless_a_later_slot_is_the_recovery(same_crossing):
    """The failed dispatch tells the policy what went (that is noticing); what fails is the outcome. Re-booking the
    next free slots at the same crossing earns nothing, except where the change took only the slot (T2, ST2 and
    ST3 at easy): there a later slot is the recovery itself, a full one when it still arrives in time (all or
    nothing). Dispatching again without re-booking never does."""
    recovered = []
    for c in CONFLICTS:
        for lvl in ("easy", "medium", "hard"):
            scores = [stubborn(gym.make(f"STTArena/Freight-{c}-{lvl}"), seed, same_crossing) for seed in range(3)]
            if same_crossing and lvl == "easy" and c in SLOT_ONLY:
                assert set(scores) <= {0.0, 1.0}, (c, scores)
                recovered += scores
            else:
                assert scores == [0.0] * 3, (c, lvl, scores)
    assert 1.0 in recovered or not same_crossing


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


def test_railing_the_goods_back_to_their_origin_before_refusing_is_no_collateral_but_a_third_terminal_is():
    """S1 impossible: the change rails the goods away from the terminal the shipper named. Railing them back to
    try the named truck, then refusing, rules that option out by trying it (a listed refusal, 1.0); railing them
    to some other terminal instead is a change the request never needed."""
    env_id, caught = "STTArena/Freight-S1-impossible", 0
    for seed in range(3):
        env = gym.make(env_id)
        env.reset(seed=seed)
        task = env.unwrapped.task
        (back,) = task.alternatives
        shuttle = next(i for i, c in enumerate(back) if c.name == "transload")
        origin = task.initial_state["consignments"][back[shuttle].arguments["consignment_id"]]["origin"]
        assert back[shuttle].arguments["terminal_id"] == origin
        assert rollout(gym.make(env_id), PlanAgent(back), seed=seed).reward == 1.0
        sites = task.initial_state["sites"]
        elsewhere = [t for t, s in sites.items() if s["kind"] == "terminal" and t != origin
                     and s["country"] == sites[origin]["country"]]
        for third in elsewhere:
            moved = [c if i != shuttle else c.model_copy(update={"arguments": {**c.arguments, "terminal_id": third}})
                     for i, c in enumerate(back)]
            traj = rollout(gym.make(env_id), PlanAgent(moved), seed=seed)
            if json.loads(traj.steps[shuttle]["observation"])["success"]:
                gate = next(c for c in traj.info["checklist"] if c["name"] == "no_collateral_change")
                assert traj.reward == 0.0 and not gate["passed"], (seed, third)
                caught += 1
    assert caught


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


def recovery_writes(env) -> list[Call]:
    """The oracle's writes after the part of its plan it shares with the nominal plan: its recovery, unread."""
    task, tools = env.unwrapped.task, env.unwrapped.tools
    shared = next(i for i, (a, b) in enumerate(zip(task.oracle, task.nominal_plan)) if a != b)
    return [c for c in task.oracle[shared:] if c.name in tools and tools[c.name].mutates]


@pytest.mark.parametrize("conflict", ["T1", "T2", "S2", "ST2", "ST3"])
def test_the_failed_dispatch_shows_the_change_and_recovering_from_it_alone_scores_full_marks(conflict):
    """The nominal plan's dispatch fails with an error naming what changed (the permit, the slot, the declaration,
    the truck's time): that is noticing. The oracle's recovery writes straight after it, without the story's reads,
    get the consignment across in time."""
    env_id = f"STTArena/Freight-{conflict}-easy"
    for seed in range(2):
        env = gym.make(env_id)
        env.reset(seed=seed)
        task = env.unwrapped.task
        traj = rollout(env, PlanAgent(task.nominal_plan + recovery_writes(env)), seed=seed)
        assert traj.reward == 1.0, (seed, traj.info["checklist"])
        failed = next(i for i, c in enumerate(env.unwrapped.log.calls) if not c["result"]["success"])
        assert env.unwrapped.log.calls[failed]["name"] == "dispatch"
        assert env.unwrapped.log.revealed[task.triggers[0].name] == failed


@pytest.mark.parametrize("env_id", ["STTArena/Freight-T2-easy", "STTArena/Freight-ST2-medium",
                                    "STTArena/Freight-S1-hard"])
def test_every_listed_alternative_scores_full_marks_and_the_collateral_gate_catches_the_rest(env_id):
    """Another slot or crossing that works after the change is a listed solution scoring 1.0; a slot (even one a
    solution books) or a declaration for another consignment fails the collateral gate (a booking is the
    forwarder's own record, so the gate counts it, whichever slot it holds), and so does a note to the consignee
    nobody asked for."""
    slots = []
    for seed in range(3):
        env = gym.make(env_id)
        env.reset(seed=seed)
        task = env.unwrapped.task
        for plan in task.alternatives:
            assert rollout(gym.make(env_id), PlanAgent(plan), seed=seed).reward == 1.0
            slots.append((seed, [c for c in plan if c.name == "book_slot"][-1].arguments))
    assert slots
    seed, booked = slots[0]
    env = gym.make(env_id)
    env.reset(seed=seed)
    task = env.unwrapped.task
    other = next(c for c in task.initial_state["consignments"] if c != booked["consignment_id"])
    crossing = task.initial_state["slots"][booked["slot_id"]]["crossing"]
    for extra in (Call(name="book_slot", arguments={"slot_id": booked["slot_id"], "consignment_id": other}),
                  Call(name="file_declaration", arguments={"consignment_id": other, "crossing_id": crossing}),
                  Call(name="notify_consignee", arguments={"consignment_id": booked["consignment_id"],
                                                           "message": "On its way."})):
        traj = rollout(gym.make(env_id), PlanAgent(list(task.oracle) + [extra]), seed=seed)
        assert json.loads(traj.steps[len(task.oracle)]["observation"])["success"], extra
        assert traj.reward == 0.0 and not next(c for c in traj.info["checklist"]
                                               if c["name"] == "no_collateral_change")["passed"], extra


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_the_user_answers_a_change_of_plan_alike_whether_or_not_it_can_be_made(conflict):
    """To any proposed change the user states their hard constraints, in the same words at every level."""
    from sttgym.user import RuleUser

    replies = set()
    for level, env, task in by_level(f"STTArena/Freight-{conflict}", seed=0):
        reply = RuleUser(task.profile).reply("Could I use a different crossing instead?")
        cid = next(c.arguments["consignment_id"] for c in task.nominal_plan if c.name == "dispatch")
        consignment = task.initial_state["consignments"][cid]
        if reply in [a.text for a in task.profile.withheld]:  # a question naming its topic draws it out (S3: the
            reply = "the requirement they withheld"             # broker), on every level alike
        replies.add(reply.replace(consignment["deliver_by"], "#"))
    assert len(replies) == 1, replies


def test_the_user_s_broker_is_at_the_planned_crossing_and_one_other_and_every_pair_shares_one():
    env = gym.make("STTArena/Freight-S3-medium")
    for seed in range(4):
        env.reset(seed=seed)
        task = env.unwrapped.task
        (fact,) = task.profile.withheld
        brokers = {x: set(c["brokers"]) for x, c in task.initial_state["crossings"].items()}
        mine = next(b for b in set.union(*brokers.values()) if b in fact.text)
        planned = next(c for c in task.nominal_plan if c.name == "file_declaration").arguments["crossing_id"]
        want = [c for c in task.oracle if c.name == "file_declaration"][-1].arguments["crossing_id"]
        assert {x for x, names in brokers.items() if mine in names} == {planned, want} and want != planned
        assert all(len(brokers[x] & brokers[y]) == 1 for x in brokers for y in brokers if x < y)


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


# ------------------------------------------------------------- impossible: the change, and why nothing else works

def _id(task, prefix: str) -> str:
    """The id of what the change brought (``PA-``, ``CR-``, ...), as the results the oracle reads show it."""
    return next(f for f in task.impossibility.blocking_facts if f.startswith(prefix))


def _asked(task) -> dict:
    """What the request names: the consignment, the planned crossing, the terminal and the truck."""
    first = {c.name: c.arguments for c in task.nominal_plan}
    return {"cid": first["dispatch"]["consignment_id"], "main": first["file_declaration"]["crossing_id"],
            "truck": first["assign_truck"]["truck_id"]}


CHANGES = {  # the change, as a careful agent puts it after reading it
    "T1": lambda t: f"permit authority order {_id(t, 'PA-')} curtailed the permit and the permit desk is suspended",
    "T2": lambda t: f"priority order {_id(t, 'RC-')} gave every slot at {_asked(t)['main']} to a relief convoy",
    "T3": lambda t: f"spot-check surge {_id(t, 'SC-')} used up today's inspections at {_asked(t)['main']}",
    "S1": lambda t: f"the goods were transloaded early to {_id(t, 'TRM-')}",
    "S2": lambda t: f"customs hold {_id(t, 'HLD-')} rejected the certificate of origin and the shipper cannot "
                    "re-issue it",
    "S3": lambda t: f"customs rule {_id(t, 'CR-')} bans the goods at {_asked(t)['main']}",
    "ST1": lambda t: f"peak corridor order {_id(t, 'PK-')} pulled every truck at the terminal",
    "ST2": lambda t: f"customs outage {_id(t, 'OUT-')} shut {_asked(t)['main']} past the deadline",
    "ST3": lambda t: "the first-leg train is delayed and our driver goes off shift before it could cross",
}


def _other_crossing(task) -> tuple[str, str]:
    """One other crossing and why it fails, as reading it shows (its rules, its slots), in two plain wordings: by
    its name, and as "the other crossing"."""
    st, asked = task.initial_state, _asked(task)
    c = st["consignments"][asked["cid"]]
    for x in sorted(set(st["crossings"]) - {asked["main"]}):
        rules, name = st["crossings"][x], st["sites"][x]["name"]
        slots = [s for s in st["slots"].values() if s["crossing"] == x and s["start"] < c["deliver_by"]]
        if c["commodity"] in rules["banned"]:
            why = "bans {g} as well", "they are banned there too"
        elif c["commodity"] in rules["bonded_for"]:
            why = "takes {g} only on a bonded truck", "it takes them only on a bonded truck and ours is not bonded"
        elif "phytosanitary_certificate" in rules["required_docs"]:
            why = "needs a phytosanitary certificate we do not have", "it needs a phytosanitary certificate"
        elif slots and all(s["status"] != "free" for s in slots):
            why = "has no free slots before the deadline", "it is fully booked before the deadline"
        elif rules["inspection"]["used"].get(task.start_time[:10], 0) >= rules["inspection"]["limit"]:
            why = "has no inspections left today either", "it has no inspections left either"
        elif "certificate_of_origin" in rules["required_docs"]:
            why = "requires the certificate of origin too", "it also requires the certificate of origin"
        else:
            continue
        return (f"the other crossing, {name}, {why[0].format(g=c['commodity'])}", f"the other crossing {why[1]}")
    raise AssertionError("no other crossing is shut")


def _other_truck(task) -> tuple[str, str]:
    """The other truck that could have collected the goods and why it cannot, by its id and in plain words."""
    st, asked = task.initial_state, _asked(task)
    weight = st["consignments"][asked["cid"]]["weight_kg"]
    added = [t for t in task.impossibility.no_alternative if t in st["trucks"]]
    truck = st["trucks"][added[0]]
    if truck["capacity_kg"] < weight:
        return f"the other truck {added[0]} carries only {truck['capacity_kg']} kg", "the other truck is too small"
    return (f"the driver of the other truck {added[0]} goes off shift at {truck['shift_end'][11:]}",
            "the other truck's driver goes off shift before it could leave")


def _refused(env_id: str, seed: int, message: str) -> dict:
    """The checklist after the oracle's reads (the change and the other options read), then ``message``."""
    env = gym.make(env_id)
    env.reset(seed=seed)
    reads = [c for c in env.unwrapped.task.oracle if c.name != "chat_with_user"]
    traj = rollout(gym.make(env_id), PlanAgent(reads + [Call(name="chat_with_user", arguments={"message": message})]),
                   seed=seed)
    return {"score": traj.reward, **{c["name"]: c["passed"] for c in traj.info["checklist"]}}


@pytest.mark.parametrize("conflict,seed", [("T1", 0), ("T1", 3), ("T2", 1), ("T3", 0), ("T3", 4), ("S1", 0),
                                           ("S1", 5), ("S2", 2), ("S3", 1), ("S3", 6), ("ST1", 0), ("ST1", 3),
                                           ("ST2", 2), ("ST3", 0), ("ST3", 1)])
def test_an_impossible_refusal_must_say_why_the_other_options_fail_too(conflict, seed):
    """The change blocks the plan asked for, but does not say that nothing else works: each other crossing (or the
    truck that could have collected the goods) fails for a fact found only by reading it. A refusal in plain words
    after the oracle's reads that names the change and why another option fails (by its name or id, or just as
    "the other crossing" or "the other truck") scores 1.0; naming the change alone fails ``named_why_no_alternative``
    and scores 0."""
    env_id = f"STTArena/Freight-{conflict}-impossible"
    env = gym.make(env_id)
    env.reset(seed=seed)
    task = env.unwrapped.task
    change = CHANGES[conflict](task)
    others = _other_truck(task) if conflict in ("S1", "ST1", "ST3") else _other_crossing(task)
    for why in others:
        full = _refused(env_id, seed, f"I'm sorry, I can't get this consignment across in time: {change}, and {why}.")
        assert full["score"] == 1.0, (why, full)
    alone = _refused(env_id, seed, f"I'm sorry, I can't get this consignment across in time: {change}.")
    assert alone["score"] == 0.0 and not alone["named_why_no_alternative"], alone
    assert all(passed for name, passed in alone.items() if name not in ("score", "named_why_no_alternative")), alone


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_exploring_then_refusing_on_the_first_failed_write_names_only_the_change(conflict):
    """The explore-then-refuse probe reads around, makes the request's writes and, at the first failure, refuses
    quoting the error and what changed: that names the change but never why the other options fail, so it earns
    nothing on an impossible task, while the oracle, which reads those options, earns full marks."""
    from sttgym.agents.adversaries import ExploreThenRefuse

    env_id = f"STTArena/Freight-{conflict}-impossible"
    for seed in range(3):
        traj = rollout(gym.make(env_id), ExploreThenRefuse(), seed=seed)
        checks = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        assert traj.reward == 0.0 and checks["named_blocking_fact"] and not checks["named_why_no_alternative"], checks
        assert rollout(gym.make(env_id), OracleAgent(), seed=seed).reward == 1.0


@pytest.mark.parametrize("conflict", ["T1", "T2", "T3", "S2", "S3", "ST2"])
def test_the_other_crossings_stay_shut_even_to_a_plan_made_first_thing(conflict):
    """What rules out each other crossing is a standing rule, not the change: declaring there, booking any of its
    next free slots, assigning the named truck and dispatching, as the very first calls (the change comes only with
    the truck's assignment, or not at all), never gets the consignment across in time."""
    env_id = f"STTArena/Freight-{conflict}-impossible"
    for seed in range(2):
        env = gym.make(env_id)
        env.reset(seed=seed)
        task, asked = env.unwrapped.task, _asked(env.unwrapped.task)
        slots = task.initial_state["slots"]
        tried = set()
        for x in sorted(set(task.initial_state["crossings"]) - {asked["main"]}):
            free = sorted((s["start"], i) for i, s in slots.items() if s["crossing"] == x and s["status"] == "free"
                          and s["start"] >= task.start_time[:13])[:3]
            for _, slot in free:
                plan = [Call(name="file_declaration", arguments={"consignment_id": asked["cid"], "crossing_id": x}),
                        Call(name="book_slot", arguments={"slot_id": slot, "consignment_id": asked["cid"]}),
                        Call(name="assign_truck", arguments={"consignment_id": asked["cid"],
                                                             "truck_id": asked["truck"]}),
                        Call(name="dispatch", arguments={"consignment_id": asked["cid"]})]
                played = gym.make(env_id)
                rollout(played, PlanAgent(plan), seed=seed)
                assert played.unwrapped.evaluate(task.static_checklist)[0] < 1.0, (seed, x, slot)
                tried.add(x)
        assert len(tried) == 2, tried


@pytest.mark.parametrize("conflict", ["S1", "S2", "ST2", "ST3", "T1", "T2"])
def test_at_hard_the_first_crossing_booked_after_the_change_backs_up_whichever_it_is(conflict):
    """The second change meets the agent's own recovery: the oracle and the listed alternative book their first
    recovery slot at different crossings, and each meets the backlog at its own. Dispatching straight after that
    first booking goes through and arrives late, which scores nothing; moving on scores 1.0."""
    env_id = f"STTArena/Freight-{conflict}-hard"
    for seed in range(2):
        env = gym.make(env_id)
        env.reset(seed=seed)
        task = env.unwrapped.task
        (alternative,) = task.alternatives
        backed_up = []
        for plan in (task.oracle, alternative):
            traj = rollout(gym.make(env_id), PlanAgent(plan), seed=seed)
            assert traj.reward == 1.0, (seed, traj.info["checklist"])
            (event,) = [e for e in traj.info["trigger_log"] if e["trigger"] == "congestion"]
            booked = plan[event["call_index"] - 1]  # an "after" change is logged against the next call
            assert booked.name == "book_slot"
            backed_up.append(task.initial_state["slots"][booked.arguments["slot_id"]]["crossing"])
            crossing = backed_up[-1]
            # the recovery as made before the backlog showed (up to the read of that route), then the dispatch
            first = plan[:next(i for i in range(event["call_index"], len(plan)) if plan[i].name == "check_route"
                               and plan[i].arguments["crossing_id"] == crossing)]
            hasty = rollout(gym.make(env_id), PlanAgent(first + [Call(name="dispatch", arguments={
                "consignment_id": booked.arguments["consignment_id"]})]), seed=seed)
            sent = json.loads(hasty.steps[len(first)]["observation"])
            assert sent["success"] and hasty.reward == 0.0, (seed, sent)  # nothing refuses the late plan
            assert sent["data"]["arrives"] > task.initial_state["consignments"][booked.arguments[
                "consignment_id"]]["deliver_by"]
        assert backed_up[0] != backed_up[1]


def _alike(task, text: str) -> str:
    """``text`` with what differs between instances (names, ids, times, quantities and the goods) blanked."""
    for c in task.initial_state["consignments"].values():
        for name in (c["shipper"], c["consignee"], c["commodity"]):
            text = text.replace(name, "#")
    return re.sub(r"[A-Z]{2,4}-[A-Z0-9]+|\d[\d:T-]*", "#", text)


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_the_dock_is_asked_for_and_answered_in_the_same_words_at_every_level_and_moves_at_medium_and_hard(conflict):
    # A sentence or an answer only some levels have would tell the agent the level; at easy and impossible the
    # record's dock holds.
    from sttgym.user import RuleUser

    said = set()
    for level, env, task in by_level(f"STTArena/Freight-{conflict}", seed=1):
        consignee = next(iter(task.initial_state["consignees"]))
        reply = RuleUser(task.profile).reply("Which dock should the driver unload at?")
        assert f"dock on its consignee record, {consignee}" in task.query and consignee in reply
        said.add((_alike(task, task.query), _alike(task, reply)))
        assert ("dock_moved" in [t.name for t in task.triggers]) == (level in ("medium", "hard"))
        assert rollout(env, PlanAgent(task.oracle), seed=1).reward == 1.0
    assert len(said) == 1, said


def _dock_set(plan: list[Call], dock: str) -> list[Call]:
    return [c.model_copy(update={"arguments": {**c.arguments, "dock": dock}}) if c.name == "set_delivery_dock" else c
            for c in plan]


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_at_medium_the_dock_moves_with_the_story_s_change_and_only_the_consignee_record_shows_it(conflict):
    # The second change comes in the very call the story's change does (the nominal plan meets it too), and changes
    # nothing but the consignee's record: the dock read at the start is stale from that call on, every write goes
    # through, and a recovery that keeps the first dock keeps its credit but loses the dock's milestone.
    for env, seed, task, moved in second_changes_with_the_story(f"STTArena/Freight-{conflict}-medium", "dock_moved",
                                                                "get_consignee", seeds=range(2)):
        consignee = moved.observable.args["consignee_id"]
        first = task.initial_state["consignees"][consignee]["receiving_dock"]
        (new,) = [e.args["value"] for e in moved.effect if e.args["path"][-1] == "receiving_dock"]
        assert new != first and new in task.initial_state["consignees"][consignee]["docks"]
        env.reset(seed=seed)
        saved, docks = {}, []
        for c in task.oracle:
            saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
            fired = {e["trigger"]: e for e in env.unwrapped.log.events}
            docks.append((env.unwrapped.world.state["consignees"][consignee]["receiving_dock"], set(fired)))
            if task.triggers[0].name in fired:
                break
        story = fired[task.triggers[0].name]
        assert fired["dock_moved"]["call_index"] == story["call_index"] and fired["dock_moved"]["during"] == \
            story["during"] == task.oracle[len(docks) - 1].name, (seed, fired)
        assert docks[-1][0] == new and {task.triggers[0].name, "dock_moved"} <= docks[-1][1]  # in the story's call
        assert all(d == (first, set()) for d in docks[:-1]), (seed, docks)
        assert {e["path"].split(".")[:2] == ["consignees", consignee] for e in fired["dock_moved"]["changes"]} == {True}
        traj = rollout(env, PlanAgent(_dock_set(task.oracle, first)), seed=seed)
        passed = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        assert all(s["observation"] and json.loads(s["observation"]).get("success", True) for s in traj.steps
                   if s.get("action", {}).get("name") in ("dispatch", "set_delivery_dock")), seed
        assert passed["delivered_on_time"] and not passed["dock_as_on_record"] and 0.0 < traj.reward < 1.0
        assert rollout(env, PlanAgent(task.oracle), seed=seed).reward == 1.0
        nominal = rollout(env, PlanAgent(task.nominal_plan), seed=seed)
        at = {e["trigger"]: e["call_index"] for e in nominal.info["trigger_log"]}
        assert at["dock_moved"] == at[task.triggers[0].name]


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_at_hard_the_dock_moves_once_the_recovery_is_sent_and_only_the_consignee_record_shows_it(conflict):
    # The second change waits for the dispatch after the story's change, whichever crossing and truck the recovery
    # took, and changes nothing but the consignee's record: the dock read at the start is stale, though every write
    # goes through, and the recovery keeps its credit.
    for env, seed, task, moved in second_changes(f"STTArena/Freight-{conflict}-hard", "dock_moved", "get_consignee",
                                                 seeds=range(2)):
        consignee = moved.observable.args["consignee_id"]
        first = task.initial_state["consignees"][consignee]["receiving_dock"]
        log = rollout(env, PlanAgent(task.oracle), seed=seed).info["trigger_log"]
        assert log[-1]["during"] == "dispatch"
        assert {e["path"].split(".")[:2] == ["consignees", consignee] for e in log[-1]["changes"]} == {True}
        traj = rollout(env, PlanAgent(_dock_set(task.oracle, first)), seed=seed)
        passed = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        assert all(s["observation"] and json.loads(s["observation"]).get("success", True) for s in traj.steps
                   if s.get("action", {}).get("name") in ("dispatch", "set_delivery_dock")), seed
        assert passed["delivered_on_time"] and not passed["dock_as_on_record"] and 0.0 < traj.reward < 1.0
        nominal = rollout(env, PlanAgent(task.nominal_plan), seed=seed)
        assert "dock_moved" not in [e["trigger"] for e in nominal.info["trigger_log"]]


@pytest.mark.parametrize("conflict", ["T1", "S3", "ST2"])
def test_at_hard_a_dock_set_after_the_dispatch_goes_stale_at_once(conflict):
    # The later of the two writes sets the change off: setting the dock last hands the agent no new value for free.
    for env, seed, task, moved in second_changes(f"STTArena/Freight-{conflict}-hard", "dock_moved", "get_consignee",
                                                 seeds=range(1)):
        sets = [c for c in task.oracle if c.name == "set_delivery_dock"]
        go = next(i for i, c in enumerate(task.oracle) if c.name == "dispatch")
        late = [c for c in task.oracle[:go + 1] if c.name != "set_delivery_dock"] + sets[:1]
        traj = rollout(env, PlanAgent(late), seed=seed)
        assert traj.info["trigger_log"][-1]["during"] == "set_delivery_dock" and 0.0 < traj.reward < 1.0
        fixed = rollout(env, PlanAgent(late + task.oracle[go + 1:]), seed=seed)
        assert fixed.info["trigger_log"][-1]["trigger"] == "dock_moved" and fixed.reward == 1.0
