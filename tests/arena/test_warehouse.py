"""Warehouse: tool behaviour on a hand-made network, the rules of the world, and cheap exploits that must fail."""

from __future__ import annotations

import copy
import json

import gymnasium as gym
import pytest

from tests.arena.harness import WorldHarness
from tests.arena.withheld import assert_unpredictable, assert_withheld_story, unasked
from sttgym.agents import NominalAgent, OracleAgent, PlanAgent
from sttgym.agents.probes import BlindWriter
from sttgym.envs.arena.warehouse.world import WarehouseWorld
from sttgym.rollout import rollout
from sttgym.task import Call, resolve

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
        "stores": {"ST-1": {"name": "Store one", "region": "North"}},
        "roads": {"RD-1": {"a": "WH-A", "b": "ST-1", "minutes": 30, "open": True, "max_tonnes": None},
                  "RD-2": {"a": "WH-B", "b": "ST-1", "minutes": 20, "open": True, "max_tonnes": 10},
                  "RD-3": {"a": "WH-A", "b": "WH-B", "minutes": 25, "open": True, "max_tonnes": None}},
        "skus": {"SKU-1": {"name": "water cases", "unit": "unit"}},
        "inventory": {"WH-A": {"SKU-1": {"on_hand": 100, "quarantined": 0, "note": ""}},
                      "WH-B": {"SKU-1": {"on_hand": 50, "quarantined": 10, "note": ""}}},
        "inbound": {"IB-1": {"warehouse": "WH-B", "sku": "SKU-1", "quantity": 40, "carrier": "X", "eta":
                             "2024-05-06T10:00", "status": "on schedule", "note": ""}},
        "orders": {"ORD-1": {"customer": "C", "store": "ST-1", "sku": "SKU-1", "quantity": 80, "priority": "standard",
                             "note": "", "due_by": "2024-05-06T12:00"}},
        "reservations": {},
        "dock_slots": {
            "DS-1": {"warehouse": "WH-A", "start": "2024-05-06T09:30", "end": "2024-05-06T10:00", "status": "free",
                     "truck": None},
            "DS-2": {"warehouse": "WH-A", "start": "2024-05-06T10:15", "end": "2024-05-06T10:45", "status": "free",
                     "truck": None},
            "DS-3": {"warehouse": "WH-B", "start": "2024-05-06T09:30", "end": "2024-05-06T10:00", "status": "free",
                     "truck": None},
            "DS-4": {"warehouse": "WH-B", "start": "2024-05-06T10:30", "end": "2024-05-06T11:00", "status": "free",
                     "truck": None}},
        "trucks": {
            "TRK-1": {"name": "big", "capacity": 100, "tonnes": 18, "location": "WH-A", "available_from": None,
                      "shift_end": "2024-05-06T18:00", "status": "available", "note": ""},
            "TRK-2": {"name": "small", "capacity": 50, "tonnes": 7, "location": "WH-B", "available_from": None,
                      "shift_end": "2024-05-06T18:00", "status": "available", "note": ""}},
        "dispatches": {},
        "counters": {"reservation": 10, "dispatch": 20},
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
def test_impossible_tasks_need_the_blocking_fact_and_punish_a_dispatch_anyway(conflict):
    env_id = f"STTArena/Warehouse-{conflict}-impossible"
    assert rollout(gym.make(env_id), OracleAgent(), seed=0).reward == 1.0
    assert rollout(gym.make(env_id), NominalAgent(), seed=0).reward == 0.0
    _, arena = start(env_id, seed=0)
    vague = [c if c.name != "chat_with_user" else c.model_copy(update={"arguments": {
        "message": "I'm sorry, but I cannot ship this order; something changed and it no longer works."}})
        for c in arena.task.oracle]
    assert rollout(gym.make(env_id), PlanAgent(vague), seed=0).reward == 0.0


def stubborn_policy(env, seed: int) -> float:
    """The cheapest recovery: the nominal plan, and whenever a write fails, reserve again at the same warehouse,
    book its next free slot for the same truck and dispatch again, never reading what changed."""
    env.reset(seed=seed)
    task, saved = env.unwrapped.task, {}
    for c in task.nominal_plan:
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    writes = [resolve(c.arguments, saved) for c in task.nominal_plan if c.name in ("reserve_stock", "book_dock_slot")]
    reserve, book = writes
    slots = env.unwrapped.world.state["dock_slots"]  # privileged: the slot table, without a read that would notice
    later = sorted((s["start"], i) for i, s in slots.items() if s["warehouse"] == reserve["warehouse_id"]
                   and s["status"] == "free" and s["start"] > slots[book["slot_id"]]["start"])
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
    """After the hub outage, read it, then ship whatever the best-stocked other warehouse has, and stop."""
    env.reset(seed=seed)
    task = env.unwrapped.task
    saved = {}
    for c in task.nominal_plan:
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
def test_noticing_the_change_and_stopping_earns_only_the_noticed_milestone(env_id):
    # The stale reservation survives these changes; it is not a recovery, so only noticed_change holds.
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
    passed = {c["name"] for c in info["checklist"] if c["passed"]}
    assert "noticed_change" in passed and "stock_secured" not in passed
    assert info["score"] == pytest.approx(1 / sum(not c.gate for c in task.checklist))


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

    return [{want: alt, **dict(zip(fleet(want), fleet(alt))), **{d["slot_id"]: slot_at(alt, d["slot_id"])
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
    assert all(all(run.writes) and run.score > 0 for run in outcomes)  # each ships the order, earning some credit


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
