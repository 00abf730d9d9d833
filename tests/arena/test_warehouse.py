"""Warehouse: tool behaviour on a hand-made network, the rules of the world, and cheap exploits that must fail."""

from __future__ import annotations

import copy
import json
import re

import gymnasium as gym
import pytest

from tests.arena.harness import (WorldHarness, assert_alternatives_score_one, by_level, second_changes,
                                 second_changes_with_the_story)
from tests.arena.withheld import assert_unpredictable, assert_withheld_story, unasked
from sttgym.agents import NominalAgent, OracleAgent, PlanAgent
from sttgym.agents.probes import BlindWriter
from sttgym.envs.arena.warehouse.generator import DOOR, MOVES_AT
from sttgym.envs.arena.warehouse.world import WarehouseWorld
from sttgym.rollout import rollout
from sttgym.task import Call, resolve
from sttgym.user import RuleUser
from sttgym.validation import PANEL

START = "2024-05-06T09:00"


def network() -> dict:
    """Two warehouses and a store: A-store 30 min, B-store 20 min (a 10 t limit), A-B 25 min."""
    def quota(limit: int) -> dict:
        return {"limit": limit, "used": {"2024-05-06": 0}}

    return {
        "warehouses": {
            "WH-A": {"name": "A", "kind": "warehouse", "region": "North", "status": "open", "notice": "",
                     "hold_minutes": 60, "quota": quota(2), "quota_note": ""},
            "WH-B": {"name": "B", "kind": "hub", "region": "North", "status": "open", "notice": "",
                     "hold_minutes": 30, "quota": quota(1), "quota_note": ""}},
        "stores": {"ST-1": {"name": "Store one", "region": "North", "doors": ["D1", "D2"], "goods_in_bay": "BAY-7",
                            "goods_in_note": ""}},
        "receiving_bays": {"BAY-7": {"store": "ST-1", "door": "D1"}, "BAY-3": {"store": "ST-1", "door": "D2"}},
        "roads": {"RD-1": {"a": "WH-A", "b": "ST-1", "minutes": 30, "open": True, "max_tonnes": None},
                  "RD-2": {"a": "WH-B", "b": "ST-1", "minutes": 20, "open": True, "max_tonnes": 10},
                  "RD-3": {"a": "WH-A", "b": "WH-B", "minutes": 25, "open": True, "max_tonnes": None}},
        "skus": {"SKU-1": {"name": "water cases", "unit": "unit"}},
        "inventory": {"WH-A": {"SKU-1": {"on_hand": 100, "quarantined": 0, "note": ""}},
                      "WH-B": {"SKU-1": {"on_hand": 50, "quarantined": 10, "note": ""}}},
        "inbound": {"IB-1": {"warehouse": "WH-B", "sku": "SKU-1", "quantity": 40, "carrier": "X", "eta":
                             "2024-05-06T10:00", "status": "on schedule", "note": ""}},
        "orders": {"ORD-1": {"customer": "C", "store": "ST-1", "sku": "SKU-1", "quantity": 80, "priority": "standard",
                             "status": "open", "note": "", "due_by": "2024-05-06T12:00", "delivery_door": None}},
        "reservations": {},
        "dock_slots": {
            "DS-1": {"warehouse": "WH-A", "start": "2024-05-06T09:30", "end": "2024-05-06T10:00"},
            "DS-2": {"warehouse": "WH-A", "start": "2024-05-06T10:15", "end": "2024-05-06T10:45"},
            "DS-3": {"warehouse": "WH-B", "start": "2024-05-06T09:30", "end": "2024-05-06T10:00"},
            "DS-4": {"warehouse": "WH-B", "start": "2024-05-06T10:30", "end": "2024-05-06T11:00"}},
        "dock_bookings": {},
        "trucks": {
            "TRK-1": {"name": "big", "capacity": 100, "tonnes": 18, "location": "WH-A", "available_from": None,
                      "shift_end": "2024-05-06T18:00", "status": "available", "note": ""},
            "TRK-2": {"name": "small", "capacity": 50, "tonnes": 7, "location": "WH-B", "available_from": None,
                      "shift_end": "2024-05-06T18:00", "status": "available", "note": ""}},
        "dispatches": {},
        "counters": {"reservation": 10, "booking": 30, "dispatch": 20},
    }


class Harness(WorldHarness):
    world_class, start, default_state = WarehouseWorld, START, staticmethod(network)


@pytest.fixture
def w() -> Harness:
    return Harness()


def test_reserve_book_dispatch_delivers_in_full_and_on_time(w):
    res = w("reserve_stock", order_id="ORD-1", warehouse_id="WH-A", quantity=80)
    assert res["success"] and res["data"]["reservation_id"] == "RES-11"
    stock = w("get_inventory", warehouse_id="WH-A")["data"]["stock"][0]
    assert (stock["reserved"], stock["available"]) == (80, 20)
    assert w.holds("secured", order_id="ORD-1") and not w.holds("fulfilled", order_id="ORD-1")
    assert w("book_dock_slot", slot_id="DS-1", truck_id="TRK-1")["success"]
    sent = w("dispatch_truck", truck_id="TRK-1", slot_id="DS-1", reservation_id="RES-11")
    assert sent["success"], sent
    # Loading starts with the slot at 09:30, takes 15 minutes, then 30 minutes on the road.
    assert (sent["data"]["departs"], sent["data"]["arrives"]) == ("2024-05-06T09:45", "2024-05-06T10:15")
    assert w.world.inventory["WH-A"]["SKU-1"]["on_hand"] == 20
    assert w.world.warehouses["WH-A"]["quota"]["used"]["2024-05-06"] == 1
    assert w.holds("fulfilled", order_id="ORD-1") and w.holds("not_overshipped", order_id="ORD-1")
    order = w("get_order", order_id="ORD-1")["data"]
    assert (order["dispatched_quantity"], order["open_quantity"]) == (80, 0)
    # The truck is on the road until its arrival, when the delivery can be confirmed.
    assert not w("confirm_delivery", dispatch_id="DSP-21")["success"]
    w.clock.advance(60)
    assert w("confirm_delivery", dispatch_id="DSP-21")["success"]


@pytest.mark.parametrize("name,args", [
    ("reserve_stock", {"order_id": "ORD-1", "warehouse_id": "WH-A", "quantity": 101}),
    ("reserve_stock", {"order_id": "ORD-1", "warehouse_id": "WH-B", "quantity": 41}),  # 10 of 50 quarantined
    ("reserve_stock", {"order_id": "ORD-9", "warehouse_id": "WH-A", "quantity": 1}),
    ("reserve_stock", {"order_id": "ORD-1", "warehouse_id": "WH-A", "quantity": 0}),
    ("reserve_stock", {"order_id": "ORD-1", "warehouse_id": "WH-A", "quantity": 5, "inbound_id": "IB-1"}),
    ("book_dock_slot", {"slot_id": "DS-9", "truck_id": "TRK-1"}),
    ("book_dock_slot", {"slot_id": "DS-1", "truck_id": "TRK-9"}),
    ("dispatch_truck", {"truck_id": "TRK-1", "slot_id": "DS-1", "reservation_id": "RES-1"}),
    ("cancel_dock_slot", {"slot_id": "DS-1"}),
    ("release_stock", {"reservation_id": "RES-404"}),
    ("split_reservation", {"reservation_id": "RES-404", "quantity": 1}),
    ("cancel_dispatch", {"dispatch_id": "DSP-1"}),
    ("confirm_delivery", {"dispatch_id": "DSP-1"}),
    ("record_delivery_door", {"order_id": "ORD-1", "door": "D9"}),
    ("record_delivery_door", {"order_id": "ORD-9", "door": "D1"}),
])
def test_a_refused_change_changes_nothing(w, name, args):
    before = copy.deepcopy(w.world.state)
    result = w(name, **args)
    assert not result["success"] and result["error"]
    assert w.world.state == before


def test_a_reservation_lapses_after_the_hold_time_and_frees_its_stock(w):
    w("reserve_stock", order_id="ORD-1", warehouse_id="WH-B", quantity=30)
    assert w("get_inventory", warehouse_id="WH-B")["data"]["stock"][0]["available"] == 10
    w.clock.advance(31)
    assert w("get_order", order_id="ORD-1")["data"]["reservations"][0]["status"] == "expired"
    assert w("get_inventory", warehouse_id="WH-B")["data"]["stock"][0]["available"] == 40
    w("book_dock_slot", slot_id="DS-4", truck_id="TRK-2")
    assert "expired" in w("dispatch_truck", truck_id="TRK-2", slot_id="DS-4", reservation_id="RES-11")["error"]


def test_a_warehouse_that_is_not_open_releases_nothing_and_dispatches_nothing(w):
    w("reserve_stock", order_id="ORD-1", warehouse_id="WH-A", quantity=80)
    w("book_dock_slot", slot_id="DS-1", truck_id="TRK-1")
    w.world.warehouses["WH-A"].update(status="locked_down", notice="inspection")
    for name, args in (("reserve_stock", {"order_id": "ORD-1", "warehouse_id": "WH-A", "quantity": 1}),
                       ("book_dock_slot", {"slot_id": "DS-2", "truck_id": "TRK-1"}),
                       ("dispatch_truck", {"truck_id": "TRK-1", "slot_id": "DS-1", "reservation_id": "RES-11"})):
        result = w(name, **args)
        assert not result["success"] and "locked_down" in result["error"]
    assert not w.holds("secured", order_id="ORD-1")  # a reservation behind a lockdown secures nothing


def test_routes_respect_weight_limits_and_closures(w):
    heavy = w("get_route", origin_id="WH-B", destination_id="ST-1", truck_id="TRK-1")["data"]
    light = w("get_route", origin_id="WH-B", destination_id="ST-1", truck_id="TRK-2")["data"]
    assert (heavy["minutes"], heavy["path"]) == (55, ["WH-B", "WH-A", "ST-1"])
    assert (light["minutes"], light["path"]) == (20, ["WH-B", "ST-1"])
    w.world.roads["RD-1"]["open"] = False
    cut = w("get_route", origin_id="WH-A", destination_id="ST-1", truck_id="TRK-1")["data"]
    assert not cut["reachable"] and cut["closed_roads"] == ["RD-1"]


def test_the_driver_cannot_drive_past_the_shift_end_and_the_quota_counts_by_departure_day(w):
    w.world.trucks["TRK-1"]["shift_end"] = "2024-05-06T10:00"
    w("reserve_stock", order_id="ORD-1", warehouse_id="WH-A", quantity=80)
    w("book_dock_slot", slot_id="DS-1", truck_id="TRK-1")
    assert "shift end" in w("dispatch_truck", truck_id="TRK-1", slot_id="DS-1", reservation_id="RES-11")["error"]
    w.world.trucks["TRK-1"]["shift_end"] = "2024-05-06T18:00"
    w.world.warehouses["WH-A"]["quota"]["used"]["2024-05-06"] = 2
    assert "quota" in w("dispatch_truck", truck_id="TRK-1", slot_id="DS-1", reservation_id="RES-11")["error"]
    assert w("get_warehouse", warehouse_id="WH-A")["data"]["quota_status"] == "exhausted"


def test_cross_dock_stock_leaves_no_earlier_than_its_inbound(w):
    res = w("reserve_stock", order_id="ORD-1", warehouse_id="WH-B", quantity=40, inbound_id="IB-1")
    assert res["success"] and w("get_order", order_id="ORD-1")["data"]["reservations"][0]["ready_at"] == \
        "2024-05-06T10:00"
    w("book_dock_slot", slot_id="DS-3", truck_id="TRK-2")
    assert "IB-1" in w("dispatch_truck", truck_id="TRK-2", slot_id="DS-3", reservation_id="RES-11")["error"]
    w("cancel_dock_slot", slot_id="DS-3")
    w("book_dock_slot", slot_id="DS-4", truck_id="TRK-2")
    assert w("dispatch_truck", truck_id="TRK-2", slot_id="DS-4", reservation_id="RES-11")["success"]
    assert w.world.inventory["WH-B"]["SKU-1"]["on_hand"] == 50  # cross-docked units never touch the shelves


def test_a_back_order_needs_no_live_dispatch_and_closes_the_order_to_reservations(w):
    res = w("reserve_stock", order_id="ORD-1", warehouse_id="WH-A", quantity=80)["data"]["reservation_id"]
    w("book_dock_slot", slot_id="DS-1", truck_id="TRK-1")
    w("dispatch_truck", truck_id="TRK-1", slot_id="DS-1", reservation_id=res)
    assert "cancel it first" in w("backorder_order", order_id="ORD-1", reason="short")["error"]
    assert w("cancel_dispatch", dispatch_id="DSP-21")["success"]
    assert not w("backorder_order", order_id="ORD-1", reason=" ")["success"]
    assert w("backorder_order", order_id="ORD-1", reason="short")["success"] and w.holds("backordered", order_id="ORD-1")
    assert "backordered" in w("reserve_stock", order_id="ORD-1", warehouse_id="WH-A", quantity=1)["error"]


def test_an_order_records_a_door_and_the_check_follows_the_store_record_to_its_goods_in_bay(w):
    assert w("get_store", store_id="ST-1")["data"]["goods_in_bay"] == "BAY-7"
    assert w("get_receiving_bay", bay_id="BAY-7")["data"] == {"bay_id": "BAY-7", "store": "ST-1", "door": "D1"}
    assert not w("get_receiving_bay", bay_id="BAY-9")["success"]
    assert not w.holds("door_current", order_id="ORD-1")  # nothing recorded yet
    assert w("record_delivery_door", order_id="ORD-1", door="D1")["success"]
    assert w("get_order", order_id="ORD-1")["data"]["delivery_door"] == "D1"
    assert w.holds("door_current", order_id="ORD-1")
    w.world.stores["ST-1"].update(goods_in_bay="BAY-3", goods_in_note="goods-in moved to BAY-3")
    # The store switched bays; the old bay still reads D1, and the order still says D1.
    assert w("get_receiving_bay", bay_id="BAY-7")["data"]["door"] == "D1"
    assert not w.holds("door_current", order_id="ORD-1")
    assert w("record_delivery_door", order_id="ORD-1", door="D2")["success"]
    assert w.holds("door_current", order_id="ORD-1")


def test_a_split_order_needs_every_part_and_a_stranded_part_breaks_the_gate(w):
    w("reserve_stock", order_id="ORD-1", warehouse_id="WH-A", quantity=80)
    assert w("split_reservation", reservation_id="RES-11", quantity=30)["data"]["reservation_id"] == "RES-12"
    w("book_dock_slot", slot_id="DS-1", truck_id="TRK-1")
    w("dispatch_truck", truck_id="TRK-1", slot_id="DS-1", reservation_id="RES-11")
    assert w.holds("no_partial_fill", order_id="ORD-1") and not w.holds("fulfilled", order_id="ORD-1")
    w("release_stock", reservation_id="RES-12")  # 50 on the road, the other 30 given up: a stranded part
    assert not w.holds("no_partial_fill", order_id="ORD-1")
    # Cancelling the dispatch before it leaves puts the stock back.
    assert w("cancel_dispatch", dispatch_id="DSP-21")["success"]
    assert w.world.inventory["WH-A"]["SKU-1"]["on_hand"] == 100 and w.holds("no_partial_fill", order_id="ORD-1")


# ------------------------------------------------------------------ scenarios


def start(env_id: str, seed: int):
    env = gym.make(env_id)
    env.reset(seed=seed)
    return env, env.unwrapped


def call(env, name: str, **arguments) -> dict:
    observation, *_ = env.step({"name": name, "arguments": arguments})
    return json.loads(observation)


CONFLICTS = ["T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3"]


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_the_blind_writer_meets_every_trigger_and_earns_nothing(conflict):
    env = gym.make(f"STTArena/Warehouse-{conflict}-medium")
    traj = rollout(env, BlindWriter(), seed=3)
    assert {e["trigger"] for e in traj.info["trigger_log"]} == {t.name for t in env.unwrapped.task.triggers}
    assert traj.reward == 0.0
    tools = env.unwrapped.tools
    assert all(tools[name].mutates for t in env.unwrapped.task.triggers for name in t.activation)


@pytest.mark.parametrize("conflict", ["T2", "S2", "ST2"])
def test_impossible_tasks_need_the_blocking_fact_the_back_order_and_no_dispatch(conflict):
    env_id = f"STTArena/Warehouse-{conflict}-impossible"
    assert rollout(gym.make(env_id), OracleAgent(), seed=0).reward == 1.0
    assert rollout(gym.make(env_id), NominalAgent(), seed=0).reward == 0.0
    _, arena = start(env_id, seed=0)
    vague = [c if c.name != "chat_with_user" else c.model_copy(update={"arguments": {
        "message": "I'm sorry, but I cannot ship this order; something changed and it no longer works."}})
        for c in arena.task.oracle]
    assert rollout(gym.make(env_id), PlanAgent(vague), seed=0).reward == 0.0
    told_only = [c for c in arena.task.oracle if c.name != "backorder_order"]  # tells the user, never back-orders
    assert rollout(gym.make(env_id), PlanAgent(told_only), seed=0).reward == 0.0


def stubborn_policy(env, seed: int) -> float:
    """The cheapest recovery: the nominal plan, and whenever a write fails, reserve again at the same warehouse,
    book its next free slot for the same truck and dispatch again, never reading what changed."""
    env.reset(seed=seed)
    task, saved = env.unwrapped.task, {}
    for c in task.nominal_plan:
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    writes = [resolve(c.arguments, saved) for c in task.nominal_plan if c.name in ("reserve_stock", "book_dock_slot")]
    reserve, book = writes
    world = env.unwrapped.world  # privileged: the slot table, without a read that would notice
    slots = world.state["dock_slots"]
    later = sorted((s["start"], i) for i, s in slots.items() if s["warehouse"] == reserve["warehouse_id"]
                   and world._booking(i) is None and s["start"] > slots[book["slot_id"]]["start"])
    for _, slot in later[:2]:
        res = call(env, "reserve_stock", **reserve)
        call(env, "book_dock_slot", slot_id=slot, truck_id=book["truck_id"])
        if res.get("success"):
            sent = call(env, "dispatch_truck", truck_id=book["truck_id"], slot_id=slot,
                        reservation_id=res["data"]["reservation_id"])
            if sent.get("success"):
                break
    *_, info = env.step({"content": "Task Completed"})
    return info["score"]


@pytest.mark.parametrize("env_id", ["STTArena/Warehouse-S2-easy", "STTArena/Warehouse-T1-easy",
                                    "STTArena/Warehouse-T3-easy", "STTArena/Warehouse-ST3-easy"])
def test_retrying_at_the_original_warehouse_without_reading_earns_nothing(env_id):
    env = gym.make(env_id)
    scores = [stubborn_policy(env, seed) for seed in range(3)]
    assert max(scores) <= 0.25, scores


def partial_fill_policy(env, seed: int) -> float:
    """The nominal plan up to its dispatch; after the hub outage, read it, then ship whatever the best-stocked other
    warehouse has, and stop."""
    env.reset(seed=seed)
    task = env.unwrapped.task
    saved = {}
    go = next(i for i, c in enumerate(task.nominal_plan) if c.name == "dispatch_truck")
    for c in task.nominal_plan[:go + 1]:
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    hub = next(c for c in task.nominal_plan if c.name == "reserve_stock").arguments["warehouse_id"]
    order = next(c for c in task.nominal_plan if c.name == "get_order").arguments["order_id"]
    call(env, "get_inventory", warehouse_id=hub)  # it does notice the outage
    sku = call(env, "get_order", order_id=order)["data"]["sku"]
    places = [p for p in call(env, "find_stock", sku=sku)["data"]["locations"] if p["available"] > 0]
    best = max(places, key=lambda p: p["available"])
    site = best["warehouse_id"]
    res = call(env, "reserve_stock", order_id=order, warehouse_id=site, quantity=best["available"])
    truck = next(t["truck_id"] for t in call(env, "list_trucks", location=site)["data"]["trucks"]
                 if t["status"] == "available")
    slot = next(s["slot_id"] for s in call(env, "list_dock_slots", warehouse_id=site)["data"]["slots"]
                if s["status"] == "free")
    call(env, "book_dock_slot", slot_id=slot, truck_id=truck)
    sent = call(env, "dispatch_truck", truck_id=truck, slot_id=slot, reservation_id=res["data"]["reservation_id"])
    assert sent["success"], sent
    *_, info = env.step({"content": "Task Completed"})
    return info["score"]


def test_shipping_only_the_fallbacks_part_after_the_outage_earns_nothing():
    env = gym.make("STTArena/Warehouse-ST2-medium")
    scores = [partial_fill_policy(env, seed) for seed in range(3)]
    assert max(scores) <= 0.25, scores
    # The oracle, which draws the open balance from a third warehouse, passes on the same seeds.
    assert all(rollout(gym.make("STTArena/Warehouse-ST2-medium"), OracleAgent(), seed=s).reward == 1.0
               for s in range(3))


def test_refusing_a_solvable_order_earns_nothing():
    env = gym.make("STTArena/Warehouse-S2-easy")
    env.reset(seed=0)
    *_, info = env.step({"content": "I'm sorry, this order cannot be shipped."})
    assert info["score"] == 0.0


def trucks_sent(plan: list[Call]) -> list[str]:
    return [c.arguments["truck_id"] for c in plan if c.name == "dispatch_truck"]


@pytest.mark.parametrize("conflict", ["T1", "T3", "S2", "ST2", "ST3"])
def test_another_truck_in_service_for_one_of_the_oracles_is_an_alternative_scoring_one(conflict):
    # The truck the user named driving over, or a spare at another warehouse, carries the load as well: the task
    # lists each such recovery, so the collateral gate counts its truck as the recovery's own.
    assert sum(assert_alternatives_score_one(f"STTArena/Warehouse-{conflict}-{level}", key=trucks_sent)
               for level in ("easy", "medium", "hard"))


def test_which_dock_slot_a_plan_takes_is_its_own_booking_not_a_change_to_the_timetable():
    # Booking the slot after the nominal one instead changes no entity the task started with: the collateral gate
    # passes (whether that slot is still on time is the milestones' business).
    env_id = "STTArena/Warehouse-T1-easy"
    for seed in range(3):
        _, arena = start(env_id, seed)
        task, slots = arena.task, arena.task.initial_state["dock_slots"]
        slot = next(c.arguments["slot_id"] for c in task.nominal_plan if c.name == "book_dock_slot")
        later = min((x["start"], s) for s, x in slots.items() if x["warehouse"] == slots[slot]["warehouse"]
                    and x["start"] > slots[slot]["start"])[1]
        plan = [c.model_copy(update={"arguments": {k: later if v == slot else v for k, v in c.arguments.items()}})
                for c in task.oracle]
        assert plan != task.oracle
        traj = rollout(gym.make(env_id), PlanAgent(plan), seed=seed)
        gate = next(c for c in traj.info["checklist"] if c["name"] == "no_collateral_change")
        assert gate["passed"], (seed, gate)
        assert env_slots(env_id, seed, plan) == slots  # the timetable never changes


def env_slots(env_id: str, seed: int, plan: list[Call]) -> dict:
    """The dock timetable after ``plan``."""
    env = gym.make(env_id)
    rollout(env, PlanAgent(plan), seed=seed)
    return env.unwrapped.world.state["dock_slots"]


def test_an_unrelated_write_after_the_recovery_fails_the_collateral_gate():
    env_id = "STTArena/Warehouse-ST2-easy"
    _, arena = start(env_id, seed=0)
    task = arena.task
    state = task.initial_state
    order = next(c.arguments["order_id"] for c in task.nominal_plan if c.name == "get_order")
    hub = next(c.arguments["warehouse_id"] for c in task.nominal_plan if c.name == "reserve_stock")  # in outage
    other, sku = next((o, x["sku"]) for o, x in state["orders"].items() if o != order)
    site = next(w for w, stock in sorted(state["inventory"].items())
                if w != hub and stock.get(sku, {}).get("on_hand", 0) > 10)
    extra = Call(name="reserve_stock", arguments={"order_id": other, "warehouse_id": site, "quantity": 5})
    traj = rollout(gym.make(env_id), PlanAgent([*task.oracle, extra]), seed=0)
    assert json.loads(traj.steps[len(task.oracle)]["observation"])["success"]
    gate = next(c for c in traj.info["checklist"] if c["name"] == "no_collateral_change")
    assert not gate["passed"] and traj.reward == 0.0


@pytest.mark.parametrize("env_id", ["STTArena/Warehouse-T3-medium", "STTArena/Warehouse-S3-medium",
                                    "STTArena/Warehouse-ST3-hard"])
def test_a_second_slot_for_the_stale_truck_after_the_recovery_fails_the_collateral_gate(env_id):
    # Validation's extra write: after the oracle (which ships from the sister warehouse and unwinds the stale
    # reservation and slot), another dock slot booked for the truck the request named. The booking succeeds and
    # commits a dock the recovery does not use: one live dock booking more than any solution ends with.
    for seed in range(2):
        _, arena = start(env_id, seed)
        task, slots = arena.task, arena.task.initial_state["dock_slots"]
        booked = next(c.arguments for c in task.nominal_plan if c.name == "book_dock_slot")
        home = slots[booked["slot_id"]]["warehouse"]
        named = {v for c in task.oracle for v in c.arguments.values() if isinstance(v, str)}
        spare = max((x["start"], s) for s, x in slots.items() if x["warehouse"] == home and s not in named)[1]
        extra = Call(name="book_dock_slot", arguments={"slot_id": spare, "truck_id": booked["truck_id"]})
        traj = rollout(gym.make(env_id), PlanAgent([*task.oracle, extra]), seed=seed)
        assert json.loads(traj.steps[len(task.oracle)]["observation"])["success"], seed
        gate = next(c for c in traj.info["checklist"] if c["name"] == "no_collateral_change")
        assert not gate["passed"] and "dock_bookings" in gate["description"] and traj.reward == 0.0, (seed, gate)


FEASIBLE = [f"STTArena/Warehouse-{c}-{lvl}" for c in CONFLICTS for lvl in ("easy", "medium", "hard")]


@pytest.mark.parametrize("env_id", FEASIBLE)
def test_no_solution_holds_more_live_commitments_on_the_way_than_it_ends_with(env_id):
    # The footprint allows as many live new reservations, dock bookings and dispatches as any prefix of a solution
    # holds; a recovery that makes its new commitments before unwinding the stale ones would let one extra (a second
    # slot, another reservation) pass the collateral gate. Every solution unwinds first, so the allowance is exactly
    # what the recovery ends with.
    from sttgym.footprint import _by_world, _changes, footprint

    for seed in range(2):
        env, arena = start(env_id, seed)
        rollout(env, OracleAgent(), seed=seed)
        _, created = _changes(arena.task.initial_state, arena.world, _by_world(arena.log.events))
        allowed = footprint(arena.task, arena.domain.world)
        assert allowed.new == {k: len(v) for k, v in created.items()}, (seed, allowed.new)


@pytest.mark.parametrize("env_id", ["STTArena/Warehouse-T1-easy", "STTArena/Warehouse-S3-easy",
                                    "STTArena/Warehouse-T3-easy", "STTArena/Warehouse-ST3-easy"])
def test_recovering_after_the_dispatch_whose_error_shows_the_change_scores_one(env_id):
    # The whole nominal plan, whose dispatch fails with an error naming the change, then the oracle's recovery
    # without the story's read: the failed write showed the change, so the recovery counts in full.
    for seed in range(3):
        _, arena = start(env_id, seed)
        task = arena.task
        nominal, seen = task.nominal_plan, task.triggers[0].observable
        k = next(i for i, (a, b) in enumerate(zip(task.oracle, nominal)) if a != b)
        rest = [c for c in task.oracle[k:] if not (c.name == seen.tool and c.arguments == seen.args)]
        traj = rollout(gym.make(env_id), PlanAgent(nominal + rest), seed=seed)
        go = next(i for i, c in enumerate(nominal) if c.name == "dispatch_truck")
        assert not json.loads(traj.steps[go]["observation"])["success"]
        assert traj.reward == 1.0, (seed, traj.info["checklist"])


def answer_kinds(env_id: str, seed: int) -> tuple[str, ...]:
    """What the user answers each of validation's questions with: their hard constraints, their requirement,
    another answer of theirs, or the fallback."""
    _, arena = start(env_id, seed)
    profile = arena.task.profile
    user = RuleUser(profile)
    kinds = {profile.insist: "insist", profile.fallback: "fallback",
             **{a.text: "requirement" for a in profile.withheld},
             **{a.text: f"answer {i}" for i, a in enumerate(profile.clarifications)}}
    return tuple(kinds[user.reply(question)] for question in PANEL)


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_the_user_answers_alike_whether_or_not_the_order_can_be_met(conflict):
    # The user's hard constraints answer every proposed change of plan on every level, and a user with a
    # requirement has it on the impossible level too: nothing they say tells the levels apart.
    answers = {level: answer_kinds(f"STTArena/Warehouse-{conflict}-{level}", seed)
               for level in ("easy", "medium", "hard", "impossible") for seed in range(2)}
    assert len(set(answers.values())) == 1 and "insist" in answers["impossible"], answers


def blanked(task) -> str:
    """The query with every id, time, number and drawn name blanked: the words that could tell the levels apart."""
    state = task.initial_state
    names = [x["name"] for c in ("warehouses", "stores", "skus") for x in state[c].values()]
    names += [x["customer"] for x in state["orders"].values()]
    query = task.query
    for name in sorted(names, key=len, reverse=True):
        query = query.replace(name, "#")
    return re.sub(r"\b[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+\b|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}|\d+", "#", query)


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_every_level_asks_for_the_door_in_the_same_words_and_the_user_answers_alike(conflict):
    # Every level's request asks for the door of the goods-in bay the store's receiving record names, in words that
    # are the same on every level (a sentence only hard had would tell the agent the level), and the user says the
    # same about it; only medium's and hard's bay switches. Neither bids a re-read: players re-read a record the words
    # call "current" just before finishing.
    queries, replies = set(), set()
    for level in ("easy", "medium", "hard", "impossible"):
        for seed in range(2):
            _, arena = start(f"STTArena/Warehouse-{conflict}-{level}", seed)
            task, state = arena.task, arena.task.initial_state
            bays = {s: state["receiving_bays"][x["goods_in_bay"]] for s, x in state["stores"].items()}
            assert task.query.count(DOOR) == 1 and all(bay["store"] == s and bay["door"] in state["stores"][s]["doors"]
                                                       for s, bay in bays.items())
            assert ("goods_in_moved" in [t.name for t in task.triggers]) == (level in ("medium", "hard"))
            queries.add(blanked(task))
            replies.add(RuleUser(task.profile).reply("Which goods-in door should I record?"))
    (reply,) = replies
    assert len(queries) == 1 and "receiving record" in reply, queries
    assert not {"now", "current", "always", "latest"} & set(re.findall(r"[a-z]+", f"{DOOR} {reply}".lower()))


def early_door(task) -> list[Call]:
    """The oracle with its door recorded before anything else (read from the store's record and its bay) and the
    record re-read, and the door recorded again, only at the end."""
    reads = ("get_store", "get_receiving_bay", "record_delivery_door")
    tail = [c for c in task.oracle if c.name in reads]
    return [*tail[:3], *[c for c in task.oracle if c.name not in reads], *tail[3:]]


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_at_hard_the_bay_switches_after_the_recovery_and_the_door_and_only_the_store_shows_it(conflict):
    # The second change waits for the later of the recovery's dispatch after the story's change (whichever
    # warehouse, truck and slot it takes) and the agent's record of a door, so the door just written goes stale
    # whichever it did first; every write still works, the old bay reads as it did, and only the store's receiving
    # record shows the switch.
    hard = f"STTArena/Warehouse-{conflict}-hard"
    for env, seed, task, moved in second_changes(hard, "goods_in_moved", "get_store", seeds=range(2)):
        tools = env.unwrapped.tools
        planned = task.initial_state["stores"][moved.observable.args["store_id"]]["goods_in_bay"]
        old = task.initial_state["receiving_bays"][planned]["door"]
        for plan, during in ((task.oracle, "record_delivery_door"), (early_door(task), "dispatch_truck")):
            traj = rollout(env, PlanAgent(plan), seed=seed)
            assert traj.reward == 1.0, (seed, traj.info["checklist"])
            log = env.unwrapped.log
            fired = next(e for e in log.events if e["trigger"] == "goods_in_moved")
            assert fired["during"] == during and fired["during"] in MOVES_AT
            before = log.calls[:fired["call_index"]]
            assert [c["arguments"]["door"] for c in before if c["name"] == "record_delivery_door"][-1:] == [old]
            assert log.calls[log.revealed["goods_in_moved"]]["name"] == "get_store"  # no call before it showed it
            assert env.unwrapped.world.receiving_bays[planned] == task.initial_state["receiving_bays"][planned]
        stale = [c.model_copy(update={"arguments": {**c.arguments, "door": old}})
                 if c.name == "record_delivery_door" else c for c in task.oracle]
        traj = rollout(env, PlanAgent(stale), seed=seed)
        assert all(json.loads(s["observation"])["success"] for s in traj.steps
                   if s["action"].get("name") in tools and tools[s["action"]["name"]].mutates)
        passed = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        # the recovery still counts; the stale door fails what it was for
        assert passed["stock_secured"] and passed["delivered_in_full"] and not passed["door_recorded"], passed
        assert 0.0 < traj.reward < 1.0
        nominal = rollout(env, PlanAgent(task.nominal_plan), seed=seed)
        assert "goods_in_moved" not in [e["trigger"] for e in nominal.info["trigger_log"]]


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_at_medium_the_bay_switches_in_the_same_call_as_the_storys_change_and_only_the_store_shows_it(conflict):
    # Medium's second change comes with the story's first: in the call that sets it off, before the recovery and
    # before any door is recorded, so a re-read of the receiving record once the change is seen shows the new bay.
    # The old bay still reads as it did, and recording its door keeps the recovery's milestones but loses the door's.
    for level, env, task in by_level(f"STTArena/Warehouse-{conflict}", seed=1):
        assert ("goods_in_moved" in [t.name for t in task.triggers]) == (level in ("medium", "hard")), level
    medium = f"STTArena/Warehouse-{conflict}-medium"
    for env, seed, task, moved in second_changes_with_the_story(medium, "goods_in_moved", "get_store", range(2)):
        story = task.triggers[0]
        store = moved.observable.args["store_id"]
        planned = task.initial_state["stores"][store]["goods_in_bay"]
        old = task.initial_state["receiving_bays"][planned]["door"]
        for plan in [*task.alternatives, task.oracle]:  # the oracle's log last
            rollout(env, PlanAgent(plan), seed=seed)
            log = env.unwrapped.log
            fired = {e["trigger"]: e for e in log.events}
            assert fired["goods_in_moved"]["during"] in story.activation
            assert not any(c["name"] == "record_delivery_door" for c in log.calls[:fired[story.name]["call_index"]])
            assert env.unwrapped.world.receiving_bays[planned] == task.initial_state["receiving_bays"][planned]
        k = fired[story.name]["call_index"]
        assert [c["name"] for c in log.calls[:k + 1]] == [c.name for c in task.oracle[:k + 1]]
        # Up to the story's call and a read of the store's receiving record: it names the new bay already.
        traj = rollout(env, PlanAgent([*task.oracle[:k + 1], Call(name="get_store", arguments={"store_id": store})]),
                       seed=seed)
        new = json.loads(traj.steps[k + 1]["observation"])["data"]["goods_in_bay"]
        assert new != planned and new == env.unwrapped.world.stores[store]["goods_in_bay"]
        assert env.unwrapped.log.revealed["goods_in_moved"] == k + 1
        # The oracle records the new bay's door; keeping the first one loses the door's milestone alone.
        doors = [c.arguments["door"] for c in task.oracle if c.name == "record_delivery_door"]
        assert doors == [task.initial_state["receiving_bays"][new]["door"]] and doors != [old]
        stale = [c.model_copy(update={"arguments": {**c.arguments, "door": old}})
                 if c.name == "record_delivery_door" else c
                 for c in task.oracle if not (c.name == "get_receiving_bay" and c.arguments["bay_id"] == new)]
        traj = rollout(env, PlanAgent(stale), seed=seed)
        passed = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        assert passed["stock_secured"] and passed["delivered_in_full"] and not passed["door_recorded"], passed
        assert 0.0 < traj.reward < 1.0


def test_the_quality_requirement_is_a_certification_only_one_source_holds():
    for level in ("easy", "medium", "hard"):
        for seed in range(3):
            _, arena = start(f"STTArena/Warehouse-S2-{level}", seed)
            task = arena.task
            (fact,) = task.profile.withheld
            warehouses = task.initial_state["warehouses"]
            sent = {c.arguments["slot_id"] for c in task.oracle if c.name == "dispatch_truck"}
            home = next(c.arguments["warehouse_id"] for c in task.nominal_plan if c.name == "reserve_stock")
            want = {task.initial_state["dock_slots"][s]["warehouse"] for s in sent} - {home}  # medium: d0 is home's
            assert len(want) == 1 and not any(w in fact.text for w in warehouses if w != home)
            order = next(c.arguments["order_id"] for c in task.nominal_plan if c.name == "get_order")
            sku = task.initial_state["orders"][order]["sku"]
            stocked = [w for w, stock in task.initial_state["inventory"].items() if sku in stock]
            certified = [w for w in stocked if any(f"certified {c}." in fact.text
                                                   for c in warehouses[w].get("certifications", []))]
            assert sorted(certified) == sorted({home, *want}), (level, seed, certified)


def test_instances_differ_and_a_stored_task_replays():
    _, first = start("STTArena/Warehouse-ST2-hard", seed=5)
    stored = json.loads(first.task.model_dump_json())
    again = gym.make("STTArena/Warehouse-ST2-hard")
    again.reset(options={"task": stored})
    assert again.unwrapped.task.initial_state == first.task.initial_state
    assert rollout(again, OracleAgent(), seed=5).reward == 1.0
    _, other = start("STTArena/Warehouse-ST2-hard", seed=6)
    assert other.task.initial_state != first.task.initial_state


@pytest.mark.parametrize("env_id", ["STTArena/Warehouse-ST1-easy", "STTArena/Warehouse-S3-easy",
                                    "STTArena/Warehouse-ST3-easy"])
def test_reading_the_change_and_stopping_earns_nothing(env_id):
    # The stale reservation survives these changes; it is not a recovery, and reading the change is evidence, never
    # credit: no milestone holds.
    env, arena = start(env_id, seed=2)
    task = arena.task
    calls = task.nominal_plan[:task.nominal_plan.index(next(c for c in task.nominal_plan
                                                            if c.name == "book_dock_slot")) + 1]
    saved = {}
    for c in calls:
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    seen = task.triggers[0].observable
    assert call(env, seen.tool, **seen.args)["success"]
    *_, info = env.step({"content": "Task Completed"})
    assert arena.log.noticed(task.triggers[0].name)
    assert not any(c["passed"] for c in info["checklist"] if not c["gate"]) and info["score"] == 0.0


# ------------------------------------------------------------- facts the user withholds until asked

CONSULTED = [(c, lvl) for c in ("S2", "ST1") for lvl in ("easy", "medium", "hard")]


def test_ships_only_names_the_warehouses_or_trucks_every_live_dispatch_uses(w):
    assert not w.holds("ships_only", order_id="ORD-1", key="truck", among=["TRK-1"])  # nothing dispatched yet
    res = w("reserve_stock", order_id="ORD-1", warehouse_id="WH-A", quantity=80)["data"]["reservation_id"]
    assert w("book_dock_slot", slot_id="DS-1", truck_id="TRK-1")["success"]
    assert w("dispatch_truck", truck_id="TRK-1", slot_id="DS-1", reservation_id=res)["success"]
    assert w.holds("ships_only", order_id="ORD-1", key="truck", among=["TRK-1", "TRK-2"])
    assert w.holds("ships_only", order_id="ORD-1", key="warehouse", among=["WH-A"])
    assert not w.holds("ships_only", order_id="ORD-1", key="warehouse", among=["WH-B"])


def alternatives(conflict: str, task) -> list[dict]:
    """For each alternative the user did not choose, the swap that turns the oracle's recovery into it: another
    gate-listed-looking truck (ST1), or another warehouse with the stock, its trucks and its same-time dock slots
    (S2)."""
    state, sent = task.initial_state, [c.arguments for c in task.oracle if c.name == "dispatch_truck"]
    booked = next(c for c in task.nominal_plan if c.name == "book_dock_slot").arguments["truck_id"]
    trucks = state["trucks"]
    if conflict == "ST1":
        want = sent[-1]["truck_id"]
        return [{want: t} for t, x in sorted(trucks.items()) if t not in (want, booked)
                and x["status"] == "available" and x["location"] == trucks[want]["location"]]
    order = next(iter(c.arguments["order_id"] for c in task.nominal_plan if c.name == "get_order"))
    sku, q = state["orders"][order]["sku"], state["orders"][order]["quantity"]
    want, home = trucks[sent[-1]["truck_id"]]["location"], trucks[booked]["location"]

    def fleet(site: str) -> list[str]:
        return sorted((t for t, x in trucks.items() if x["location"] == site and x["status"] == "available"),
                      key=lambda t: trucks[t]["capacity"])

    def slot_at(site: str, slot: str) -> str:
        return next(i for i, s in state["dock_slots"].items()
                    if s["warehouse"] == site and s["start"] == state["dock_slots"][slot]["start"])

    def paired(alt: str) -> dict[str, str]:
        """Each truck at the user's site with one at ``alt``: one of the same capacity first (hard: the truck the
        split's part fits exactly, alike at every source), the others in capacity order."""
        theirs, pairs = fleet(alt), {}
        for t in fleet(want):
            same = [u for u in theirs if trucks[u]["capacity"] == trucks[t]["capacity"]]
            if same:
                pairs[t] = same[0]
                theirs.remove(same[0])
        return {**pairs, **dict(zip([t for t in fleet(want) if t not in pairs], theirs))}

    return [{want: alt, **paired(alt), **{d["slot_id"]: slot_at(alt, d["slot_id"])
                                          for d in sent if d["truck_id"] in fleet(want)}}
            for alt in sorted(state["inventory"]) if alt not in (want, home) and fleet(alt)
            and state["inventory"][alt].get(sku, {}).get("on_hand", 0) >= q]


def others_taken(env, seed: int) -> list[list[Call]]:
    """The oracle's recovery without its question, taking each alternative the user did not choose."""
    return [unasked(env.unwrapped.task, swap) for swap in alternatives(env.spec.id.split("-")[1], env.unwrapped.task)]


@pytest.mark.parametrize("conflict,level", CONSULTED)
def test_the_user_tells_the_warehouse_or_truck_only_when_asked_and_no_guess_passes(conflict, level):
    def others(env, seed):
        plans = others_taken(env, seed)
        assert len(plans) >= (2 if conflict == "ST1" or level != "hard" else 1), (seed, len(plans))
        return plans

    outcomes = assert_withheld_story(f"STTArena/Warehouse-{conflict}-{level}", "ask me first:", "asked_user", others)
    # Each ships the order, and each changes stock or a truck that no solution touches: the collateral gate fails.
    assert all(all(run.writes) and "no_collateral_change" in run.failed and run.score == 0.0 for run in outcomes)


@pytest.mark.parametrize("conflict,shown", [("S2", "warehouse"), ("S2", "arrives"), ("ST1", "truck")])
def test_the_users_choice_follows_no_order_the_tools_show(conflict, shown):
    """Over seeds, the user's alternative is sometimes first and sometimes not by id (and by arrival time)."""
    def last_dispatch(env, seed: int, plan: list[Call]) -> dict:
        steps = rollout(env, PlanAgent(plan), seed=seed).steps
        return [json.loads(s["observation"])["data"] for s in steps if s["action"].get("name") == "dispatch_truck"][-1]

    def cues(env, seed):
        mine = last_dispatch(env, seed, env.unwrapped.task.oracle)[shown]
        return {f"first by {shown}": mine < min(last_dispatch(env, seed, plan)[shown]
                                                for plan in others_taken(env, seed))}

    assert_unpredictable(f"STTArena/Warehouse-{conflict}-medium", cues, seeds=range(8))
