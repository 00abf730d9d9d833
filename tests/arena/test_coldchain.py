"""ColdChain: tool behaviour on good and bad input, and scenario stories checked step by step.

Generic invariants over every domain (check_env, fuzzing, determinism, validation) live in
tests/core; these tests pin the rules of this world and the stories its scenarios tell.
"""

import copy
import json

import gymnasium as gym
import numpy as np
import pytest

import sttgym
from sttgym.agents import NominalAgent, OracleAgent, PlanAgent, RandomAgent
from sttgym.clock import Clock
from sttgym.envs.arena.coldchain.generator import build_base, load_and_go, plus, shipment
from sttgym.envs.arena.coldchain.world import DWELL_MINUTES, ColdChainWorld
from sttgym.geo import shortest_route
from sttgym.task import Call


@pytest.fixture
def region():
    """A fresh base world and a live world over a copy of its state, at the base's start time."""
    base = build_base(np.random.default_rng(5))
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
    ("list_operational_hours", ("x" * 500,)), ("get_travel_time", ("A", "B"))])
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
        lot["use_by"] = plus(base.start, -1)
    else:
        destination = base.hub
    before = copy.deepcopy(world.state)
    assert world.create_new_shipment(base.lot, origin, destination, quantity)["success"] is False
    assert world.state == before


def test_a_lapsed_hold_cannot_be_loaded_nor_reserves_stock(region):
    base, world = region
    shipment = ship(world, base)
    world.shipments[shipment]["hold_expires"] = plus(base.start, 10)
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
    assert stops[1]["planned_arrival"] == plus(base.start, DWELL_MINUTES + drive)


def test_dispatch_retimes_the_route_from_the_moment_the_van_leaves(region):
    base, world = region
    shipment = loaded(world, base)
    world.clock.advance(37)
    result = world.update_vehicle_status(base.vehicle, "in_transit")
    assert result["data"]["departs"] == plus(base.start, 37)
    arrival = world.get_shipment_journey_status(shipment)["data"]["stops"][-1]["planned_arrival"]
    assert arrival == plus(base.start, 37 + DWELL_MINUTES + world.get_travel_time(base.hub, base.clinic)["data"]["minutes"])
    assert world.goods_inventory[base.lot]["quantity"] == base.state["goods_inventory"][base.lot]["quantity"] - base.qty


def test_a_departure_time_delays_the_van_and_must_not_be_in_the_past(region):
    base, world = region
    ship_id = ship(world, base)
    world.assign_shipment_to_vehicle(ship_id, base.vehicle)
    world.clock.advance(5)
    before = copy.deepcopy(world.state)
    for bad in (base.start, "tomorrow", plus(base.start, 60 * 30)):
        assert world.add_or_update_route_plan(base.vehicle, [base.hub, base.clinic], bad)["success"] is False
    assert world.state == before
    later = plus(base.start, 90)
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
    hub["cold_dispatch"] = {"shift_ends": plus(base.start, 30), "remaining": 1, "next_shift_remaining": 0}
    world.clock.advance(30)  # the van now loads after the shift change
    before = copy.deepcopy(world.state)
    assert "no cold-dispatch slot" in world.update_vehicle_status(base.vehicle, "in_transit")["error"]
    assert world.state == before
    hub["cold_dispatch"]["next_shift_remaining"] = 1
    assert world.update_vehicle_status(base.vehicle, "in_transit")["success"]
    assert hub["cold_dispatch"] == {"shift_ends": plus(base.start, 30), "remaining": 1, "next_shift_remaining": 0}


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
    assert world.schedule_cooling_unit_reset(base.unit(base.vehicle) and world.vehicles[base.vehicle]["cooling_unit_id"],
                                             window)["success"] is False  # that van is not at the depot
    assert world.record_cooling_unit_reset(window, "completed")["success"] is False  # not booked yet
    world.cooling_units[unit]["status"] = "reset_required"
    assert world.schedule_cooling_unit_reset(unit, window)["success"]
    assert world.record_cooling_unit_reset(window, "completed")["success"]
    end = world.cooling_unit_resets[window]["end"]
    assert world.cooling_units[unit]["status"] == "operational" and world.cooling_units[unit]["reset_due_by"] > end
    assert world.vehicles[van]["available_from"] == end


# ----------------------------------------------------------------------- stories


def play(env_id, plan, seed=0, dynamics=True):
    """Run ``plan`` (a function of the task) in a fresh env; return the trajectory and the env."""
    env = gym.make(env_id, dynamics=dynamics)
    env.reset(seed=seed)
    agent = PlanAgent(plan(env.unwrapped.task))
    return sttgym.rollout(env, agent, seed=seed), env


def fired(traj):
    return [e["trigger"] for e in traj.info["trigger_log"]]


def test_t1_the_hold_is_cut_when_the_clock_passes_the_cut_whatever_the_agent_calls():
    env = gym.make("STTArena/ColdChain-T1-easy")
    env.reset(seed=3)
    task = env.unwrapped.task
    hold = task.nominal_plan[0].arguments["shipment_id"]
    clinic = task.nominal_plan[1].arguments["site_id"]
    read = {"name": "get_shipment_journey_status", "arguments": {"shipment_id": hold}}
    assert env.step(read)[4]["result"]["data"]["status"] == "held"
    cut = task.triggers[0].mutations[0].new
    while True:
        called_at = env.unwrapped.clock.iso()
        events = env.step({"name": "list_operational_hours", "arguments": {"site_id": clinic}})[4]["events"]
        assert bool(events) == (called_at >= cut)
        if events:
            break
    data = env.step(read)[4]["result"]["data"]
    assert data["status"] == "lapsed" and data["hold_expires"] == cut


def test_t2_medium_hours_are_cut_only_once_the_van_is_on_the_road():
    env_id = "STTArena/ColdChain-T2-medium"
    traj, env = play(env_id, lambda t: t.nominal_plan)
    clinic_reads = [s for s in traj.steps if s["action"].get("name") == "list_operational_hours"]
    assert clinic_reads[0]["events"] == []  # before dispatch: nothing happens
    assert [e["trigger"] for e in clinic_reads[1]["events"]] == ["receiving_hours_cut"]
    close = env.unwrapped.task.triggers[0].mutations[0].new
    assert f'"close": "{close}"' in clinic_reads[1]["observation"]
    assert "cannot receive" in traj.steps[-2]["observation"]  # the van arrives after the new closing time
    oracle = sttgym.rollout(gym.make(env_id), OracleAgent(), seed=0)
    assert oracle.reward == 1.0 and fired(oracle).count("receiving_hours_cut") == 1  # guarded: stops once recovered


def test_s3_the_corridor_closes_on_a_route_that_uses_it_and_re_planning_avoids_it():
    env = gym.make("STTArena/ColdChain-S3-easy")
    env.reset(seed=2)
    van = env.unwrapped.task.nominal_plan[3].arguments["vehicle_id"]
    assert env.step({"name": "get_route_stop_details", "arguments": {"vehicle_id": van}})[4]["events"] == []  # no route yet

    traj = sttgym.rollout(gym.make("STTArena/ColdChain-S3-easy"), OracleAgent(), seed=2)
    closing = next(i for i, s in enumerate(traj.steps) if s["events"])
    corridor = traj.steps[closing]["events"][0]["changes"][0]["path"].split(".")[1]
    assert traj.steps[closing]["action"]["name"] == "get_route_stop_details"
    assert f'"closed_roads": ["{corridor}"]' in traj.steps[closing]["observation"]
    replanned = next(json.loads(s["observation"]) for s in traj.steps[closing:]
                     if s["action"].get("name") == "add_or_update_route_plan")
    assert all(corridor not in stop["road_ids"] for stop in replanned["data"]["stops"])
    assert traj.reward == 1.0


def test_medium_effects_show_up_later_than_they_fire():
    """The nominal run's first failure comes at a later call than the one the trigger fired on."""
    for conflict in ("T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3"):
        traj, _ = play(f"STTArena/ColdChain-{conflict}-medium", lambda t: t.nominal_plan, seed=1)
        first_event = next(i for i, s in enumerate(traj.steps) if s["events"])
        assert first_event < len(traj.steps) - 2, conflict  # something the agent still does comes after it
        assert traj.reward < 1.0, conflict


def _swap(plan, old, new):
    """``plan`` with every argument value ``old`` replaced by ``new`` in its last five calls (the final delivery)."""
    head, tail = plan[:-5], plan[-5:]
    return head + [Call(name=c.name, save_as=c.save_as,
                        arguments={k: (new if v == old else v) for k, v in c.arguments.items()}) for c in tail]


def _medium_fix(conflict, task):
    """The recovery that solves the medium level, applied to a hard instance."""
    van = next(c.arguments["vehicle_id"] for c in task.nominal_plan if c.name == "update_vehicle_status")
    if conflict == "S1":  # ship with the relocated van without servicing it first
        return [c for c in task.oracle if "reset" not in c.name]
    if conflict == "ST1":  # move the load to the depot van, as the medium oracle does
        depot = task.oracle[8].arguments["site_id"]
        spare = next(v for v, rec in sorted(task.initial_state["vehicles"].items())
                     if rec["site_id"] == depot and rec["kind"] == task.initial_state["vehicles"][van]["kind"])
        route, clinic = task.nominal_plan[-3].arguments["route_plan"], task.nominal_plan[-1].arguments["site_id"]
        return task.oracle[:9] + load_and_go(shipment(), spare, route, clinic)
    final_van = task.oracle[-4].arguments["vehicle_id"]  # T1, T3: the user's own van fetches from the city hub
    return _swap(task.oracle, final_van, van)


@pytest.mark.parametrize("conflict", ["T1", "T3", "S1", "ST1"])
def test_hard_cascades_the_medium_fix_is_not_enough(conflict):
    """In hard, the recovery that solves medium runs into the second problem and fails a check."""
    env_id = f"STTArena/ColdChain-{conflict}-hard"
    traj, _ = play(env_id, lambda task: _medium_fix(conflict, task), seed=4)
    assert traj.reward < 1.0
    assert sttgym.rollout(gym.make(env_id), OracleAgent(), seed=4).reward == 1.0


def test_impossible_needs_the_blocking_fact_and_no_forbidden_change():
    env_id = "STTArena/ColdChain-ST1-impossible"
    oracle = sttgym.rollout(gym.make(env_id), OracleAgent(), seed=0)
    assert oracle.reward == 1.0

    def vague(task):
        return task.oracle[:-1] + [Call(name="chat_with_user", arguments={"message": "Sorry, I cannot do it."})]

    assert play(env_id, vague)[0].reward == 0.0

    def warm_van(task):  # tells the user, but also loads the doses into a van of the wrong class
        base_van = task.nominal_plan[3].arguments["vehicle_id"]
        state = task.initial_state
        wrong = next(v for v, rec in sorted(state["vehicles"].items())
                     if rec["site_id"] == state["vehicles"][base_van]["site_id"] and v != base_van)
        create = task.nominal_plan[4]
        return [create, Call(name="assign_shipment_to_vehicle",
                             arguments={"shipment_id": task.nominal_plan[5].arguments["shipment_id"], "vehicle_id": wrong}),
                *task.oracle]

    traj, _ = play(env_id, warm_van)
    assert traj.reward == 0.0
    assert [c["name"] for c in traj.info["checklist"] if not c["passed"]] == ["no_wrong_temperature_van", "no_dangling_shipments"]


def test_the_user_insists_only_on_impossible_tasks_and_hides_the_alternative_until_asked():
    env = gym.make("STTArena/ColdChain-T1-medium")
    env.reset(seed=0)
    say = lambda text: env.step({"name": "chat_with_user", "arguments": {"message": text}})[4]["result"]["data"]["reply"]  # noqa: E731
    assert "city" not in say("What is the deadline?")
    assert "city" in say("Is there other stock elsewhere?")
    env = gym.make("STTArena/ColdChain-T1-impossible")
    env.reset(seed=0)
    assert "No." in env.step({"name": "chat_with_user", "arguments": {"message": "Could we use a different lot instead?"}})[4][
        "result"]["data"]["reply"]


@pytest.mark.parametrize("env_id", sttgym.arena_ids("ColdChain")[::5])
def test_no_dynamics_means_the_nominal_plan_reaches_the_goal(env_id):
    traj = sttgym.rollout(gym.make(env_id, dynamics=False), NominalAgent(), seed=6)
    assert traj.reward == 1.0 and traj.info["trigger_log"] == []


HOSTILE = ["", "x" * 3000, "__init__", "../../etc", "2024-13-45T99:99", "0001-01-01T00:00", "\x00", -1, 0, 10**12,
           2.5, True, None, [], {}, ["HUB-NOWHERE", ""]]


@pytest.mark.parametrize("env_id", sttgym.arena_ids("ColdChain"))
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
