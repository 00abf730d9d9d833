"""ColdChain: tool behaviour on good and bad input, and scenario stories checked step by step.

Generic invariants over every domain (check_env, fuzzing, determinism, validation) live in
tests/core; these tests pin the rules of this world and the stories its scenarios tell.
"""

import copy
import itertools
import json
import re

import gymnasium as gym
import numpy as np
import pytest

import sttgym
from sttgym.agents import NominalAgent, OracleAgent, PlanAgent, RandomAgent
from sttgym.agents.probes import BlindWriter
from sttgym.authoring import Author
from sttgym.clock import Clock, shift
from sttgym.envs.arena.coldchain.generator import CONSULT, COUNT, build_base
from sttgym.envs.arena.coldchain.world import DWELL_MINUTES, ColdChainWorld
from sttgym.geo import shortest_route
from sttgym.task import Call, Ref
from sttgym.tools import collect_tools, validate_arguments
from sttgym.validation import PANEL
from tests.arena.harness import by_level, second_changes, second_changes_with_the_story
from tests.arena.withheld import assert_unpredictable, assert_withheld_story, question, unasked


@pytest.fixture
def region():
    """A fresh base world and a live world over a copy of its state, at the base's start time."""
    base = build_base(Author(ColdChainWorld, np.random.default_rng(5)))
    return base, ColdChainWorld(copy.deepcopy(base.state), Clock(base.start))


def ship(world, base, quantity=None):
    result = world.create_new_shipment(base.lot, base.hub, base.clinic, quantity or base.qty)
    assert result["success"], result
    return result["data"]["shipment_id"]


def loaded(world, base, stops=None):
    """A shipment of the mission on the user's van, routed (by default hub -> clinic)."""
    shipment = ship(world, base)
    assert world.assign_shipment_to_vehicle(shipment, base.vehicle)["success"]
    assert world.add_or_update_route_plan(base.vehicle, stops or [base.hub, base.clinic])["success"]
    return shipment


def free(world, base, lot):
    return next(x["free"] for x in world.get_goods_inventory_at_site(base.state["goods_inventory"][lot]["site_id"])["data"]["lots"]
                if x["goods_id"] == lot)


# ------------------------------------------------------------------------- reads


@pytest.mark.parametrize("call", [
    ("get_vehicle_status", ("VH-000",)), ("list_vehicles_at_site", ("NOWHERE",)),
    ("get_cooling_unit_status", ("CU-0",)), ("list_depot_maintenance_schedule", ("HUB-X",)),
    ("get_shipment_journey_status", ("SHP-0",)), ("get_route_stop_details", ("VH-000",)),
    ("get_goods_inventory_at_site", ("",)), ("list_clinic_immunization_schedule", ("DPT-00",)),
    ("list_operational_hours", ("x" * 500,)),
    ("get_registration_list", ("IMM-0",)), ("get_travel_time", ("A", "B")), ("list_roads", ("RD-0",))])
def test_reads_of_unknown_ids_fail_without_changing_anything(region, call):
    base, world = region
    before = copy.deepcopy(world.state)
    result = getattr(world, call[0])(*call[1])
    assert result["success"] is False and result["error"]
    assert world.state == before


def test_travel_time_follows_the_open_roads(region):
    base, world = region
    direct = world.get_travel_time(base.hub, base.clinic)["data"]
    assert direct["minutes"] == shortest_route(base.state["roads"], base.hub, base.clinic)[0]
    for road in direct["road_ids"]:
        world.roads[road]["open"] = False
    detour = world.get_travel_time(base.hub, base.clinic)
    assert detour["success"] and detour["data"]["minutes"] > direct["minutes"]
    assert not set(detour["data"]["road_ids"]) & set(direct["road_ids"])


# --------------------------------------------------------------------- shipments


def test_a_shipment_reserves_stock_until_it_is_cancelled(region):
    base, world = region
    before = free(world, base, base.lot)
    shipment = ship(world, base)
    assert free(world, base, base.lot) == before - base.qty
    assert world.cancel_shipment(shipment)["success"]
    assert free(world, base, base.lot) == before
    assert world.cancel_shipment(shipment)["success"] is False  # already cancelled


@pytest.mark.parametrize("change", ["wrong_origin", "too_many", "zero", "held_lot", "expired_lot", "same_site"])
def test_create_rejects_bad_requests_and_changes_nothing(region, change):
    base, world = region
    lot = world.goods_inventory[base.lot]
    origin, destination, quantity = base.hub, base.clinic, base.qty
    if change == "wrong_origin":
        origin = base.hub2
    elif change == "too_many":
        quantity = lot["quantity"] + 1
    elif change == "zero":
        quantity = 0
    elif change == "held_lot":
        lot["status"] = "on_hold"
    elif change == "expired_lot":
        lot["use_by"] = shift(base.start, -1)
    else:
        destination = base.hub
    before = copy.deepcopy(world.state)
    assert world.create_new_shipment(base.lot, origin, destination, quantity)["success"] is False
    assert world.state == before


def test_a_lapsed_hold_cannot_be_loaded_nor_reserves_stock(region):
    base, world = region
    shipment = ship(world, base)
    world.shipments[shipment]["hold_expires"] = shift(base.start, 10)
    reserved = free(world, base, base.lot)
    world.clock.advance(10)
    assert world.get_shipment_journey_status(shipment)["data"]["status"] == "lapsed"
    assert free(world, base, base.lot) == reserved + base.qty
    assert "lapsed" in world.assign_shipment_to_vehicle(shipment, base.vehicle)["error"]


def test_assigning_warns_about_a_van_of_the_wrong_temperature_class(region):
    base, world = region
    wrong = next(v for v, rec in world.vehicles.items()
                 if rec["site_id"] == base.hub and v != base.vehicle)
    result = world.assign_shipment_to_vehicle(ship(world, base), wrong)
    assert result["success"] and result["data"]["cooling_compatible"] is False and "WARNING" in result["message"]


def test_capacity_limits_what_a_van_takes(region):
    base, world = region
    world.vehicles[base.vehicle]["capacity"] = base.qty - 50
    shipment = ship(world, base)
    before = copy.deepcopy(world.state)
    assert "holds" in world.assign_shipment_to_vehicle(shipment, base.vehicle)["error"]
    assert world.state == before


# ------------------------------------------------------------------ routes, times


def test_route_times_come_from_the_road_graph_and_dwell(region):
    base, world = region
    loaded(world, base)
    stops = world.get_route_stop_details(base.vehicle)["data"]["stops"]
    drive = shortest_route(base.state["roads"], base.hub, base.clinic)[0]
    assert stops[0]["planned_arrival"] == base.start  # parked at the first stop: loads at once
    assert stops[1]["planned_arrival"] == shift(base.start, DWELL_MINUTES + drive)


def test_dispatch_retimes_the_route_from_the_moment_the_van_leaves(region):
    base, world = region
    shipment = loaded(world, base)
    world.clock.advance(37)
    result = world.update_vehicle_status(base.vehicle, "in_transit")
    assert result["data"]["departs"] == shift(base.start, 37)
    arrival = world.get_shipment_journey_status(shipment)["data"]["stops"][-1]["planned_arrival"]
    assert arrival == shift(base.start, 37 + DWELL_MINUTES + world.get_travel_time(base.hub, base.clinic)["data"]["minutes"])
    assert world.goods_inventory[base.lot]["quantity"] == base.state["goods_inventory"][base.lot]["quantity"] - base.qty


def test_a_departure_time_delays_the_van_and_must_not_be_in_the_past(region):
    base, world = region
    ship_id = ship(world, base)
    world.assign_shipment_to_vehicle(ship_id, base.vehicle)
    world.clock.advance(5)
    before = copy.deepcopy(world.state)
    for bad in (base.start, "tomorrow", shift(base.start, 60 * 30)):
        assert world.add_or_update_route_plan(base.vehicle, [base.hub, base.clinic], bad)["success"] is False
    assert world.state == before
    later = shift(base.start, 90)
    assert world.add_or_update_route_plan(base.vehicle, [base.hub, base.clinic], later)["success"]
    assert world.update_vehicle_status(base.vehicle, "in_transit")["data"]["departs"] == later


def test_route_must_pick_up_before_it_drops_off(region):
    base, world = region
    van = base.vehicle3  # parked at a depot, away from the lot
    world.assign_shipment_to_vehicle(ship(world, base), van)
    for bad in ([base.clinic, base.hub], [base.hub], [base.hub, base.hub], [], ["NOWHERE"]):
        assert world.add_or_update_route_plan(van, bad)["success"] is False
    assert world.vehicles[van]["route_stop_ids"] == []
    assert world.add_or_update_route_plan(van, [base.hub, base.clinic])["success"]


def test_dispatch_refuses_a_route_over_a_road_closed_after_planning(region):
    base, world = region
    loaded(world, base)
    corridor = base.roads["depot1-clinic"]
    world.roads[corridor]["open"] = False
    before = copy.deepcopy(world.state)
    result = world.update_vehicle_status(base.vehicle, "in_transit")
    assert result["success"] is False and corridor in result["error"] and world.state == before
    assert world.get_route_stop_details(base.vehicle)["data"]["stops"][-1]["closed_roads"] == [corridor]


def test_dispatch_refuses_a_faulty_cooling_unit(region):
    base, world = region
    loaded(world, base)
    base_unit = world.vehicles[base.vehicle]["cooling_unit_id"]
    world.cooling_units[base_unit]["status"] = "fault"
    assert "fault" in world.update_vehicle_status(base.vehicle, "in_transit")["error"]


def test_cold_dispatch_slots_are_counted_in_the_shift_the_van_loads_in(region):
    base, world = region
    loaded(world, base)
    hub = world.distribution_hubs[base.hub]
    hub["cold_dispatch"] = {"shift_ends": shift(base.start, 30), "remaining": 1, "next_shift_remaining": 0}
    assert "note" not in world.list_operational_hours(base.hub)["data"]["cold_dispatch"]
    world.clock.advance(30)  # the van now loads after the shift change
    assert "next_shift_remaining" in world.list_operational_hours(base.hub)["data"]["cold_dispatch"]["note"]  # says so
    before = copy.deepcopy(world.state)
    assert "no cold-dispatch slot" in world.update_vehicle_status(base.vehicle, "in_transit")["error"]
    assert world.state == before
    hub["cold_dispatch"]["next_shift_remaining"] = 1
    assert world.update_vehicle_status(base.vehicle, "in_transit")["success"]
    assert hub["cold_dispatch"] == {"shift_ends": shift(base.start, 30), "remaining": 1, "next_shift_remaining": 0}


# ----------------------------------------------------------- receipts and recalls


def test_receipt_is_stamped_with_the_arrival_and_frees_the_van(region):
    base, world = region
    shipment = loaded(world, base)
    world.update_vehicle_status(base.vehicle, "in_transit")
    arrival = world.get_shipment_journey_status(shipment)["data"]["stops"][-1]["planned_arrival"]
    assert world.register_goods_receipt(shipment, base.clinic2)["success"] is False  # not its destination
    result = world.register_goods_receipt(shipment, base.clinic)
    assert result["data"]["received_at"] == arrival
    van = world.vehicles[base.vehicle]
    assert (van["status"], van["site_id"]) == ("idle", base.clinic)
    assert world.register_goods_receipt(shipment, base.clinic)["success"] is False  # only once


@pytest.mark.parametrize("problem", ["closed_clinic", "after_hours", "road_closed"])
def test_receipt_is_refused_when_the_van_cannot_hand_over(region, problem):
    base, world = region
    shipment = loaded(world, base)
    world.update_vehicle_status(base.vehicle, "in_transit")
    if problem == "closed_clinic":
        world.clinics[base.clinic]["status"] = "closed"
    elif problem == "after_hours":
        world.clinics[base.clinic]["hours"]["close"] = base.start[11:16]
    else:
        world.roads[base.roads["depot1-clinic"]]["open"] = False
    before = copy.deepcopy(world.state)
    assert world.register_goods_receipt(shipment, base.clinic)["success"] is False
    assert world.state == before


def test_recalling_a_van_returns_its_load_still_reserved(region):
    base, world = region
    shipment = loaded(world, base)
    stock = world.goods_inventory[base.lot]["quantity"]
    world.update_vehicle_status(base.vehicle, "in_transit")
    assert world.update_vehicle_status(base.vehicle, "idle")["success"]
    assert world.goods_inventory[base.lot]["quantity"] == stock
    assert world.shipments[shipment]["status"] == "assigned"
    assert world.get_route_stop_details(base.vehicle)["data"]["stops"] == []
    assert world.update_vehicle_status(base.vehicle, "idle")["success"] is False  # not in transit any more


def test_a_completed_reset_services_the_unit_and_holds_the_van_until_the_window_ends(region):
    base, world = region
    van = base.vehicle3  # parked at a depot
    unit = world.vehicles[van]["cooling_unit_id"]
    window = next(w for w, rec in sorted(world.cooling_unit_resets.items()) if rec["depot_id"] == base.depot1)
    assert world.schedule_cooling_unit_reset(base.unit_of(base.vehicle), window)["success"] is False  # not at the depot
    assert world.record_cooling_unit_reset(window, "completed")["success"] is False  # not booked yet
    world.cooling_units[unit]["status"] = "reset_required"
    assert world.schedule_cooling_unit_reset(unit, window)["success"]
    assert world.record_cooling_unit_reset(window, "completed")["success"]
    end = world.cooling_unit_resets[window]["end"]
    assert world.cooling_units[unit]["status"] == "operational" and world.cooling_units[unit]["reset_due_by"] > end
    assert world.vehicles[van]["available_from"] == end


# ---------------------------------------------------------------- listing tools


def test_listings_show_every_site_lot_and_road_an_agent_needs(region):
    base, world = region
    sites = world.list_sites()["data"]["sites"]
    assert {s["site_id"] for s in sites} == {*world.distribution_hubs, *world.depots, *world.clinics}
    assert {s["site_id"] for s in world.list_sites("depot")["data"]["sites"]} == set(world.depots)
    lots = world.list_lots(base.product)["data"]["lots"]
    assert {(x["goods_id"], x["site_id"]) for x in lots} == {(base.lot, base.hub), (base.lot2, base.hub2)}
    shipment = ship(world, base)
    assert next(x["free"] for x in world.list_lots(base.product)["data"]["lots"] if x["goods_id"] == base.lot) == \
        world.goods_inventory[base.lot]["quantity"] - base.qty
    world.cancel_shipment(shipment)
    roads = world.list_roads(base.clinic)["data"]["roads"]
    assert {r["road_id"] for r in roads} == {rid for rid, r in world.roads.items() if base.clinic in (r["a"], r["b"])}
    vans = world.list_vehicles_at_site(base.hub)["data"]["vehicles"]
    assert {tuple(v["holds_c"]) for v in vans} == {(0, 10), (-30, -12)}  # both temperature classes, told apart


def test_a_coordinator_may_hold_or_quarantine_a_lot_but_never_release_one(region):
    base, world = region
    assert world.update_goods_inventory_status(base.lot, "quarantined")["success"]
    assert world.goods_inventory[base.lot]["status"] == "quarantined"
    before = copy.deepcopy(world.state)
    assert world.update_goods_inventory_status(base.lot, "quarantined")["success"] is False  # already so
    assert world.state == before
    spec = collect_tools(world)["update_goods_inventory_status"]  # releasing is the quality team's call:
    assert validate_arguments(spec, {"goods_id": base.lot, "status": "available"})  # refused before the tool runs
    assert world.create_new_shipment(base.lot, base.hub, base.clinic, base.qty)["success"] is False


def test_dispatch_refuses_a_lot_that_is_no_longer_at_the_origin(region):
    base, world = region
    loaded(world, base)
    world.goods_inventory[base.lot]["site_id"] = base.depot1
    assert "no longer stored" in world.update_vehicle_status(base.vehicle, "in_transit")["error"]


# ----------------------------------------------------------------------- stories

CONFLICTS = ("T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3")


def play(env_id, plan, seed=0, dynamics=True):
    """Run ``plan`` (a function of the task) in a fresh env; return the trajectory and the env."""
    env = gym.make(env_id, dynamics=dynamics)
    env.reset(seed=seed)
    agent = PlanAgent(plan(env.unwrapped.task))
    return sttgym.rollout(env, agent, seed=seed), env


def fired(traj):
    return [e["trigger"] for e in traj.info["trigger_log"]]


def reads_only(task, env):
    mutates = {name: spec.mutates for name, spec in env.unwrapped.tools.items()}
    return [c for c in task.nominal_plan if not mutates[c.name]]


@pytest.mark.parametrize("env_id", sttgym.arena_ids("ColdChain"))
def test_reading_never_causes_a_change(env_id):
    """Triggers wait on the clock, the agent's writes or the world's state, and are activated by writes alone:
    reading everything in sight again and again fires only what the clock brings, and scores nothing."""
    env = gym.make(env_id)
    env.reset(seed=0)
    task = env.unwrapped.task
    mutates = {name: spec.mutates for name, spec in env.unwrapped.tools.items()}
    for trigger in task.triggers:
        assert all(mutates[tool] for tool in trigger.activation), trigger.name
        assert not mutates[trigger.observable.tool], trigger.name
    reads = reads_only(task, env) + [Call(name=t.observable.tool, arguments=t.observable.args) for t in task.triggers]
    traj = sttgym.rollout(env, PlanAgent(reads * 4), seed=0)
    by_name = {t.name: t for t in task.triggers}
    # What fires is what the clock brings (and state that follows from it); nothing that waits on a write.
    assert all(not by_name[name].activation and "calling" not in by_name[name].when.model_dump_json()
               for name in fired(traj))
    assert traj.reward == 0.0


def test_t1_the_hold_is_cut_when_the_clock_passes_the_cut_whatever_the_agent_calls():
    env = gym.make("STTArena/ColdChain-T1-easy")
    env.reset(seed=3)
    task = env.unwrapped.task
    hold = task.triggers[0].observable.args["shipment_id"]
    read = {"name": "get_shipment_journey_status", "arguments": {"shipment_id": hold}}
    assert env.step(read)[4]["result"]["data"]["status"] == "held"
    cut = task.triggers[0].when.args["moment"]
    while True:
        called_at = env.unwrapped.clock.iso()
        events = env.step({"name": "list_sites", "arguments": {}})[4]["events"]
        assert bool(events) == (called_at >= cut)
        if events:
            break
    data = env.step(read)[4]["result"]["data"]
    assert data["status"] == "lapsed" and data["hold_expires"] == cut


def test_t1_medium_the_cut_is_announced_by_loading_and_bites_before_the_van_leaves():
    traj, _ = play("STTArena/ColdChain-T1-medium", lambda t: t.nominal_plan, seed=2)
    names = [s["action"].get("name") for s in traj.steps]
    assign = names.index("assign_shipment_to_vehicle")
    assert [e["trigger"] for e in traj.steps[assign]["events"]] == ["hold_cut", RECOUNT]  # the count moves with it
    dispatch = names.index("update_vehicle_status")
    assert "lapsed" in traj.steps[dispatch]["observation"] and "waitlist_served" in fired(traj)
    assert traj.reward == 0.0  # the lapsed hold is left assigned: nothing of the recovery was done


def test_t2_medium_hours_are_cut_only_once_the_van_is_on_the_road():
    env_id = "STTArena/ColdChain-T2-medium"
    traj, env = play(env_id, lambda t: t.nominal_plan + [Call(name="list_operational_hours",
                                                              arguments=t.triggers[0].observable.args)])
    names = [s["action"].get("name") for s in traj.steps]
    dispatch = names.index("update_vehicle_status")
    assert not any(s["events"] for s in traj.steps[:dispatch])
    assert [e["trigger"] for e in traj.steps[dispatch]["events"]] == ["receiving_hours_cut", RECOUNT]
    close = next(op.args["value"] for op in env.unwrapped.task.triggers[0].effect if op.args["path"][-1] == "close")
    assert "cannot receive" in traj.steps[dispatch + 1]["observation"]  # the van arrives after the new closing time
    assert f'"close": "{close}"' in traj.steps[-2]["observation"]
    oracle = sttgym.rollout(gym.make(env_id), OracleAgent(), seed=0)
    assert oracle.reward == 1.0 and fired(oracle).count("receiving_hours_cut") == 1  # guarded: stops once recovered


def test_s3_the_corridor_closes_on_a_route_that_uses_it_and_re_planning_avoids_it():
    traj = sttgym.rollout(gym.make("STTArena/ColdChain-S3-easy"), OracleAgent(), seed=2)
    closing = next(i for i, s in enumerate(traj.steps) if s["events"])
    corridor = traj.steps[closing]["events"][0]["changes"][0]["path"].split(".")[1]
    assert traj.steps[closing]["action"]["name"] == "add_or_update_route_plan"
    seen = next(s for s in traj.steps[closing:] if s["action"].get("name") == "get_route_stop_details")
    assert f'"closed_roads": ["{corridor}"]' in seen["observation"]
    replanned = [json.loads(s["observation"]) for s in traj.steps[closing + 1:]
                 if s["action"].get("name") == "add_or_update_route_plan"][-1]
    assert all(corridor not in stop["road_ids"] for stop in replanned["data"]["stops"])
    assert traj.reward == 1.0


def test_medium_effects_show_up_later_than_they_fire():
    """The nominal run fails at a later call than the one the trigger fired on."""
    for conflict in CONFLICTS:
        traj, _ = play(f"STTArena/ColdChain-{conflict}-medium", lambda t: t.nominal_plan, seed=1)
        first_event = next(i for i, s in enumerate(traj.steps) if s["events"])
        assert first_event < len(traj.steps) - 2, conflict  # something the agent still does comes after it
        assert traj.reward == 0.0, conflict


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_the_blind_writer_meets_every_trigger_and_scores_nothing(level):
    """It meets every change of the story, the medium level's late registrations (which come with the story's
    change) included; the hard level's wait for a recovery, which it never makes."""
    for conflict in ("T1", "T3", "S2", "ST2"):
        env = gym.make(f"STTArena/ColdChain-{conflict}-{level}")
        traj = sttgym.rollout(env, BlindWriter(), seed=0)
        waiting = {RECOUNT} if level == "hard" else set()
        assert set(fired(traj)) == {t.name for t in env.unwrapped.task.triggers} - waiting, conflict
        assert traj.reward == 0.0, conflict


def dispatched(plan):
    """The van the plan's last dispatch sends."""
    return [c.arguments["vehicle_id"] for c in plan if c.name == "update_vehicle_status"
            and c.arguments["status"] == "in_transit"][-1]


def _without(plan, *tools):
    return [c for c in plan if c.name not in tools]


def _swap_van(task, old, new):
    return [c.model_copy(update={"arguments": {k: (new if v == old else v) for k, v in c.arguments.items()}})
            for c in task.oracle]


@pytest.mark.parametrize("conflict", ["T1", "S1", "T2"])
def test_hard_cascades_the_medium_fix_is_not_enough(conflict):
    """In hard, the recovery that solves medium runs into the second problem and fails a check."""
    env_id = f"STTArena/ColdChain-{conflict}-hard"

    def medium_fix(task):
        van = dispatched(task.nominal_plan)
        if conflict == "S1":  # ship with the relocated van without servicing its unit first
            return _without(task.oracle, "schedule_cooling_unit_reset", "record_cooling_unit_reset")
        final = dispatched(task.oracle)
        if conflict == "T1":  # the user's own van fetches from the city hub
            return _swap_van(task, final, van)
        requisitioned = next(t for t in task.triggers if t.name == "city_van_requisitioned").effect[0].args["path"][1]
        return _swap_van(task, final, requisitioned)  # T2: the requisitioned city van carries the doses

    traj, _ = play(env_id, medium_fix, seed=4)
    assert traj.reward < 1.0
    assert sttgym.rollout(gym.make(env_id), OracleAgent(), seed=4).reward == 1.0


RECOUNT = "session_recounted"


def needed(task) -> int:
    """The doses the session needs once the late registrations of a medium or hard level came."""
    (recount,) = [t for t in task.triggers if t.name == RECOUNT]
    return next(op.args["value"] for op in recount.effect if op.args["path"][-1] == "registered")


def topping_up(call) -> bool:
    """Whether ``call`` books, loads or signs for the oracle's top-up of the late registrations."""
    return call.save_as == "top_up" or getattr(call.arguments.get("shipment_id"), "step", None) == "top_up"


def reads_showing(env, trigger) -> list[tuple[str, dict]]:
    """The reads, each tool with every id its arguments can take, whose result at the end of ``env``'s episode would
    differ had ``trigger``'s changes not happened."""
    world = env.unwrapped.world
    undone = copy.deepcopy(world.state)
    for event in env.unwrapped.log.events:
        for change in event["changes"] if event["trigger"] == trigger else ():
            *path, key = change["path"].split(".")
            node = undone
            for step in path:
                node = node[step]
            node[key] = change["old"]
    state, product = world.state, product_of(env.unwrapped.task)
    ids = {"site_id": [s for c in ("distribution_hubs", "depots", "clinics") for s in sorted(state[c])],
           "vehicle_id": sorted(state["vehicles"]), "cooling_unit_id": sorted(state["cooling_units"]),
           "depot_id": sorted(state["depots"]), "shipment_id": sorted(state["shipments"]), "product": [product],
           "registration_list_id": sorted(state["registration_lists"])}
    ids["origin_site_id"] = ids["destination_site_id"] = ids["site_id"]
    tools, twin = collect_tools(world), collect_tools(ColdChainWorld(undone, world.clock))
    shown = []
    for name, spec in sorted(tools.items()):
        if spec.mutates:
            continue
        params = spec.parameters.get("required", [])
        for values in itertools.product(*(ids[p] for p in params)):
            args = dict(zip(params, values))
            if tools[name].func(**args) != twin[name].func(**args):
                shown.append((name, args))
    return shown


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_at_hard_late_registrations_raise_the_count_once_the_recovery_commits_and_only_the_list_shows_it(conflict):
    """The second change waits for the recovery's first commitment after the story's change, whichever lot, site or
    van it chose, and leaves every write working and every booking as the agent left it: only the session's
    registration list shows the new count, one hop behind the schedule, which still names the same list (and which
    T2 and ST3 send the agent back to for their own change). The recovery made with the count read at the start
    keeps the milestone of its own, not the goal; the stale plan never gets that far and never meets it."""
    hard = f"STTArena/ColdChain-{conflict}-hard"
    for env, seed, task, recount in second_changes(hard, RECOUNT, "get_registration_list"):
        met = sttgym.rollout(env, PlanAgent(task.oracle), seed=seed).info["trigger_log"][-1]
        assert met["during"] in ("create_new_shipment", "assign_shipment_to_vehicle")
        stale, traj = kept_count(env, seed, task, recount)
        unmoved = task.model_copy(update={"triggers": task.triggers[:-1]})
        alike = sttgym.rollout(gym.make(env.spec.id), PlanAgent(stale), seed=seed, options={"task": unmoved})
        differ = [s["action"] for s, t in zip(traj.steps, alike.steps) if s["observation"] != t["observation"]]
        assert differ and all(a["name"] == "get_registration_list" for a in differ)  # every write alike
        assert RECOUNT not in fired(sttgym.rollout(env, PlanAgent(task.nominal_plan), seed=seed))


def kept_count(env, seed: int, task, recount) -> tuple[list[Call], object]:
    """The oracle without its top-up, played: it keeps the recovery's milestone but not the dispatch or the goal, it
    meets the late registrations, and only the registration list shows them. The plan and its trajectory."""
    stale = [c for c in task.oracle if not topping_up(c)]
    traj = sttgym.rollout(env, PlanAgent(stale), seed=seed)
    passed = {c["name"]: c["passed"] for c in traj.info["checklist"]}
    assert passed["alternative_secured"] and not passed["dispatched_in_time"] and not passed["doses_delivered"]
    assert 0.0 < traj.reward < 1.0 and RECOUNT in fired(traj)
    assert reads_showing(env, RECOUNT) == [("get_registration_list", recount.observable.args)]
    return stale, traj


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_at_medium_late_registrations_come_with_the_storys_change_and_only_the_list_shows_it(conflict):
    """At medium the same second change comes in the same call as the story's own change, whichever solution is
    played: the registration list read right after that call already has the new count, so an agent that re-reads
    what its plan depends on once it sees the change finds it, and only that list shows it. The oracle (which
    does) scores 1.0; the oracle keeping the count read at the start (no top-up) keeps the recovery's milestones
    but loses the goal and the dispatch of the doses the list has at the end."""
    medium = f"STTArena/ColdChain-{conflict}-medium"
    for env, seed, task, recount in second_changes_with_the_story(medium, RECOUNT, "get_registration_list"):
        oracle = sttgym.rollout(env, PlanAgent(task.oracle), seed=seed)
        story = next(i for i, step in enumerate(oracle.steps) if step["events"])  # the first change's call
        assert [e["trigger"] for e in oracle.steps[story]["events"]][-1] == RECOUNT
        look = Call(name="get_registration_list", arguments=recount.observable.args)
        listed = [json.loads(sttgym.rollout(env, PlanAgent(task.oracle[:k] + [look]), seed=seed).steps[k][
            "observation"])["data"]["registered"] for k in (story, story + 1)]  # just before that call, just after
        first = task.initial_state["registration_lists"][recount.observable.args["registration_list_id"]]
        assert listed == [first["registered"], needed(task)] and needed(task) > first["registered"], (seed, listed)
        kept_count(env, seed, task, recount)


def test_the_count_moves_only_at_medium_and_hard():
    """Impossible levels stay impossible with the same refusal: the count never moves there, nor at easy."""
    for env_id in sttgym.arena_ids("ColdChain"):
        env = gym.make(env_id)
        env.reset(seed=0)
        assert (RECOUNT in {t.name for t in env.unwrapped.task.triggers}) == env_id.endswith(("medium", "hard"))


@pytest.mark.parametrize("conflict", ["S1", "ST2"])
def test_the_raised_count_booked_again_instead_of_topped_up_scores_full_marks(conflict):
    """The checklist judges the doses received against the schedule at the end, never the fix: cancelling the
    recovery's shipment and booking it again for the new count does as well as the oracle's top-up."""
    env_id = f"STTArena/ColdChain-{conflict}-hard"
    for seed in (0, 1):
        env = gym.make(env_id)
        env.reset(seed=seed)
        task = env.unwrapped.task
        top = next(i for i, c in enumerate(task.oracle) if c.save_as == "top_up")
        van = task.oracle[top + 1].arguments["vehicle_id"]
        main = next(c for c in reversed(task.oracle[:top]) if c.name == "create_new_shipment")
        old, new = (Ref(step=tag, path=("data", "shipment_id")) for tag in (main.save_as, "again"))
        again = [Call(name="cancel_shipment", arguments={"shipment_id": old}),
                 main.model_copy(update={"save_as": "again", "arguments": {**main.arguments,
                                                                           "quantity": needed(task)}}),
                 Call(name="assign_shipment_to_vehicle", arguments={"shipment_id": new, "vehicle_id": van})]
        rest = [c.model_copy(update={"arguments": {**c.arguments, "shipment_id": new}})
                if c.name == "register_goods_receipt" and c.arguments["shipment_id"] == old else c
                for c in task.oracle[top:] if not topping_up(c)]
        traj = sttgym.rollout(gym.make(env_id), PlanAgent(task.oracle[:top] + again + rest), seed=seed)
        assert traj.reward == 1.0, (seed, [c["name"] for c in traj.info["checklist"] if not c["passed"]])


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_every_level_takes_the_count_from_the_registration_list_in_the_same_words(conflict):
    """The request names no count of its own and takes it from the session's registration list at every level alike:
    a sentence only the hard level had would tell the agent the level. It names the list once as where the count
    comes from, never in words that say the count moves (players who read "always lists ... now" re-read the
    schedule before finishing and caught the hard level's change)."""
    queries = set()
    for level, env, task in by_level(f"STTArena/ColdChain-{conflict}", seed=0):
        query = task.query
        assert COUNT in query and not re.search(r"\d+ doses", query), query
        assert not MOVING.search(query), query
        queries.add(blanked(query.replace(f" {CONSULT}", "").replace(product_of(env.unwrapped.task), "#")))
    assert len(queries) == 1, queries


def test_impossible_needs_the_blocking_fact_and_no_forbidden_change():
    env_id = "STTArena/ColdChain-ST1-impossible"
    oracle = sttgym.rollout(gym.make(env_id), OracleAgent(), seed=0)
    assert oracle.reward == 1.0

    def vague(task):
        return _without(task.oracle, "chat_with_user") + [
            Call(name="chat_with_user", arguments={"message": "Sorry, I cannot do that for you today."})]

    assert play(env_id, vague)[0].reward == 0.0

    def blind(task):  # the right words, but it never looked after the change
        return [c for c in task.oracle if c.name == "chat_with_user"]

    assert play(env_id, blind)[0].reward == 0.0

    def warm_van(task):  # tells the user, but also sends the doses in a van of the wrong class
        state, van = task.initial_state, dispatched(task.nominal_plan)
        wrong = next(v for v, rec in sorted(state["vehicles"].items())
                     if rec["site_id"] == state["vehicles"][van]["site_id"] and v != van)
        return task.oracle + [c.model_copy(update={"arguments": {k: (wrong if v == van else v)
                                                                  for k, v in c.arguments.items()}})
                              for c in task.nominal_plan if c.name != "get_vehicle_status"]

    traj, _ = play(env_id, warm_van)
    assert traj.reward == 0.0  # the forbidden gate says why (the warm van is also a change beyond the request)
    assert [c["name"] for c in traj.info["checklist"] if not c["passed"]] == ["no_wrong_temperature_van",
                                                                               "no_collateral_change"]


# Words that tell an agent a value moves, so that it re-reads the record before finishing.
MOVING = re.compile(r"\b(now|current|currently|always|latest|live|up to date|still|whoever)\b", re.IGNORECASE)


def blanked(text: str) -> str:
    """A reply with its ids, dates, times and numbers (signs too: the product's band is drawn) blanked, much as
    validation's solvability panel compares them."""
    return re.sub(r"\b[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+\b|\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2})?|-?\d+(?:[:.]\d+)?", "#",
                  text)


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_the_user_answers_alike_at_every_level_and_names_no_lot(conflict):
    """Asked to change the plan (but for the stock, where a story withholds its rule), how many doses, or any of
    validation's panel of questions, the user answers with the same words at every level of a conflict (the hard constraints, the schedule as where the count is, the
    programme's batch rule, the fallback), whether or not the request can be met, and never with a count that the
    hard level's late registrations would leave stale; the stock question is answered only when asked, and never
    with a lot id."""
    replies = {}
    for level, env, task in by_level(f"STTArena/ColdChain-{conflict}", seed=0):

        def say(text):
            return env.step({"name": "chat_with_user", "arguments": {"message": text}})[4]["result"]["data"]["reply"]

        assert "stock" not in say("What is the deadline?")
        assert "stock" in say("Is there stock elsewhere?") and "LOT-" not in say("Which stock may we use?")
        product = product_of(env.unwrapped.task)  # drawn per instance, as the band is
        replies[level] = tuple(blanked(say(question).replace(product, "#"))
                               for question in ("Could we use a different van instead?", "How many doses are needed?",
                                                *PANEL))
        assert "no fewer and no more" in replies[level][0]
        # a proposal of another lot asks about the stock rule, answered (like any question on it) where there is one
        withheld = env.unwrapped.task.profile.withheld
        lot = say("Could we use a different lot instead?")
        assert ("may only use stock released under" if withheld else "no fewer and no more") in lot
        count = say("How many doses are needed?")
        assert "registration list" in count and not re.search(r"\d+ doses", count), count
        assert not MOVING.search(count), count
    assert len(set(replies.values())) == 1, replies


def stop_after(env_id, plan, seed=0):
    """The reward, the milestones that held and the gates broken when an agent stops after ``plan`` (then says
    "Task Completed")."""
    traj = sttgym.rollout(gym.make(env_id), PlanAgent(plan), seed=seed)
    return traj.reward, [c["name"] for c in traj.info["checklist"] if c["passed"] and not c["gate"]], \
        [c["name"] for c in traj.info["checklist"] if c["gate"] and not c["passed"]]


# The engine's collateral gate compares a final state with the final states of the task's solutions, so a stop
# with the doses loaded but not yet received reads as a van changed as no solution leaves it (raised with the
# engine's owner). Until the gate looks at the solutions' intermediate states, a stop part-way is checked on its
# milestones and on the domain's own gates, and the reward only where the collateral gate has nothing to say.
PART_WAY = {"no_collateral_change"}


def test_t2_medium_credit_climbs_with_each_step_of_the_recovery():
    """The paper's worked example: the van is recalled, its shipment cancelled, the city hub ships instead (the lot
    of the batch the user names when asked). Each step of the recovery earns a milestone, stopping early breaks
    none of the domain's gates, and the stale plan earns nothing."""
    env_id = "STTArena/ColdChain-T2-medium"
    env = gym.make(env_id)
    env.reset(seed=0)
    task = env.unwrapped.task
    oracle, names = task.oracle, [c.name for c in task.oracle]
    last = {name: len(names) - names[::-1].index(name) for name in names}  # through each tool's last call
    cancel, asked = names.index("cancel_shipment") + 1, oracle.index(question(task)) + 1
    booked = names.index("create_new_shipment", cancel) + 1  # the city lot (the top-up of the late registrations later)
    steps = [(cancel - 1, []),  # the stale run, dispatched before the hours were cut under it, recalled: nothing yet
             (cancel, ["stale_plan_unwound"]),
             (asked, ["stale_plan_unwound"]),  # the question counts once the doses it was about are booked
             (booked, ["asked_user", "stale_plan_unwound"]),
             (last["add_or_update_route_plan"], ["asked_user", "stale_plan_unwound", "alternative_secured"]),
             (last["update_vehicle_status"], ["asked_user", "stale_plan_unwound", "alternative_secured",
                                              "dispatched_in_time"])]
    for k, earned in steps:
        reward, passed, broken = stop_after(env_id, oracle[:k])
        assert passed == earned and set(broken) <= PART_WAY, (k, passed, broken)
        assert broken or reward == len(earned) / 5, (k, reward)
    assert stop_after(env_id, oracle)[0] == 1.0
    # the stale plan, stopped anywhere (and with its reads made twice first), earns no milestone
    plan = task.nominal_plan
    assert all(stop_after(env_id, plan[:k])[1] == [] for k in range(len(plan) + 1))
    assert stop_after(env_id, reads_only(task, env) + plan)[:2] == (0.0, [])


def test_reading_the_change_without_acting_on_it_earns_nothing():
    """``noticed`` is folded into the first reaction: an agent that reads the change (the oracle's reads, all of
    them) but writes nothing of the recovery has no milestone."""
    for conflict in ("T1", "S2", "ST3"):
        env_id = f"STTArena/ColdChain-{conflict}-medium"
        env = gym.make(env_id)
        env.reset(seed=1)
        task = env.unwrapped.task
        mutates = {name: spec.mutates for name, spec in env.unwrapped.tools.items()}
        stale = [c for c in task.nominal_plan if mutates[c.name]][:-1]  # the stale writes, up to the receipt
        looked = stale + [c for c in task.oracle if not mutates[c.name]]
        traj = sttgym.rollout(gym.make(env_id), PlanAgent(looked), seed=1)
        first = task.triggers[0]
        assert first.name in fired(traj), conflict
        seen_at = [i for i, st in enumerate(traj.steps) if st["action"].get("name") == first.observable.tool]
        changed_at = next(i for i, st in enumerate(traj.steps) if st["events"])
        assert seen_at and seen_at[-1] > changed_at, conflict  # the change was read after it happened
        assert traj.reward == 0.0 and not [c for c in traj.info["checklist"] if c["passed"] and not c["gate"]]


def test_st2_medium_a_spoiled_load_left_on_the_road_trips_the_cold_chain_gate():
    """Harm is gated, stopping is not: the van carrying the quarantined lot must be recalled even when the city
    hub's doses arrive, and a delivered spoiled load zeroes the episode."""
    env_id = "STTArena/ColdChain-ST2-medium"
    env = gym.make(env_id)
    env.reset(seed=2)
    task = env.unwrapped.task
    names = [c.name for c in task.oracle]
    recall = next(i for i, c in enumerate(task.oracle) if c.name == "update_vehicle_status"
                  and c.arguments["status"] == "idle")
    hedged = task.oracle[:recall] + task.oracle[names.index("cancel_shipment") + 1:]  # never recalls the stale van
    reward, _, broken = stop_after(env_id, hedged, seed=2)
    assert reward == 0.0 and broken == ["cold_chain_kept", "no_collateral_change"]  # and a van left on the road
    reward, _, broken = stop_after(env_id, task.nominal_plan, seed=2)  # the spoiled doses are received
    assert reward == 0.0 and "cold_chain_kept" in broken


def delivery(tag, lot, origin, to, quantity, van, stops):
    """The calls of one delivery, as an agent would make them (the shipment saved under ``tag``)."""
    ref = Ref(step=tag, path=("data", "shipment_id"))
    return [Call(name="create_new_shipment", save_as=tag, arguments={
                "goods_id": lot, "origin_site_id": origin, "destination_site_id": to, "quantity": quantity}),
            Call(name="assign_shipment_to_vehicle", arguments={"shipment_id": ref, "vehicle_id": van}),
            Call(name="add_or_update_route_plan", arguments={"vehicle_id": van, "route_plan": stops}),
            Call(name="update_vehicle_status", arguments={"vehicle_id": van, "status": "in_transit"}),
            Call(name="register_goods_receipt", arguments={"shipment_id": ref, "site_id": to})]


def cold_vans(task, site):
    """The vans parked at ``site`` that hold the request's band."""
    state, lot = task.initial_state, product_lot(task)
    units = {v: state["cooling_units"][x["cooling_unit_id"]] for v, x in state["vehicles"].items()}
    return [v for v, x in sorted(state["vehicles"].items()) if x["site_id"] == site
            and units[v]["min_temp_c"] <= lot["temp_min_c"] <= units[v]["max_temp_c"]]


def product_lot(task) -> dict:
    """The lot the request names (booked by the nominal plan, or held for it)."""
    create = next((c for c in task.nominal_plan if c.name == "create_new_shipment"), None)
    held = next(c for c in task.nominal_plan if c.name == "assign_shipment_to_vehicle").arguments["shipment_id"]
    lot = create.arguments["goods_id"] if create else task.initial_state["shipments"][held]["goods_id"]
    return task.initial_state["goods_inventory"][lot]


def destination(task) -> str:
    return next(c for c in task.nominal_plan if c.name == "register_goods_receipt").arguments["site_id"]


def test_s1_easy_a_refused_booking_that_names_the_depot_is_noticing_enough():
    """Reported: an agent whose first booking at the hub was refused ("stored at DPT-..., not at HUB-...") booked the
    lot where the error said, routed the requested van through the hub to the depot and delivered in time. The
    refusal showed the change, and the van and route are its own choice: full marks."""
    env_id = "STTArena/ColdChain-S1-easy"
    for seed in (9, 0):
        env = gym.make(env_id)
        env.reset(seed=seed)
        task = env.unwrapped.task
        create = next(c for c in task.nominal_plan if c.name == "create_new_shipment")
        lot, hub, clinic, qty = (create.arguments[k] for k in ("goods_id", "origin_site_id", "destination_site_id",
                                                              "quantity"))
        van = next(c for c in task.nominal_plan if c.name == "assign_shipment_to_vehicle").arguments["vehicle_id"]
        depot = next(op.args["value"] for op in task.triggers[0].effect if op.args["path"][-1] == "site_id")
        count = [Call(name="list_clinic_immunization_schedule", arguments={"site_id": clinic}),
                 next(c for c in task.nominal_plan if c.name == "get_registration_list")]
        for carrier, stops in ((van, [hub, depot, clinic]), (cold_vans(task, depot)[0], [depot, clinic])):
            plan = [*count, create, *delivery("ship", lot, depot, clinic, qty, carrier, stops)]
            traj = sttgym.rollout(gym.make(env_id), PlanAgent(plan), seed=seed)
            assert json.loads(traj.steps[2]["observation"])["error"].startswith(f"lot {lot} is stored at {depot}")
            assert traj.reward == 1.0, (seed, carrier, [c["name"] for c in traj.info["checklist"] if not c["passed"]])


def test_s2_hard_the_two_released_lots_in_two_vans_after_a_refused_dispatch_score_full_marks():
    """Reported: after the revocation (shown by the refused dispatch), an agent cancelled the stale shipment and sent
    the two released lots, each in a van of its own, cold and on time: full marks. (Since the late registrations
    came to the hard level, the second van also takes the small lot the depot keeps for them, once the registration
    list shows them.)"""
    env_id, seed = "STTArena/ColdChain-S2-hard", 5
    env = gym.make(env_id)
    env.reset(seed=seed)
    task = env.unwrapped.task
    lots = task.initial_state["goods_inventory"]
    stale = task.nominal_plan[:-1]  # through the dispatch the hold refuses
    create = next(c for c in task.nominal_plan if c.name == "create_new_shipment")
    clinic, batch = create.arguments["destination_site_id"], product_lot(task)["batch"]
    released = sorted(((g, x) for g, x in lots.items() if x["product"] == product_lot(task)["product"]
                       and x["batch"] != batch), key=lambda lot: lot[1]["site_id"] not in task.initial_state[
                           "distribution_hubs"])  # the city hub's lot first, its van beside it
    (hub_lot, at_hub), *in_depot = released
    assert len(in_depot) == 2 and sum(x["quantity"] for _, x in released) == needed(task)
    ours = next(c for c in task.nominal_plan if c.name == "assign_shipment_to_vehicle").arguments["vehicle_id"]
    city = cold_vans(task, at_hub["site_id"])[0]
    other = next(v for site in sorted({x["site_id"] for x in task.initial_state["vehicles"].values()})
                 for v in cold_vans(task, site) if v not in (ours, city))
    plan = stale + [Call(name="cancel_shipment", arguments={"shipment_id": Ref(step="ship", path=("data",
                                                                                                 "shipment_id"))})]
    plan += delivery(hub_lot, hub_lot, at_hub["site_id"], clinic, at_hub["quantity"], city, [at_hub["site_id"], clinic])
    plan.append(Call(name="get_registration_list", arguments=task.triggers[-1].observable.args))  # the count went up
    depot = in_depot[0][1]["site_id"]
    (ship_b, load_b, route, go, receive_b), (ship_c, load_c, *_, receive_c) = (
        delivery(lot, lot, depot, clinic, x["quantity"], other, [depot, clinic]) for lot, x in in_depot)
    plan += [ship_b, ship_c, load_b, load_c, route, go, receive_b, receive_c]
    traj = sttgym.rollout(gym.make(env_id), PlanAgent(plan), seed=seed)
    assert "on_hold" in traj.steps[len(stale) - 1]["observation"]
    assert traj.reward == 1.0, [c["name"] for c in traj.info["checklist"] if not c["passed"]]


@pytest.mark.parametrize("env_id", [i for i in sttgym.arena_ids("ColdChain") if not i.endswith("impossible")][::2])
def test_every_way_the_world_offers_is_a_listed_alternative_that_scores_full_marks(env_id):
    """The alternatives are the other usable lots and vans (and sites the team may be at), each a complete solution
    scoring 1.0; where several vans can make it, the city hub's van and the depot van are among them."""
    for seed in (0, 1):
        env = gym.make(env_id)
        env.reset(seed=seed)
        task = env.unwrapped.task
        for plan in task.alternatives:
            traj = sttgym.rollout(gym.make(env_id), PlanAgent(plan), seed=seed)
            assert traj.reward == 1.0, (seed, [c["name"] for c in traj.info["checklist"] if not c["passed"]])
    if env_id.endswith("S1-easy"):  # the lot at the depot: our van via the depot, the depot's van, the city stock
        used = {c.arguments["vehicle_id"] for plan in [task.oracle, *task.alternatives] for c in plan
                if c.name == "assign_shipment_to_vehicle"}
        assert {dispatched(task.oracle), *cold_vans(task, task.initial_state["vehicles"][dispatched(
            task.oracle)]["site_id"])} <= used and len(used) >= 3, used


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_an_extra_shipment_after_the_solution_is_a_collateral_change(conflict):
    """Reported: an extra shipment reserving another lot kept 1.0. The oracle followed by one (a small one of another
    product, to the clinic) now fails the collateral gate."""
    env_id = f"STTArena/ColdChain-{conflict}-medium"
    env = gym.make(env_id)
    env.reset(seed=0)
    task = env.unwrapped.task
    clinic = destination(task)
    other, lot = next((g, x) for g, x in sorted(task.initial_state["goods_inventory"].items())
                      if x["product"] != product_lot(task)["product"] and x["status"] == "available")
    extra = Call(name="create_new_shipment", arguments={"goods_id": other, "origin_site_id": lot["site_id"],
                                                        "destination_site_id": clinic, "quantity": 50})
    traj = sttgym.rollout(gym.make(env_id), PlanAgent([*task.oracle, extra]), seed=0)
    assert json.loads(traj.steps[len(task.oracle)]["observation"])["success"]
    assert traj.reward == 0.0 and [c["name"] for c in traj.info["checklist"] if not c["passed"]] == [
        "no_collateral_change"]


@pytest.mark.parametrize("env_id", sttgym.arena_ids("ColdChain")[::5])
def test_no_dynamics_means_the_nominal_plan_reaches_the_goal(env_id):
    traj = sttgym.rollout(gym.make(env_id, dynamics=False), NominalAgent(), seed=6)
    assert traj.reward == 1.0 and traj.info["trigger_log"] == []


HOSTILE = ["", "x" * 3000, "__init__", "../../etc", "2024-13-45T99:99", "0001-01-01T00:00", "\x00", -1, 0, 10**12,
           2.5, True, None, [], {}, ["HUB-NOWHERE", ""]]


@pytest.mark.parametrize("env_id", sttgym.arena_ids("ColdChain")[::3])
def test_random_and_hostile_calls_never_break_a_tool(env_id):
    traj = sttgym.rollout(gym.make(env_id), RandomAgent(max_calls=25), seed=1)
    assert not [s for s in traj.steps if '"internal_error"' in s["observation"]]
    env = gym.make(env_id)
    _, info = env.reset(seed=2)
    state = env.unwrapped.world.state
    known = [key for container in state.values() for key in sorted(container)]
    rng = np.random.default_rng(len(env_id))
    for tool in info["tools"]:
        spec = tool["function"]
        for _ in range(6):
            pool = HOSTILE + known
            arguments = {k: pool[int(rng.integers(len(pool)))] for k in spec["parameters"]["properties"]}
            _, _, _, truncated, step = env.step({"name": spec["name"], "arguments": arguments})
            assert "ended" not in step["result"].get("error", "") and not step["result"].get("internal_error"), \
                (spec["name"], arguments, step["result"])
            json.dumps(env.unwrapped.world.state)  # still plain JSON data
            if truncated:
                env.reset(seed=3)


def product_of(task) -> str:
    """The product the request ships."""
    return product_lot(task)["product"]


def city_run(task, reread=()):
    """Ship the city hub's stock in its own van whatever happened, knowing it from the start (the other lot of the
    product, not at the user's hub, and a van beside it that holds its band), where the nominal plan was headed,
    after only a look at that hub's vans (which no change touches). ``reread``: calls made first."""
    state, create = task.initial_state, next(c for c in task.nominal_plan if c.name == "create_new_shipment")
    product = product_of(task)
    lot = next(g for g, x in sorted(state["goods_inventory"].items()) if x["product"] == product
               and x["site_id"] != create.arguments["origin_site_id"] and x["site_id"] in state["distribution_hubs"])
    hub, lo = state["goods_inventory"][lot]["site_id"], state["goods_inventory"][lot]["temp_min_c"]
    van = next(v for v, x in sorted(state["vehicles"].items()) if x["site_id"] == hub
               and state["cooling_units"][x["cooling_unit_id"]]["min_temp_c"] <= lo
               <= state["cooling_units"][x["cooling_unit_id"]]["max_temp_c"])
    to, ref = create.arguments["destination_site_id"], Ref(step="city", path=("data", "shipment_id"))
    return [*reread, Call(name="list_vehicles_at_site", arguments={"site_id": hub}),
            Call(name="create_new_shipment", save_as="city", arguments={
                "goods_id": lot, "origin_site_id": hub, "destination_site_id": to,
                "quantity": create.arguments["quantity"]}),
            Call(name="assign_shipment_to_vehicle", arguments={"shipment_id": ref, "vehicle_id": van}),
            Call(name="add_or_update_route_plan", arguments={"vehicle_id": van, "route_plan": [hub, to]}),
            Call(name="update_vehicle_status", arguments={"vehicle_id": van, "status": "in_transit"}),
            Call(name="register_goods_receipt", arguments={"shipment_id": ref, "site_id": to})]


@pytest.mark.parametrize("env_id", ["STTArena/ColdChain-T3-easy", "STTArena/ColdChain-ST2-easy",
                                    "STTArena/ColdChain-T3-medium", "STTArena/ColdChain-S2-medium",
                                    "STTArena/ColdChain-ST2-medium", "STTArena/ColdChain-T2-medium"])
def test_shipping_the_city_stock_without_meeting_the_change_earns_at_most_the_goal(env_id):
    """Where the city hub is the right answer, a policy that ships its stock regardless, ignoring the lot and van the
    request names without ever meeting the change (nothing it got would have differed without it; at medium the
    change, bound to the request's own writes, never even comes), delivers the doses but earns no recovery
    milestone: ``noticed`` is folded into every one of them. The same writes after any result that showed the
    change earn them all (in the easy levels, where it is posted before anything is booked): the story's own read,
    or the lot listing where the change is to the lot."""
    for seed in (0, 1, 2):
        env = gym.make(env_id)
        env.reset(seed=seed)
        task = env.unwrapped.task
        traj, _ = play(env_id, city_run, seed=seed)
        passed = {c["name"] for c in traj.info["checklist"] if c["passed"] and not c["gate"]}
        assert traj.reward < 0.5 and passed <= {"doses_delivered"}, (env_id, seed, passed)
        # The run itself works, the doses arriving in time, unless its own dispatch set off the story's change (ST2,
        # T2) and with it, at medium, the late registrations, which leave the count it shipped short.
        assert ("doses_delivered" in passed) == (RECOUNT not in fired(traj)), (env_id, seed)
        if env_id.endswith("easy"):
            wait = [Call(name="list_sites", arguments={})] * 3  # the change is posted a few minutes in
            seen = [Call(name=t.observable.tool, arguments=t.observable.args) for t in task.triggers]
            looked, _ = play(env_id, lambda t: city_run(t, wait + seen), seed=seed)
            assert looked.reward == 1.0, (env_id, seed)
            listing = [Call(name="list_lots", arguments={"product": product_of(task)})]
            listed, _ = play(env_id, lambda t: city_run(t, wait + listing), seed=seed)
            assert (listed.reward == 1.0) == ("ST2" in env_id), (env_id, seed)  # a quarantine shows in the listing


COUNT_DOSES = {"doses_delivered", "alternative_secured", "dispatched_in_time"}  # the milestones that count doses


class OverShipper(OracleAgent):
    """The oracle, except that every shipment carries ``extra`` doses more than it asks for."""

    extra = 50

    def act(self, observation: str, info: dict) -> dict:
        action = super().act(observation, info)
        if action.get("name") == "create_new_shipment":
            action = {**action, "arguments": {**action["arguments"],
                                              "quantity": action["arguments"]["quantity"] + self.extra}}
        return action


def test_shipping_more_doses_than_requested_does_not_deliver_the_request():
    """Under RL the tiny CPU model learned to ship one large quantity whatever the request said, and "at least"
    checks paid for it wherever the lot had the doses. The oracle's plan with more doses on every shipment must
    neither reach the goal nor earn a milestone that counts the doses, wherever the world accepts the larger
    shipments (stories that split the doses over lots whose whole stock they take refuse them: nothing to try
    there)."""
    feasible = [i for i in sttgym.arena_ids("ColdChain") if not i.endswith("impossible")]
    tried = set()
    for env_id in feasible:
        for seed in (0, 1):
            more = sttgym.rollout(gym.make(env_id), OverShipper(), seed=seed)
            shipped = [s for s in more.steps if (s.get("action") or {}).get("name") == "create_new_shipment"]
            if shipped and all(json.loads(step["observation"])["success"] for step in shipped):
                tried.add(env_id)
                passed = {c["name"] for c in more.info["checklist"] if c["passed"]}
                assert not passed & COUNT_DOSES and more.reward < 1.0, (env_id, seed, passed)
    assert len(tried) >= len(feasible) // 2, f"the larger shipments went through in only {sorted(tried)}"


# ------------------------------------------------- facts only the user knows


def lots_offered(task) -> tuple[str, str]:
    """The lot the oracle ships after its question (the programme's) and the other one the question offers."""
    offered = re.findall(r"LOT-[A-Z0-9]+-\d+", question(task).arguments["message"])
    ours = next(c for c in reversed(task.oracle) if c.name == "create_new_shipment").arguments["goods_id"]
    (other,) = [lot for lot in offered if lot != ours]
    return ours, other


@pytest.mark.parametrize("env_id", [f"STTArena/ColdChain-{c}-{lvl}" for c in ("T2", "T3")
                                    for lvl in ("medium", "hard")])
def test_which_stock_the_programme_may_use_is_the_users_to_say(env_id):
    def others(env, seed):  # the oracle's recovery shipping the other lot its question offers, unasked
        ours, other = lots_offered(env.unwrapped.task)
        return [unasked(env.unwrapped.task, {ours: other})]

    assert_withheld_story(env_id, "ask me first which stock we may use", "asked_user", others, seeds=(0, 1, 1000000))


def lot_cues(task) -> dict[str, bool]:
    """Whether the programme's lot is the one a guess would take: listed first, more doses, a later use-by date."""
    ours, other = lots_offered(task)
    lots = task.initial_state["goods_inventory"]
    return {"listed first": ours < other, "more doses": lots[ours]["quantity"] > lots[other]["quantity"],
            "keeps longer": lots[ours]["use_by"] > lots[other]["use_by"]}


@pytest.mark.parametrize("env_id", ["STTArena/ColdChain-T2-medium", "STTArena/ColdChain-T3-hard"])
def test_nothing_the_tools_show_tells_which_lot_is_the_programmes(env_id):
    assert_unpredictable(env_id, lambda env, seed: lot_cues(env.unwrapped.task))
