"""CarRental: tool behaviour on a hand-made city, and the scenario stories followed step by step."""

from __future__ import annotations

import copy
import json
import re
from datetime import datetime

import gymnasium as gym
import pytest

from tests.arena.harness import WorldHarness, second_changes, second_changes_with_the_story
from tests.arena.withheld import assert_unpredictable, assert_withheld_story, question, unasked
import sttgym  # noqa: F401  (registers the ids)
from sttgym.agents import NominalAgent, OracleAgent, PlanAgent
from sttgym.agents.probes import BlindWriter
from sttgym.envs.arena.carrental.world import FLIGHT_SLACK, CarRentalWorld
from sttgym.judge.rule import names_fact
from sttgym.rollout import rollout
from sttgym.task import Call, resolve
from sttgym.user import RuleUser

START = "2024-05-06T09:00"


def city() -> dict:
    """Two depots in a business zone 20 minutes apart (or 50 round the back), and an airport desk."""
    return {
        "zones": {"ZONE-C": {"name": "Centre", "kind": "business", "demand": "normal", "surge": []},
                  "ZONE-A": {"name": "Airport", "kind": "airport", "demand": "normal", "surge": []}},
        "depots": {
            "DEP-X": {"name": "Xavier St", "zone": "ZONE-C", "opens": "07:00", "closes": "20:00", "status": "open",
                      "hold_minutes": 30, "charger": False, "notice": ""},
            "DEP-Y": {"name": "Yard", "zone": "ZONE-C", "opens": "07:00", "closes": "20:00", "status": "open",
                      "hold_minutes": 30, "charger": True, "notice": ""},
            "DEP-A": {"name": "Airport", "zone": "ZONE-A", "opens": "06:00", "closes": "23:00", "status": "open",
                      "hold_minutes": 30, "charger": True, "notice": ""}},
        "roads": {"R1": {"a": "DEP-X", "b": "DEP-Y", "minutes": 20, "open": True},
                  "R2": {"a": "DEP-Y", "b": "DEP-A", "minutes": 25, "open": True},
                  "R3": {"a": "DEP-A", "b": "DEP-X", "minutes": 25, "open": True}},
        "vehicles": {
            "VH-1": {"class": "compact", "energy": "petrol", "fuel_pct": 90, "mileage_km": 1000, "status": "available",
                     "depot": "DEP-X", "available_from": None},
            "VH-2": {"class": "compact", "energy": "electric", "fuel_pct": 15, "mileage_km": 2000,
                     "status": "available", "depot": "DEP-Y", "available_from": None},
            "VH-3": {"class": "van", "energy": "petrol", "fuel_pct": 80, "mileage_km": 3000, "status": "available",
                     "depot": "DEP-X", "available_from": None}},
        "customers": {"CUS-1": {"name": "Ada", "licence": ["B"], "licence_expires": "2030-01-01", "tier": "gold",
                                "payment_limit": 200}},
        "reservations": {},
        "promotions": {"HALF": {"zone": "ZONE-C", "vehicle_class": None, "energy": None, "discount_pct": 50,
                                "quota": 1, "used": 0, "note": ""}},
        "transfers": {},
        "flights": {"LX1": {"depot": "DEP-A", "origin": "Oslo", "arrives": "2024-05-06T14:00", "status": "on time"}},
        "rates": {"economy": 40, "compact": 50, "suv": 80, "van": 90, "premium": 150},
        "counters": {"reservation": 100, "transfer": 10},
    }


class Harness(WorldHarness):
    world_class, start, default_state = CarRentalWorld, START, staticmethod(city)


@pytest.fixture
def w() -> Harness:
    return Harness()


TRIP = {"pickup_time": "2024-05-07T10:00", "return_time": "2024-05-08T10:00"}


def hold(w: Harness, vehicle: str = "VH-1", depot: str = "DEP-X", **times) -> dict:
    return w("hold_vehicle", customer_id="CUS-1", vehicle_id=vehicle, pickup_depot_id=depot, **(times or TRIP))


# ----------------------------------------------------------------------- tools


def test_a_hold_then_confirm_books_the_car_at_the_loyalty_price(w):
    held = hold(w)
    assert held["success"] and held["data"]["hold_expires"] == "2024-05-06T09:30"
    done = w("confirm_reservation", reservation_id=held["data"]["reservation_id"])
    assert done["success"] and done["data"]["price"]["total"] == 45  # one day at 50, gold tier 10% off
    search = w("search_available_vehicles", depot_id="DEP-X", vehicle_class="compact", **TRIP)
    assert search["data"]["vehicles"] == []  # no longer free for that window


@pytest.mark.parametrize("change, error", [
    ({"customer_id": "CUS-404"}, "no customer"),
    ({"vehicle_id": "VH-2"}, "stationed at DEP-Y"),
    ({"vehicle_id": "VH-3"}, "licence does not cover class van"),
    ({"pickup_time": "2024-05-07T22:00"}, "closed at"),
    ({"return_time": "2024-05-07T09:00"}, "after the pickup"),
    ({"pickup_time": "2024-05-06T08:00"}, "in the past"),
    ({"pickup_time": "2024-05-07T10:00+02:00"}, "ISO timestamps"),
])
def test_a_bad_hold_is_refused_and_changes_nothing(w, change, error):
    before = copy.deepcopy(w.world.state)
    args = {"customer_id": "CUS-1", "vehicle_id": "VH-1", "pickup_depot_id": "DEP-X", **TRIP, **change}
    result = w("hold_vehicle", **args)
    assert not result["success"] and error in result["error"]
    assert w.world.state == before


def test_a_hold_lapses_after_the_depot_hold_time_and_then_blocks_nothing(w):
    rid = hold(w)["data"]["reservation_id"]
    w.clock.advance(31)
    assert w("get_reservation", reservation_id=rid)["data"]["status"] == "expired"
    refused = w("confirm_reservation", reservation_id=rid)
    assert not refused["success"] and "expired" in refused["error"]
    assert hold(w)["success"]  # the car is free again
    # Cancelling the lapsed hold says it held nothing: the car is now on the new hold, which stays live.
    cancelled = w("cancel_reservation", reservation_id=rid)
    assert cancelled["success"] and "held no vehicle" in cancelled["message"]
    assert "VH-1" not in cancelled["message"] and not hold(w)["success"]


def test_confirming_over_the_payment_limit_fails_and_a_promotion_is_used_once(w):
    w.world.state["customers"]["CUS-1"]["payment_limit"] = 30
    first, second = hold(w)["data"]["reservation_id"], None
    before = copy.deepcopy(w.world.state)
    refused = w("confirm_reservation", reservation_id=first)
    assert not refused["success"] and "payment limit" in refused["error"] and w.world.state == before
    assert w("confirm_reservation", reservation_id=first, promo_code="HALF")["success"]
    assert w.world.state["promotions"]["HALF"]["used"] == 1
    w.world.state["vehicles"]["VH-2"]["depot"] = "DEP-X"
    second = hold(w, "VH-2")["data"]["reservation_id"]
    result = w("confirm_reservation", reservation_id=second, promo_code="HALF")
    assert not result["success"] and "no quota left" in result["error"]


def test_a_surge_window_raises_the_price_of_pickups_inside_it(w):
    def quote() -> int:
        return w("get_rental_quote", depot_id="DEP-X", vehicle_class="compact", **TRIP)["data"]["total"]

    calm = quote()
    w.world.state["zones"]["ZONE-C"]["surge"] = [{"start": "2024-05-07T09:00", "end": "2024-05-07T11:00",
                                                   "multiplier": 1.5}]
    assert quote() == round(calm * 1.5)


def test_a_transfer_takes_the_open_route_and_the_car_is_only_free_once_there(w):
    moved = w("transfer_vehicle", vehicle_id="VH-1", to_depot_id="DEP-Y")
    assert moved["data"]["path"] == ["DEP-X", "DEP-Y"] and moved["data"]["arrives"] == "2024-05-06T09:20"
    soon = {"pickup_time": "2024-05-06T09:10", "return_time": "2024-05-06T18:00"}
    assert not hold(w, "VH-1", "DEP-Y", **soon)["success"]
    w.world.state["roads"]["R1"]["open"] = False
    back = w("transfer_vehicle", vehicle_id="VH-2", to_depot_id="DEP-X")
    assert back["data"]["path"] == ["DEP-Y", "DEP-A", "DEP-X"]  # 50 minutes round the back
    assert w("plan_route", origin_id="DEP-X", destination_id="DEP-Y")["data"]["minutes"] == 50


def test_no_transfer_out_of_a_locked_down_depot_nor_of_a_car_booked_elsewhere(w):
    w.world.state["depots"]["DEP-Y"]["status"] = "locked_down"
    assert "locked_down" in w("transfer_vehicle", vehicle_id="VH-2", to_depot_id="DEP-X")["error"]
    hold(w)
    refused = w("transfer_vehicle", vehicle_id="VH-1", to_depot_id="DEP-A")
    assert not refused["success"] and "booked for pickup elsewhere" in refused["error"]


def test_an_electric_car_charges_only_where_a_charger_works(w):
    assert w("refuel_vehicle", vehicle_id="VH-2")["success"]
    w.world.state["vehicles"]["VH-2"].update(fuel_pct=15, depot="DEP-X")
    assert "no working charger" in w("refuel_vehicle", vehicle_id="VH-2")["error"]


def test_check_out_needs_the_pickup_hour_a_fuelled_car_and_a_confirmed_booking(w):
    soon = {"pickup_time": "2024-05-06T09:30", "return_time": "2024-05-06T18:00"}
    rid = hold(w, **soon)["data"]["reservation_id"]
    assert "not confirmed" in w("check_out_vehicle", reservation_id=rid)["error"]
    w("confirm_reservation", reservation_id=rid)
    w.world.state["vehicles"]["VH-1"]["fuel_pct"] = 10
    assert "refuel" in w("check_out_vehicle", reservation_id=rid)["error"]
    w("refuel_vehicle", vehicle_id="VH-1")
    assert w("check_out_vehicle", reservation_id=rid)["success"]
    assert w.world.state["vehicles"]["VH-1"]["status"] == "rented"
    assert w("check_in_vehicle", reservation_id=rid, depot_id="DEP-Y")["success"]
    assert w.world.state["vehicles"]["VH-1"]["depot"] == "DEP-Y"


def test_a_swap_keeps_the_class_and_a_reschedule_rechecks_the_car(w):
    w.world.state["vehicles"]["VH-2"]["depot"] = "DEP-X"
    rid = hold(w)["data"]["reservation_id"]
    assert "class van" in w("swap_reservation_vehicle", reservation_id=rid, vehicle_id="VH-3")["error"]
    assert w("swap_reservation_vehicle", reservation_id=rid, vehicle_id="VH-2")["success"]
    w.world.state["vehicles"]["VH-2"]["available_from"] = "2024-05-07T12:00"
    late = w("reschedule_reservation", reservation_id=rid, pickup_time="2024-05-07T11:00",
             return_time="2024-05-08T10:00")
    assert not late["success"] and "only available" in late["error"]



def test_a_demand_peak_releases_open_holds_and_shortens_new_ones(w):
    first = hold(w)["data"]["reservation_id"]
    w.world.apply({"name": "release_holds", "args": {"depot_id": "DEP-X", "hold_minutes": 5, "notice": "peak"}})
    assert w("get_reservation", reservation_id=first)["data"]["status"] == "expired"
    again = hold(w)
    assert again["success"] and again["data"]["hold_expires"] == "2024-05-06T09:09"  # placed 09:04, five minutes
    assert w("confirm_reservation", reservation_id=again["data"]["reservation_id"])["success"]


def test_the_request_checks_read_the_final_world(w):
    request = {"customer": "CUS-1", "vehicle_class": "compact", "depot_id": "DEP-X", "count": 1, "min_fuel": 50,
               "energy": "", **TRIP}
    holds = lambda name, **extra: w.world.holds({"name": name, "args": {"request": {**request, **extra}}})  # noqa
    assert not holds("booked") and holds("only_as_asked")  # nothing booked yet, nothing wrong either
    rid = hold(w)["data"]["reservation_id"]
    assert not holds("booked") and holds("only_as_asked")  # a hold is no booking, and no harm: it lapses
    w("confirm_reservation", reservation_id=rid)
    assert holds("booked") and holds("ready") and holds("only_as_asked")
    w.world.state["vehicles"]["VH-1"]["fuel_pct"] = 30
    assert holds("booked") and not holds("ready") and not holds("only_as_asked")  # not fuelled as asked
    assert not holds("only_as_asked", count=0)  # a booking nobody asked for
    # A pickup on landing is judged against the flight on the customer's profile and its arrival, both as they are
    # at the end, not as they were asked.
    flight = {"at_landing": True, "pickup_time": ""}
    w.world.state["vehicles"]["VH-1"]["fuel_pct"] = 90
    w.world.state["customers"]["CUS-1"]["flight"] = "LX1"
    w.world.state["flights"]["LX1"]["arrives"] = "2024-05-07T09:30"
    assert holds("booked", **flight)
    w.world.state["flights"]["LX1"]["arrives"] = "2024-05-07T08:30"
    assert not holds("booked", **flight)
    w.world.state["flights"]["LX2"] = {**w.world.state["flights"]["LX1"], "arrives": "2024-05-07T09:45"}
    w.world.state["customers"]["CUS-1"]["flight"] = "LX2"  # rebooked: the first flight no longer counts
    assert holds("booked", **flight)


# ---------------------------------------------------------------------- stories


def start(env_id: str, seed: int = 0):
    env = gym.make(env_id)
    env.reset(seed=seed)
    return env, env.unwrapped


def call(env, name: str, **arguments) -> tuple[dict, list]:
    _, _, _, _, info = env.step({"name": name, "arguments": arguments})
    return info["result"], [e["trigger"] for e in info["events"]]


def run(env, calls) -> list:
    """Make ``calls`` (plan steps, references to earlier results resolved); the triggers each one fired."""
    saved, fired = {}, []
    for c in calls:
        result, events = call(env, c.name, **resolve(c.arguments, saved))
        saved[c.save_as or ""] = result
        fired.append(events)
    return fired


def effect_value(task, trigger: str, field: str):
    """The value ``trigger`` sets at a path ending in ``field``."""
    t = next(t for t in task.triggers if t.name == trigger)
    return next(op.args["value"] for op in t.effect if op.args.get("path", [""])[-1] == field)


def test_t1_the_hold_policy_changes_only_once_a_hold_is_placed_and_a_prompt_rebooking_recovers():
    env, arena = start("STTArena/CarRental-T1-easy", seed=3)
    search, hold_call, profile, quote, confirm = arena.task.nominal_plan
    customer = hold_call.arguments["customer_id"]
    assert run(env, [profile, search, quote]) == [[], [], []]  # reading changes nothing
    assert call(env, "list_customer_reservations", customer_id=customer)[1] == []
    rid = call(env, hold_call.name, **hold_call.arguments)[0]["data"]["reservation_id"]
    assert arena.log.events[0]["trigger"] == "peak_hold_policy" and arena.log.events[0]["during"] == "hold_vehicle"
    assert "expired" in call(env, "confirm_reservation", reservation_id=rid)[0]["error"]
    seen = call(env, "list_customer_reservations", customer_id=customer)[0]["data"]["reservations"]
    assert [r["status"] for r in seen] == ["expired"]
    again = call(env, hold_call.name, **hold_call.arguments)[0]["data"]["reservation_id"]
    assert call(env, "confirm_reservation", reservation_id=again)[0]["success"]
    *_, info = env.step({"content": "Task Completed"})
    assert info["score"] == 1.0


@pytest.mark.parametrize("level", ["easy", "medium", "hard", "impossible"])
@pytest.mark.parametrize("seed", [3, 1_000_003, 1_000_028])
def test_t2_the_earlier_pickup_stays_within_the_desk_hours_and_the_oracle_makes_it(level, seed):
    env_id = f"STTArena/CarRental-T2-{level}"
    env, arena = start(env_id, seed=seed)
    flight = arena.task.nominal_plan[0].arguments["flight_number"]
    state = arena.task.initial_state
    depot = state["depots"][state["flights"][flight]["depot"]]
    early = effect_value(arena.task, "flight_rescheduled", "arrives")
    assert depot["opens"] <= early[11:] and early < state["flights"][flight]["arrives"]
    assert datetime.fromisoformat(state["flights"][flight]["arrives"]) - datetime.fromisoformat(early) > FLIGHT_SLACK
    assert rollout(gym.make(env_id), OracleAgent(), seed=seed).reward == 1.0


def test_t2_reading_the_flight_never_moves_it_but_booking_it_does():
    env, arena = start("STTArena/CarRental-T2-easy", seed=2)
    read, search, hold_call, quote, confirm = arena.task.nominal_plan
    before = call(env, read.name, **read.arguments)[0]["data"]["arrives"]
    assert run(env, [read, search, read]) == [[], [], []]
    held, fired = call(env, hold_call.name, **hold_call.arguments)
    assert fired == ["flight_rescheduled"]
    assert call(env, read.name, **read.arguments)[0]["data"]["arrives"] < before
    booked = call(env, confirm.name, reservation_id=held["data"]["reservation_id"])[0]
    assert booked["success"]  # the stale booking goes through...
    *_, info = env.step({"content": "Task Completed"})
    assert info["score"] == 0.0  # ...at a time the traveller is still in the air: the gate zeroes it
    assert not next(c for c in info["checklist"] if c["name"] == "only_as_asked")["passed"]


def test_t3_promotions_roll_over_at_midnight_and_not_before():
    env, arena = start("STTArena/CarRental-T3-easy", seed=1)
    flash = arena.task.nominal_plan[-1].arguments["promo_code"]
    midnight = arena.task.triggers[0].when.args["moment"]

    def fare(result: dict) -> dict:
        return next(p for p in result["data"]["promotions"] if p["promo_code"] == flash)

    while arena.clock.iso() < midnight:
        result, fired = call(env, "list_promotions")
        assert fired == [] and fare(result)["remaining"] > 0
    result, fired = call(env, "list_promotions")
    assert fired == ["midnight_quota_reset"] and fare(result)["status"] == "expired" and fare(result)["remaining"] == 0
    assert any(p["remaining"] > 0 and p["promo_code"] != flash for p in result["data"]["promotions"])


def test_s3_the_expressway_closes_when_the_car_is_dispatched_not_when_the_route_is_planned():
    env, arena = start("STTArena/CarRental-S3-easy", seed=2)
    search, plan, transfer, hold_call, _ = arena.task.nominal_plan
    before, fired = call(env, plan.name, **plan.arguments)
    assert fired == [] and before["data"]["closed_roads"] == []
    assert call(env, plan.name, **plan.arguments)[1] == []  # planning again closes nothing either
    moved, fired = call(env, transfer.name, **transfer.arguments)
    assert fired == ["expressway_closed"]
    assert moved["data"]["arrives"] > hold_call.arguments["pickup_time"]  # the detour misses the pickup
    after, _ = call(env, plan.name, **plan.arguments)
    assert after["data"]["minutes"] > before["data"]["minutes"] and after["data"]["closed_roads"]
    assert "only available" in call(env, hold_call.name, **hold_call.arguments)[0]["error"]


def test_st2_the_blackout_spreads_only_after_the_hub_fails():
    env, arena = start("STTArena/CarRental-ST2-hard", seed=4)
    search, charge, plan, transfer, *_ = arena.task.nominal_plan
    hub = search.arguments["depot_id"]
    sister = next(t for t in arena.task.triggers if t.name == "blackout_spreads").effect[0].args["path"][1]
    call(env, "get_depot_info", depot_id=sister)
    assert run(env, [search, charge, plan]) == [[], [], []]  # charged, nothing failed yet
    assert call(env, transfer.name, **transfer.arguments)[1] == ["hub_power_failure", "blackout_spreads"]
    vehicle = charge.arguments["vehicle_id"]
    assert call(env, "get_vehicle_status", vehicle_id=vehicle)[0]["data"]["fuel_pct"] < 80
    assert call(env, "get_depot_info", depot_id=sister)[0]["data"]["charger"] is False
    assert call(env, "get_depot_info", depot_id=hub)[0]["data"]["notice"]
    cut = call(env, "plan_route", origin_id=sister, destination_id=plan.arguments["destination_id"])[0]["data"]
    assert cut["reachable"] is False and cut["closed_roads"]


def test_st3_the_late_car_can_still_be_driven_over_from_the_dropoff_in_time_on_easy():
    env, arena = start("STTArena/CarRental-ST3-easy", seed=5)
    search, hold_call, quote, confirm = arena.task.nominal_plan
    call(env, search.name, **search.arguments)
    rid = call(env, hold_call.name, **hold_call.arguments)[0]["data"]["reservation_id"]
    assert [e["trigger"] for e in arena.log.events] == ["late_dropoff"]
    assert "stationed at" in call(env, "confirm_reservation", reservation_id=rid)[0]["error"]
    car = call(env, "get_vehicle_status", vehicle_id=hold_call.arguments["vehicle_id"])[0]["data"]
    moved = call(env, "transfer_vehicle", vehicle_id=hold_call.arguments["vehicle_id"],
                 to_depot_id=hold_call.arguments["pickup_depot_id"])[0]["data"]
    assert moved["departs"] == car["available_from"] and moved["arrives"] <= hold_call.arguments["pickup_time"]
    assert call(env, "confirm_reservation", reservation_id=rid)[0]["success"]


@pytest.mark.parametrize("conflict", ["T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3"])
def test_the_blind_writer_meets_every_trigger_and_is_disrupted(conflict):
    env = gym.make(f"STTArena/CarRental-{conflict}-medium")
    traj = rollout(env, BlindWriter(), seed=7)
    fired = {e["trigger"] for e in traj.info["trigger_log"]}
    assert fired == {t.name for t in env.unwrapped.task.triggers}
    assert traj.reward == 0.0
    # Every trigger's activation names only writes: reading is how a change is seen, never what causes it.
    tools = env.unwrapped.tools
    assert all(tools[name].mutates for t in env.unwrapped.task.triggers for name in t.activation)


@pytest.mark.parametrize("conflict", ["T1", "T2", "S1", "S2", "ST1", "ST3"])
def test_impossible_tasks_need_the_blocking_fact_and_punish_a_wrong_booking(conflict):
    env_id = f"STTArena/CarRental-{conflict}-impossible"
    assert rollout(gym.make(env_id), OracleAgent(), seed=0).reward == 1.0
    assert rollout(gym.make(env_id), NominalAgent(), seed=0).reward == 0.0  # books blindly, never says it can't
    # The oracle's refusal without the fact it names is a refusal that rests on nothing.
    env, arena = start(env_id, seed=0)
    vague = [c if c.name != "chat_with_user" else c.model_copy(update={"arguments": {
        "message": "I'm sorry, but I cannot make this booking for you; something changed and it no longer works."}})
        for c in arena.task.oracle]
    assert rollout(gym.make(env_id), PlanAgent(vague), seed=0).reward == 0.0
    # Booking some other car of any class there anyway (not what the user asked for) zeroes the verdict.
    asked = next(c for c in arena.task.nominal_plan if c.name == "hold_vehicle").arguments
    times = {k: asked[k] for k in ("pickup_time", "return_time")}
    others, _ = call(env, "search_available_vehicles", depot_id=asked["pickup_depot_id"], **times)
    booked = False
    for vehicle in others["data"]["vehicles"]:
        held, _ = call(env, "hold_vehicle", **{**asked, "vehicle_id": vehicle["vehicle_id"]})
        if held["success"]:
            booked = call(env, "confirm_reservation", reservation_id=held["data"]["reservation_id"])[0]["success"]
        if booked:
            break
    assert booked
    run(env, [c for c in arena.task.oracle if c.name != "chat_with_user"])
    run(env, [c for c in arena.task.oracle if c.name == "chat_with_user"])
    *_, info = env.step({"content": "Task Completed"})
    assert info["score"] == 0.0 and not next(c for c in info["checklist"] if c["name"] == "no_wrong_booking")["passed"]


@pytest.mark.parametrize("conflict, refusal", [
    ("T1", "your hold was released in a demand peak and the car was booked online by someone else"),
    ("T2", "your flight was rescheduled earlier and no car is free when it lands"),
    ("T3", "the flash fare has expired at the midnight reset and no other fare fits your card"),
    ("S1", "a rebalancing job relocated the car and a corporate booking holds it there"),
    ("S2", "the hub is locked down for a safety inspection and nothing may leave it"),
    ("S3", "the expressway is closed and the detour arrives too late"),
    ("ST1", "with the commuter peak both cars moved and were booked there"),
    ("ST2", "a power failure left the chargers offline, so no car can be charged"),
    ("ST3", "the car is returned late at another depot and the other one is in the workshop"),
])
def test_a_refusal_that_names_the_change_in_words_names_the_blocking_fact(conflict, refusal):
    """An honest refusal need not repeat an id or a time: the change said in a few words names it too."""
    task = start(f"STTArena/CarRental-{conflict}-impossible", seed=3)[1].task
    assert names_fact(f"I'm sorry, I can't book this: {refusal}.", task.impossibility.blocking_facts)
    assert not names_fact("I'm sorry, I can't book this: something changed.", task.impossibility.blocking_facts)


# What a careful agent tells the user on each impossible story, in plain words: the change, and why the other option
# it checked fails too (the story's docstring says where that shows).
CHANGE_AND_WHY = {
    "T1": ("your hold was released in a demand peak and another customer took the car online",
           "is too far away to get here in time"),
    "T2": ("your flight now lands earlier", "is reserved for another customer's pickup at its own depot"),
    "T3": ("the flash fare has expired at the midnight reset", "still leaves the price over your card limit"),
    "S1": ("a rebalancing job relocated your car to another depot",
           "is held there by a corporate booking, and the only other one is cut off by road closures"),
    "S2": ("the hub is locked down for a safety inspection", "is reserved for another customer's pickup there"),
    "S3": ("the expressway is closed, so the detour arrives too late",
           "is only back from a rental shortly before your pickup"),
    "ST1": ("with the commuter peak both of the depot's cars moved away", "was booked there by another customer"),
    "ST2": ("a power failure at the hub damaged the car's battery", "is reserved for another customer's pickup there"),
    "ST3": ("the car is returned late, at another depot", "is only back from a rental shortly before your pickup"),
}


def refused(env_id: str, seed: int, message: str) -> dict:
    """The checklist of the oracle's reads (the change and the other options read), then ``message`` to the user."""
    task = start(env_id, seed=seed)[1].task
    reads = [c for c in task.oracle if c.name != "chat_with_user"]
    plan = reads + [Call(name="chat_with_user", arguments={"message": message})]
    traj = rollout(gym.make(env_id), PlanAgent(plan), seed=seed)
    return {"score": traj.reward, **{c["name"]: c["passed"] for c in traj.info["checklist"]}}


@pytest.mark.parametrize("conflict", list(CHANGE_AND_WHY))
@pytest.mark.parametrize("seed", [0, 5])
def test_an_impossible_refusal_must_say_why_the_other_options_fail_too(conflict, seed):
    """The change alone does not rule everything out: the other option the world offers fails for a fact found only
    by checking it. A refusal that names the change and why that option fails (by its id, or in plain words) scores
    1.0; one that names the change alone fails ``named_why_no_alternative`` and scores 0."""
    env_id = f"STTArena/CarRental-{conflict}-impossible"
    change, why = CHANGE_AND_WHY[conflict]
    other = start(env_id, seed=seed)[1].task.impossibility.no_alternative[0]
    for message in (f"I'm sorry, I can't book this for you: {change}, and the other option, {other}, {why}.",
                    f"I'm sorry, I can't book this for you: {change}, and the other one {why}."):
        assert refused(env_id, seed, message)["score"] == 1.0, message
    alone = refused(env_id, seed, f"I'm sorry, I can't book this for you: {change}.")
    assert alone["score"] == 0.0 and not alone["named_why_no_alternative"]
    assert alone["observed_change"] and alone["informed_user"] and alone["named_blocking_fact"]


@pytest.mark.parametrize("conflict", ["T1", "T2", "S1", "S2", "S3", "ST2", "ST3"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_other_car_cannot_be_brought_in_time_even_sent_first_thing(conflict, seed):
    """The car that rules out an impossible story's other option really fails: sent to the pickup depot as the very
    first call (before any change, so no agent could send it sooner), then held and confirmed, it books nothing."""
    env_id = f"STTArena/CarRental-{conflict}-impossible"
    env, arena = start(env_id, seed=seed)
    task, cars = arena.task, arena.task.initial_state["vehicles"]
    asked = next(c for c in task.nominal_plan if c.name == "hold_vehicle").arguments
    others = [v for v in task.impossibility.no_alternative if v in cars]
    assert others
    for vehicle in others:
        if cars[vehicle]["depot"] != asked["pickup_depot_id"]:
            call(env, "transfer_vehicle", vehicle_id=vehicle, to_depot_id=asked["pickup_depot_id"])
        held, _ = call(env, "hold_vehicle", **{**asked, "vehicle_id": vehicle})
        assert not held["success"] or not call(env, "confirm_reservation",
                                               reservation_id=held["data"]["reservation_id"])[0]["success"]


@pytest.mark.parametrize("extra", ["cancel another customer's booking", "hold a second car"])
def test_an_extra_write_after_the_oracle_fails_the_collateral_gate(extra):
    env, arena = start("STTArena/CarRental-S1-easy", seed=1)
    run(env, arena.task.oracle)
    state, customer = arena.world.state, arena.task.nominal_plan[1].arguments["customer_id"]
    if extra == "hold a second car":
        depot, vehicle = next((x["depot"], v) for v, x in sorted(state["vehicles"].items())
                              if not any(r["vehicle"] == v for r in state["reservations"].values()))
        times = {k: arena.task.nominal_plan[1].arguments[k] for k in ("pickup_time", "return_time")}
        result = call(env, "hold_vehicle", customer_id=customer, vehicle_id=vehicle, pickup_depot_id=depot, **times)
    else:
        other = next(r for r, x in sorted(state["reservations"].items()) if x["customer"] != customer)
        result = call(env, "cancel_reservation", reservation_id=other)
    assert result[0]["success"]
    *_, info = env.step({"content": "Task Completed"})
    assert info["score"] == 0.0
    assert not next(c for c in info["checklist"] if c["name"] == "no_collateral_change")["passed"]


def test_s2_medium_the_car_called_back_from_the_road_leaves_no_transfer_on_its_way():
    # A round-nine reviewer found the recalled car's transfer still on its way in the final state.
    for seed in range(3):
        env = gym.make("STTArena/CarRental-S2-medium")
        traj = rollout(env, OracleAgent(), seed=seed)
        world = env.unwrapped.world
        first = next(c.arguments["vehicle_id"] for c in env.unwrapped.task.nominal_plan if c.name == "transfer_vehicle")
        recalled = [t for t in world.transfers.values() if t["vehicle"] == first]
        assert traj.reward == 1.0 and recalled and all(t["status"] == "recalled" for t in recalled), recalled
        assert world.vehicles[first]["depot"] == recalled[0]["origin"] and not world.vehicles[first]["available_from"]


def test_a_stored_task_replays_and_each_seed_draws_a_different_city():
    env, arena = start("STTArena/CarRental-S2-hard", seed=11)
    stored = json.loads(arena.task.model_dump_json())
    again = gym.make("STTArena/CarRental-S2-hard")
    again.reset(options={"task": stored})
    assert again.unwrapped.task.initial_state == arena.task.initial_state
    assert rollout(again, OracleAgent(), seed=11).reward == 1.0
    _, other = start("STTArena/CarRental-S2-hard", seed=12)
    assert other.task.initial_state != arena.task.initial_state


def other_car_policy(env, seed: int) -> float:
    """A cheap policy that ignores the change: the nominal plan, but each hold takes a car of the class other than
    the one the plan names, whenever the depot lists one (so a change aimed at the planned car never meets it)."""
    env.reset(seed=seed)
    task, saved = env.unwrapped.task, {}
    cls = next(c for c in task.nominal_plan if c.name == "search_available_vehicles").arguments["vehicle_class"]
    for c in task.nominal_plan:
        args = resolve(c.arguments, saved)
        if c.name == "hold_vehicle":
            listed, _ = call(env, "search_available_vehicles", depot_id=args["pickup_depot_id"], vehicle_class=cls,
                             pickup_time=args["pickup_time"], return_time=args["return_time"])
            others = [v["vehicle_id"] for v in listed["data"]["vehicles"] if v["vehicle_id"] != args["vehicle_id"]]
            args = {**args, "vehicle_id": others[0]} if others else args
        saved[c.save_as or ""] = call(env, c.name, **args)[0]
    *_, info = env.step({"content": "Task Completed"})
    return info["score"]


@pytest.mark.parametrize("env_id", ["STTArena/CarRental-S1-easy", "STTArena/CarRental-S1-hard"])
def test_the_relocation_meets_whichever_car_is_held(env_id):
    """Holding the depot's other car first dodges nothing: the job moves that car instead, the stale confirmation
    fails naming its new depot (so the change counts as seen without any read) and the stale plan earns nothing,
    while the listed recovery from that first choice scores 1.0."""
    env = gym.make(env_id)
    for seed in range(3):
        assert other_car_policy(env, seed) == 0.0
        arena = env.unwrapped
        planned = next(c for c in arena.task.nominal_plan if c.name == "hold_vehicle").arguments
        held = arena.log.called("hold_vehicle")[0]["arguments"]["vehicle_id"]
        assert held != planned["vehicle_id"]
        assert arena.world.state["vehicles"][held]["depot"] != planned["pickup_depot_id"]
        assert arena.log.noticed("vehicle_relocated")
        assert "stationed at" in arena.log.calls[-1]["result"]["error"]
        assert rollout(gym.make(env_id), PlanAgent(arena.task.alternatives[0]), seed=seed).reward == 1.0


def test_a_booking_the_change_never_met_scores_as_well_as_a_recovery():
    """ST1-easy: the peak moves the planned car before the first hold; the car it leaves behind, held first,
    serves the request as well, and the outcome is what is scored."""
    env = gym.make("STTArena/CarRental-ST1-easy")
    for seed in range(3):
        assert other_car_policy(env, seed) == 1.0
        assert not env.unwrapped.log.noticed("commuter_peak_shift")


@pytest.mark.parametrize("conflict", ["T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3"])
def test_the_user_answers_alike_on_every_level(conflict):
    """A proposed change of plan gets the user's hard constraints (or the withheld fact it names the topic of) on
    every level, feasible or not, and every other question the same kind of answer (the same topic's, or the same
    words): the answers never tell whether the request can be met."""
    replies = set()
    for level in ("easy", "medium", "hard", "impossible"):
        task = start(f"STTArena/CarRental-{conflict}-{level}", seed=4)[1].task
        user, answers = RuleUser(task.profile), [*task.profile.withheld, *task.profile.clarifications]
        # a proposal gets the hard constraints, or the withheld fact whose topic it names (alike on every level)
        offer = user.reply("Could I book a different car instead?")
        assert offer and offer in (task.profile.insist, *[w.text for w in task.profile.withheld])
        cls = next(c.arguments["vehicle_class"] for c in task.nominal_plan if "vehicle_class" in c.arguments)

        def kind(reply: str) -> object:  # the topic an answer is on, else its words
            return next((tuple(a.keywords) for a in answers if a.text == reply),
                        re.sub(rf"\S*\d\S*|{cls}", "#", reply, flags=re.I))

        replies.add(tuple(kind(user.reply(q)) for q in ("Do you have a requirement for the car?",
                                                         "Is there a deadline?", "What is the pickup time?")))
    assert len(replies) == 1, replies


# ------------------------------------------------- facts only the user knows


def other_cars(task) -> list[dict[str, str]]:
    """The oracle's recovery with the other car its question offers in place of the one the user's answer picks."""
    asked = question(task)
    offered = re.findall(r"VH-\d+", asked.arguments["message"])
    after = task.oracle[task.oracle.index(asked):]
    wanted = next(c for c in after if c.name == "transfer_vehicle").arguments["vehicle_id"]
    return [{wanted: other} for other in offered if other != wanted]


@pytest.mark.parametrize("env_id", [f"STTArena/CarRental-{c}-{lvl}" for c in ("S2", "ST3")
                                    for lvl in ("medium", "hard")])
def test_the_users_requirement_for_another_car_is_theirs_to_say(env_id):
    def others(env, seed):  # the oracle's recovery with the other car, unasked
        return [unasked(env.unwrapped.task, swap) for swap in other_cars(env.unwrapped.task)]

    assert_withheld_story(env_id, "ask me first: I have a requirement.", "asked_user", others, seeds=(0, 1, 2, 1000000))


def car_cues(task) -> dict[str, bool]:
    """Whether the user's car is the one a guess would take: listed first, like the planned car in energy, lower
    mileage."""
    (swap,) = other_cars(task)
    (mine, other), cars = next(iter(swap.items())), task.initial_state["vehicles"]
    planned = next(c for c in task.nominal_plan if c.name == "hold_vehicle").arguments["vehicle_id"]
    return {"listed first": mine < other, "same energy": cars[mine]["energy"] == cars[planned]["energy"],
            "lower mileage": cars[mine]["mileage_km"] < cars[other]["mileage_km"]}


@pytest.mark.parametrize("env_id", ["STTArena/CarRental-S2-hard", "STTArena/CarRental-ST3-medium"])
def test_nothing_the_tools_show_tells_which_car_the_user_needs(env_id):
    assert_unpredictable(env_id, lambda env, seed: car_cues(env.unwrapped.task))


@pytest.mark.parametrize("conflict", ["S1", "S2", "S3", "ST1", "ST2", "ST3", "T1", "T3"])
def test_at_hard_the_customer_is_rebooked_once_the_recovery_begins_and_only_the_profile_shows_it(conflict):
    # The second change waits for the recovery's first write after the story's change, whichever car it takes, and
    # leaves every write working: a pickup kept at the first flight's arrival leaves the customer waiting an hour
    # and more, though that flight still lands on time.
    hard = f"STTArena/CarRental-{conflict}-hard"
    for env, seed, task, rebooked in second_changes(hard, "flight_rebooked", "get_customer_profile"):
        first = task.initial_state["customers"][rebooked.observable.args["customer_id"]]["flight"]
        assert "customer profile" in task.query and first not in task.query
        kept = [c for c in task.oracle if c.name != "reschedule_reservation"]
        assert rollout(env, PlanAgent(kept), seed=seed).reward == 0.0
        assert env.unwrapped.world.state["flights"][first]["status"] == "on time"


@pytest.mark.parametrize("conflict", ["S1", "ST2", "T3"])
def test_at_medium_the_customer_is_rebooked_with_the_story_s_change(conflict):
    # Medium's rebooking comes in the call that brings the story's change: the profile read after it shows the later
    # flight, and the pickup kept at the first flight's arrival fails the customer as at hard.
    for env, seed, task, rebooked in second_changes_with_the_story(f"STTArena/CarRental-{conflict}-medium",
                                                                   "flight_rebooked", "get_customer_profile"):
        customer = rebooked.observable.args["customer_id"]
        first = task.initial_state["customers"][customer]["flight"]
        kept = [c for c in task.oracle if c.name != "reschedule_reservation"]
        assert rollout(env, PlanAgent(kept), seed=seed).reward == 0.0
        assert env.unwrapped.world.state["customers"][customer]["flight"] != first


@pytest.mark.parametrize("level", ["easy", "impossible"])
def test_at_easy_and_impossible_the_customer_lands_on_the_flight_the_profile_shows(level):
    for conflict in ("S1", "ST3"):
        env = gym.make(f"STTArena/CarRental-{conflict}-{level}")
        for seed in range(2):
            env.reset(seed=seed)
            task = env.unwrapped.task
            assert "flight_rebooked" not in [t.name for t in task.triggers] and "customer profile" in task.query
