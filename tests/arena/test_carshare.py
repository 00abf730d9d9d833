"""CarShare: tool behaviour on a hand-made city, the world's rules, and the cheap shortcuts the stories defeat."""

from __future__ import annotations

import copy
import json
import re

import gymnasium as gym
import pytest

from tests.arena.harness import WorldHarness, second_changes, second_changes_with_the_story
from tests.arena.withheld import assert_unpredictable, assert_withheld_story, question, unasked
from sttgym.agents import NominalAgent, OracleAgent, PlanAgent  # importing sttgym registers the ids
from sttgym.agents.probes import BlindWriter
from sttgym.envs.arena.carshare.generator import APPOINTMENT
from sttgym.envs.arena.carshare.world import CarShareWorld, walk_minutes
from sttgym.judge.rule import names_fact
from sttgym.rollout import rollout
from sttgym.task import Call, resolve
from sttgym.user import RuleUser

START = "2025-03-04T18:00"
CONFLICTS = ["T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3"]
APPOINTED = ["T2", "T3", "S1", "S2", "ST1", "ST2", "ST3"]  # the stories whose member drives to an appointment


def city() -> dict:
    """Home ZN-A, its neighbour ZN-B (8 minutes' walk) and the business zone ZN-C (30 minutes' walk)."""
    zone = {"demand": "normal", "hold_minutes": 15, "parking": "open", "petrol_allowed": True, "surcharge": 0,
            "notice": ""}
    return {
        "zones": {"ZN-A": {"name": "A", "kind": "residential", **zone},
                  "ZN-B": {"name": "B", "kind": "residential", **zone},
                  "ZN-C": {"name": "C", "kind": "business", **zone, "surcharge": 2}},
        "links": {"LK-1": {"a": "ZN-A", "b": "ZN-B", "minutes": 3, "walk": 8, "open": True},
                  "LK-2": {"a": "ZN-B", "b": "ZN-C", "minutes": 7, "walk": 22, "open": True}},
        "spots": {"SP-1": {"zone": "ZN-A", "name": "Square", "kind": "street"},
                  "SP-2": {"zone": "ZN-B", "name": "Hub", "kind": "hub"},
                  "SP-3": {"zone": "ZN-C", "name": "Plaza", "kind": "street"}},
        "cars": {
            "CS-1": {"model": "VW Golf", "category": "compact", "seats": 5, "energy": "petrol", "level_pct": 80,
                     "zone": "ZN-A", "spot": "SP-1", "status": "available", "notice": ""},
            "CS-2": {"model": "Renault Zoe", "category": "compact", "seats": 5, "energy": "ev", "level_pct": 70,
                     "zone": "ZN-B", "spot": "SP-2", "status": "available", "notice": ""},
            "CS-3": {"model": "Ford Focus", "category": "compact", "seats": 5, "energy": "petrol", "level_pct": 9,
                     "zone": "ZN-A", "spot": "SP-1", "status": "available", "notice": ""},
            "CS-4": {"model": "VW Golf", "category": "compact", "seats": 5, "energy": "petrol", "level_pct": 90,
                     "zone": "ZN-C", "spot": "SP-3", "status": "maintenance", "notice": "brakes"}},
        "members": {"MB-1": {"name": "Ada", "plan": "basic", "age": 30, "licence_valid": True, "credit_limit": 20,
                             "home_zone": "ZN-A"},
                    "MB-2": {"name": "Bo", "plan": "plus", "age": 40, "licence_valid": True, "credit_limit": 50,
                             "home_zone": "ZN-C"},
                    "MB-3": {"name": "Cy", "plan": "basic", "age": 19, "licence_valid": False, "credit_limit": 50,
                             "home_zone": "ZN-A"}},
        "reservations": {}, "trips": {}, "charge_sessions": {},
        "chargers": {"CH-1": {"zone": "ZN-B", "spot": "SP-2", "status": "working", "slots": 1, "notice": ""}},
        "promotions": {"HALF-1": {"discount_pct": 50, "categories": ["compact"], "energy": None, "quota": 1,
                                  "used": 0, "resets_at": "2025-03-05T00:00", "note": ""}},
        "rates": {"basic": {"per_minute": 0.3, "per_km": 0.2}, "plus": {"per_minute": 0.25, "per_km": 0.15},
                  "business": {"per_minute": 0.35, "per_km": 0.1}, "km_per_minute": 0.6},
        "counters": {"reservation": 100, "trip": 10, "session": 1},
    }


class Harness(WorldHarness):
    world_class, start, default_state = CarShareWorld, START, staticmethod(city)

    def refused(self, name: str, error: str, **arguments) -> None:
        """``name`` fails with ``error`` and leaves the state as it was."""
        before = copy.deepcopy(self.world.state)
        result = self(name, **arguments)
        assert not result["success"] and error in result["error"], result
        assert self.world.state == before


@pytest.fixture
def w() -> Harness:
    return Harness()


# ----------------------------------------------------------------------- tools


def test_reserve_start_and_end_a_trip_prices_it_and_moves_the_car(w):
    found = w("find_cars", zone_id="ZN-A", max_walk_minutes=10, category="compact")["data"]["cars"]
    assert [c["car_id"] for c in found] == ["CS-1", "CS-3", "CS-2"]  # nearest first; CS-4 in maintenance
    assert found[-1]["walk_minutes"] == 8
    res = w("reserve_car", member_id="MB-1", car_id="CS-1")
    assert res["success"] and res["data"]["expires_at"] == "2025-03-04T18:17"  # made at 18:02, held 15 minutes
    assert w("get_car", car_id="CS-1")["data"]["status"] == "reserved"
    assert "CS-1" not in [c["car_id"] for c in w("find_cars", zone_id="ZN-A")["data"]["cars"]]
    quote = w("quote_price", member_id="MB-1", car_id="CS-1", destination_zone_id="ZN-C")["data"]
    assert (quote["drive_minutes"], quote["km"], quote["total"]) == (10, 6, 6.2)  # 10 x 0.3 + 6 x 0.2 + 2
    trip = w("start_trip", reservation_id=res["data"]["reservation_id"], member_zone_id="ZN-A",
             destination_zone_id="ZN-C")
    assert trip["success"] and w.world.state["cars"]["CS-1"]["status"] == "in_use"
    ended = w("end_trip", trip_id=trip["data"]["trip_id"], zone_id="ZN-C")
    assert ended["success"] and ended["data"]["price"] == 6.2
    assert w.world.state["cars"]["CS-1"]["zone"] == "ZN-C" and w.world.state["cars"]["CS-1"]["status"] == "available"


@pytest.mark.parametrize("args, error", [
    ({"member_id": "MB-9"}, "no member"),
    ({"member_id": "MB-3"}, "licence"),
    ({"car_id": "CS-9"}, "no car"),
    ({"car_id": "CS-4"}, "maintenance"),
    ({"car_id": "CS-3"}, "below the 15%"),
])
def test_a_bad_reservation_is_refused_and_changes_nothing(w, args, error):
    w.refused("reserve_car", error, **{"member_id": "MB-1", "car_id": "CS-1", **args})


def test_one_live_reservation_per_member_and_only_the_holder_cancels(w):
    rid = w("reserve_car", member_id="MB-1", car_id="CS-1")["data"]["reservation_id"]
    w.refused("reserve_car", "cancel it first", member_id="MB-1", car_id="CS-2")
    w.refused("cancel_reservation", "not held by", member_id="MB-2", reservation_id=rid)
    assert w("cancel_reservation", member_id="MB-1", reservation_id=rid)["success"]
    assert w("reserve_car", member_id="MB-1", car_id="CS-2")["success"]


def test_a_reservation_lapses_after_the_zone_hold_and_extends_only_once_while_live(w):
    rid = w("reserve_car", member_id="MB-1", car_id="CS-1")["data"]["reservation_id"]
    assert w("extend_reservation", reservation_id=rid)["data"]["expires_at"] == "2025-03-04T18:35"
    w.refused("extend_reservation", "already extended", reservation_id=rid)
    w.clock.advance(40)
    assert w("list_member_reservations", member_id="MB-1")["data"]["reservations"][0]["status"] == "expired"
    w.refused("start_trip", "expired", reservation_id=rid, member_zone_id="ZN-A", destination_zone_id="ZN-C")
    assert w("get_car", car_id="CS-1")["data"]["status"] == "available"  # a lapsed hold holds nothing


def test_a_trip_starts_only_where_the_car_stands_within_the_credit_limit_and_with_a_live_promotion(w):
    rid = w("reserve_car", member_id="MB-1", car_id="CS-2")["data"]["reservation_id"]
    w.refused("start_trip", "parked in ZN-B", reservation_id=rid, member_zone_id="ZN-A", destination_zone_id="ZN-C")
    w.world.state["members"]["MB-1"]["credit_limit"] = 3
    w.refused("start_trip", "credit limit", reservation_id=rid, member_zone_id="ZN-B", destination_zone_id="ZN-C")
    w.world.state["promotions"]["HALF-1"]["used"] = 1
    w.refused("start_trip", "used up", reservation_id=rid, member_zone_id="ZN-B", destination_zone_id="ZN-C",
              promo_code="HALF-1")
    w.world.state["promotions"]["HALF-1"]["used"] = 0
    assert w("start_trip", reservation_id=rid, member_zone_id="ZN-B", destination_zone_id="ZN-C",
             promo_code="HALF-1")["success"]  # 2.1 + 0.6 + 2 = 4.7, half off: 2.35
    assert w.world.state["promotions"]["HALF-1"]["used"] == 1


def test_an_open_trip_is_sent_elsewhere_within_the_credit_limit_and_the_ride_reads_the_profile_at_the_end(w):
    w.world.state["members"]["MB-1"].update(appointment_zone="ZN-C", appointment_note="client meeting")
    ride = {"member": "MB-1", "home": "ZN-A", "max_walk": 5, "category": "compact", "min_level": 30,
            "destination": "", "energy": "", "promo": False, "by": ""}
    holds = lambda name, **kw: w.world.holds({"name": name, "args": kw})  # noqa: E731
    rid = w("reserve_car", member_id="MB-1", car_id="CS-1")["data"]["reservation_id"]
    trip = w("start_trip", reservation_id=rid, member_zone_id="ZN-A", destination_zone_id="ZN-B")["data"]["trip_id"]
    assert holds("riding", ride=ride) and not holds("riding_to_appointment", ride=ride)
    w.world.state["members"]["MB-1"]["credit_limit"] = 5
    w.refused("change_destination", "credit limit", trip_id=trip, destination_zone_id="ZN-C")  # 6.2 over 5
    w.refused("change_destination", "no zone", trip_id=trip, destination_zone_id="ZN-X")
    w.world.state["members"]["MB-1"]["credit_limit"] = 20
    moved = w("change_destination", trip_id=trip, destination_zone_id="ZN-C")
    assert moved["success"] and moved["data"]["estimate"] == 6.2  # priced from where it started, as a fresh trip
    assert moved["data"]["planned_end_at"] == "2025-03-04T18:12"  # started 18:02, ten minutes' drive
    assert holds("riding_to_appointment", ride=ride)
    w.world.state["members"]["MB-1"]["appointment_zone"] = "ZN-B"  # the profile as it reads at the end decides
    assert not holds("riding_to_appointment", ride=ride) and holds("riding", ride=ride)
    w("end_trip", trip_id=trip, zone_id="ZN-C")
    w.refused("change_destination", "ended", trip_id=trip, destination_zone_id="ZN-B")


def test_a_trip_ends_only_where_parking_is_open_and_petrol_is_allowed(w):
    rid = w("reserve_car", member_id="MB-1", car_id="CS-1")["data"]["reservation_id"]
    tid = w("start_trip", reservation_id=rid, member_zone_id="ZN-A", destination_zone_id="ZN-B")["data"]["trip_id"]
    w.world.state["zones"]["ZN-B"].update(petrol_allowed=False, notice="low-emission zone LEZ-1")
    w.refused("end_trip", "bans petrol", trip_id=tid, zone_id="ZN-B")
    w.world.state["zones"]["ZN-C"]["parking"] = "no_parking"
    w.refused("end_trip", "no_parking", trip_id=tid, zone_id="ZN-C")
    assert w("end_trip", trip_id=tid, zone_id="ZN-A")["success"]
    w.refused("end_trip", "ended", trip_id=tid, zone_id="ZN-A")


def test_travel_times_follow_open_links(w):
    assert w("get_travel_time", from_zone_id="ZN-A", to_zone_id="ZN-C", mode="walk")["data"]["minutes"] == 30
    assert w("get_travel_time", from_zone_id="ZN-A", to_zone_id="ZN-C", mode="drive")["data"]["minutes"] == 10
    w.world.state["links"]["LK-2"]["open"] = False
    assert w("get_travel_time", from_zone_id="ZN-A", to_zone_id="ZN-C")["data"]["reachable"] is False
    w.refused("get_travel_time", "no zone", from_zone_id="ZN-A", to_zone_id="ZN-X")


def test_a_handoff_waits_for_the_previous_trip_and_fails_when_it_runs_late(w):
    s = w.world.state
    s["cars"]["CS-4"].update(status="in_use", notice="")
    s["trips"]["TRP-1"] = {"member": "MB-2", "car": "CS-4", "reservation": None, "start_zone": "ZN-C",
                           "destination": "ZN-A", "started_at": "2025-03-04T17:40", "level_at_start": 90,
                           "status": "open", "end_zone": None, "ended_at": None, "planned_end_at": "2025-03-04T18:05",
                           "promo": None, "estimate": 5, "price": None}
    w.refused("reserve_handoff", "not in the member's home zone", member_id="MB-2", trip_id="TRP-1")
    rid = w("reserve_handoff", member_id="MB-1", trip_id="TRP-1")["data"]["reservation_id"]
    w.refused("start_trip", "still on trip", reservation_id=rid, member_zone_id="ZN-A", destination_zone_id="ZN-B")
    w.clock.advance(5)
    assert w("start_trip", reservation_id=rid, member_zone_id="ZN-A", destination_zone_id="ZN-B")["success"]
    assert s["trips"]["TRP-1"]["status"] == "ended" and s["trips"]["TRP-1"]["end_zone"] == "ZN-A"
    # A late driver: the handoff fails and the reservation holds nothing any more.
    late = Harness(copy.deepcopy(city()))
    late.world.state["cars"]["CS-4"].update(status="in_use")
    late.world.state["trips"]["TRP-1"] = {**s["trips"]["TRP-1"], "status": "open", "end_zone": None}
    rid = late("reserve_handoff", member_id="MB-1", trip_id="TRP-1")["data"]["reservation_id"]
    late.world.delay_trip(trip_id="TRP-1", minutes=60, note="late")
    assert late.world.state["reservations"][rid]["status"] == "handoff_failed"
    assert late("reserve_car", member_id="MB-1", car_id="CS-1")["success"]


def test_a_hub_outage_locks_its_cars_and_its_slots(w):
    w.world.state["cars"]["CS-5"] = {**w.world.state["cars"]["CS-2"], "spot": "SP-2"}
    assert w("book_charger", charger_id="CH-1", car_id="CS-2")["success"]
    w.refused("book_charger", "charging", charger_id="CH-1", car_id="CS-2")
    w.refused("book_charger", "no free slot", charger_id="CH-1", car_id="CS-5")
    w.refused("book_charger", "not electric", charger_id="CH-1", car_id="CS-1")
    fresh = Harness()
    fresh.world.hub_outage(charger_id="CH-1", notice="outage HO-1")
    assert fresh.world.state["cars"]["CS-2"]["status"] == "charging"
    fresh.refused("reserve_car", "charging", member_id="MB-1", car_id="CS-2")
    fresh.refused("book_charger", "fault", charger_id="CH-1", car_id="CS-2")


def test_a_priority_booking_preempts_and_a_peak_cuts_open_holds(w):
    rid = w("reserve_car", member_id="MB-1", car_id="CS-1")["data"]["reservation_id"]
    w.world.shorten_holds(zone_id="ZN-A", hold_minutes=5, notice="peak")
    assert w.world.state["reservations"][rid]["expires_at"] == "2025-03-04T18:05"
    w.world.preempt(car_id="CS-1", reservation_id="RES-9", member_id="MB-2", note="business")
    assert w.world.state["reservations"][rid]["status"] == "preempted"
    assert w("get_car", car_id="CS-1")["data"]["reservation_id"] == "RES-9"


def test_the_ride_checks_read_the_final_world(w):
    ride = {"member": "MB-1", "home": "ZN-A", "max_walk": 5, "category": "compact", "min_level": 30,
            "destination": "ZN-C", "energy": "", "promo": False, "by": ""}
    holds = lambda name, **kw: w.world.holds({"name": name, "args": kw})  # noqa: E731
    rid = w("reserve_car", member_id="MB-1", car_id="CS-2")["data"]["reservation_id"]
    w("start_trip", reservation_id=rid, member_zone_id="ZN-B", destination_zone_id="ZN-C")
    assert not holds("riding", ride=ride)  # picked up 8 minutes' walk away, more than the member walks
    assert holds("riding", ride={**ride, "max_walk": 8}) and not holds("riding", ride={**ride, "energy": "petrol"})
    assert holds("single_trip", member="MB-1") and not holds("no_new_trip", member="MB-1")


# ---------------------------------------------------------------------- stories


def start(env_id: str, seed: int = 0):
    env = gym.make(env_id)
    env.reset(seed=seed)
    return env, env.unwrapped


def call(env, name: str, **arguments) -> dict:
    _, _, _, _, info = env.step({"name": name, "arguments": arguments})
    return info["result"]


def finish(env) -> float:
    *_, info = env.step({"content": "Task Completed"})
    return info["score"]


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_the_oracle_solves_and_the_blind_writer_meets_every_trigger_yet_earns_nothing(conflict):
    env_id = f"STTArena/CarShare-{conflict}-medium"
    assert rollout(gym.make(env_id), OracleAgent(), seed=5).reward == 1.0
    env = gym.make(env_id)
    traj = rollout(env, BlindWriter(), seed=5)
    assert {e["trigger"] for e in traj.info["trigger_log"]} == {t.name for t in env.unwrapped.task.triggers}
    assert traj.reward == 0.0
    tools = env.unwrapped.tools
    assert all(tools[name].mutates for t in env.unwrapped.task.triggers for name in t.activation)


@pytest.mark.parametrize("conflict", ["T1", "S2", "S3", "ST3"])
def test_impossible_tasks_need_the_blocking_fact_and_punish_a_trip_started_anyway(conflict):
    env_id = f"STTArena/CarShare-{conflict}-impossible"
    assert rollout(gym.make(env_id), OracleAgent(), seed=1).reward == 1.0
    assert rollout(gym.make(env_id), NominalAgent(), seed=1).reward == 0.0
    _, arena = start(env_id, seed=1)
    vague = [c if c.name != "chat_with_user" else c.model_copy(update={"arguments": {
        "message": "I'm sorry, but I cannot arrange this car for you; something changed and it no longer works."}})
        for c in arena.task.oracle]
    assert rollout(gym.make(env_id), PlanAgent(vague), seed=1).reward == 0.0


@pytest.mark.parametrize("conflict, refusal", [
    ("T1", "a demand peak cut the hold time to 5 minutes, so no car stays held until you get there"),
    ("T2", "a business account's priority booking took every car within your walk"),
    ("T3", "your promotions rolled into a new period whose allowance is used up"),
    ("S1", "the GPS fix shows the cars are really parked beyond your walk"),
    ("S2", "a damage report and a model recall grounded every car near you"),
    ("S3", "the destination became a low-emission zone that bans petrol cars, and so did every zone nearby"),
    ("ST1", "a demand peak elsewhere pulled the cars away: they were relocated"),
    ("ST2", "a charging outage left every electric car near you locked at their chargers"),
    ("ST3", "the member bringing the car back is running late"),
])
def test_a_refusal_that_names_the_change_in_words_names_the_blocking_fact(conflict, refusal):
    """An honest refusal need not repeat an id or a time: the change said in a few words names it too."""
    task = start(f"STTArena/CarShare-{conflict}-impossible", seed=3)[1].task
    assert names_fact(f"I'm sorry, I can't arrange the car: {refusal}.", task.impossibility.blocking_facts)
    assert not names_fact("I'm sorry, I can't arrange the car: something changed.", task.impossibility.blocking_facts)


# The change in plain words, as a refusal naming only it says it.
CHANGE = {"T1": "a demand peak cut the hold time in your zone to 5 minutes",
          "T2": "a business account's priority booking took the nearest car",
          "T3": "your promotion rolled into a new period whose allowance is used up",
          "S1": "the GPS fix shows the nearest car is really parked beyond your walk",
          "S2": "a damage report put the nearest car into maintenance",
          "S3": "your destination became a low-emission zone that bans petrol cars",
          "ST1": "a demand peak elsewhere pulled the cars in your zone away: they were relocated",
          "ST2": "a charging outage locked the electric cars at your zone's hub",
          "ST3": "the member bringing the car back is running late"}


def why_not_the_others(task, seed: int) -> str:
    """Why the other options fail, in plain words, as a careful agent who read them says it (from the world, never
    from the task's own lists): the other car within the walk holds too little (its level, or on odd seeds just
    words), the other promotion takes too little off, the other zones are closed or ban petrol too."""
    state = task.initial_state
    if "promo" in task.query:
        code = next(c for c, p in sorted(state["promotions"].items()) if p["note"] == "member offer"
                    and c not in task.query)
        return f"the other promotion, {code}, takes off too little to bring the estimate under your limit"
    if "pulling into" in task.query:
        return "the zones within your walk are closed for street works or lie in a clean-air zone that bans them too"
    ride = next(v for c in task.static_checklist for v in c.holds.args.values() if isinstance(v, dict))
    low = next(c for c, x in sorted(state["cars"].items()) if x["category"] == ride["category"] and x["level_pct"]
               < ride["min_level"] and walk_minutes(state, ride["home"], x["zone"]) <= ride["max_walk"])
    level = state["cars"][low]["level_pct"]
    return f"the other car within your walk, {low}, " + (f"only has {level}% left" if seed % 2 == 0
                                                         else "is too low on charge or fuel for the drive")


def refusing(task, message: str) -> list:
    """The oracle's reads (of the change and of the other options), then ``message`` instead of its refusal."""
    *reads, said = task.oracle
    assert said.name == "chat_with_user"
    return [*reads, said.model_copy(update={"arguments": {"message": message}})]


@pytest.mark.parametrize("conflict", CONFLICTS)
@pytest.mark.parametrize("seed", [0, 7])
def test_a_refusal_must_say_why_the_other_options_fail_too(conflict, seed):
    """The change blocks the plan but does not say that nothing else works: each other option the world offers (the
    neighbour's car, the other promotion, the zones within the walk) fails on a fact found only by reading it. A
    plain-words refusal that says so scores 1.0; one naming only the change fails ``named_why_no_alternative``
    (and nothing else), as the probe that refuses at the first failed write does."""
    env_id = f"STTArena/CarShare-{conflict}-impossible"
    task = start(env_id, seed)[1].task
    assert task.impossibility.no_alternative
    careful = f"I'm sorry, I can't do this: {CHANGE[conflict]}, and {why_not_the_others(task, seed)}."
    assert rollout(gym.make(env_id), PlanAgent(refusing(task, careful)), seed=seed).reward == 1.0
    traj = rollout(gym.make(env_id), PlanAgent(refusing(task, f"I'm sorry, I can't do this: {CHANGE[conflict]}.")),
                   seed=seed)
    assert traj.reward == 0.0
    assert [c["name"] for c in traj.info["checklist"] if not c["passed"]] == ["named_why_no_alternative"]


@pytest.mark.parametrize("seed", [0, 3])
def test_no_later_hold_of_the_peak_zone_s_car_reaches_the_departure(seed):
    """T1 impossible: the member leaves long after the cut hold and an extension lapse, and once their hold is gone
    the peak queue takes the car, so releasing it and holding it again later (or after it lapsed) is no way round."""
    env, arena = start("STTArena/CarShare-T1-impossible", seed)
    saved = {}
    for c in arena.task.nominal_plan:
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    held = saved["res"]["data"]
    member = arena.task.nominal_plan[-1].arguments["member_id"]
    assert call(env, "cancel_reservation", member_id=member, reservation_id=held["reservation_id"])["success"]
    again = call(env, "reserve_car", member_id=member, car_id=held["car_id"])
    assert not again["success"] and "reserved" in again["error"]


def test_a_stored_task_replays_and_each_seed_draws_a_different_city():
    _, arena = start("STTArena/CarShare-ST2-hard", seed=11)
    again = gym.make("STTArena/CarShare-ST2-hard")
    again.reset(options={"task": json.loads(arena.task.model_dump_json())})
    assert again.unwrapped.task.initial_state == arena.task.initial_state
    assert rollout(again, OracleAgent(), seed=11).reward == 1.0
    assert start("STTArena/CarShare-ST2-hard", seed=12)[1].task.initial_state != arena.task.initial_state


# ------------------------------------------------------------------ shortcuts


def same_car_again(env, seed: int) -> float:
    """Reserve the planned car again after any failure (cancelling the member's own hold first), and unlock it
    where the plan said, without ever reading where the car is now or what happened to it."""
    env.reset(seed=seed)
    task, saved = env.unwrapped.task, {}
    for c in task.nominal_plan:
        saved[c.save_as or ""] = result = call(env, c.name, **resolve(c.arguments, saved))
        if not result["success"] and c.name in ("reserve_car", "start_trip", "reserve_handoff"):
            member = next(x.arguments["member_id"] for x in task.nominal_plan if "member_id" in x.arguments)
            for rid in list(env.unwrapped.world.state["reservations"]):
                call(env, "cancel_reservation", member_id=member, reservation_id=rid)
            car = next((x.arguments["car_id"] for x in task.nominal_plan if x.name == "reserve_car"), None)
            start_call = next((x for x in task.nominal_plan if x.name == "start_trip"), None)
            if car and start_call:
                again = call(env, "reserve_car", member_id=member, car_id=car)
                if again["success"]:
                    args = {**start_call.arguments, "reservation_id": again["data"]["reservation_id"]}
                    call(env, "start_trip", **args)
            break
    return finish(env)


def any_car_of_the_category(env, seed: int) -> float:
    """The nominal plan, but every reservation takes another car of the category from the list read before any
    change (so a change aimed at the planned car never meets it), unlocked in that car's listed zone."""
    env.reset(seed=seed)
    task, saved, listed = env.unwrapped.task, {}, []
    for c in task.nominal_plan:
        args = resolve(c.arguments, saved)
        if c.name == "find_cars":
            found = call(env, c.name, **args)
            listed = found["data"]["cars"] if found["success"] else []
            continue
        if c.name == "reserve_car":
            others = [x for x in listed if x["car_id"] != args["car_id"]]
            if others:
                args = {**args, "car_id": others[0]["car_id"]}
                zone = others[0]["zone"]
                saved["zone"] = zone
        if c.name == "start_trip" and "zone" in saved:
            args = {**args, "member_zone_id": saved["zone"]}
        saved[c.save_as or ""] = call(env, c.name, **args)
    return finish(env)


@pytest.mark.parametrize("env_id", [f"STTArena/CarShare-{c}-{lvl}" for c in ("T2", "S1", "S2", "ST1", "ST2", "ST3")
                                    for lvl in ("easy", "medium")])
def test_reserving_the_same_car_again_earns_little(env_id):
    env = gym.make(env_id)
    scores = [same_car_again(env, seed) for seed in range(3)]
    assert max(scores) <= 0.25, scores


@pytest.mark.parametrize("env_id", ["STTArena/CarShare-S1-easy", "STTArena/CarShare-S2-easy",
                                    "STTArena/CarShare-T2-easy", "STTArena/CarShare-ST1-medium"])
def test_reserving_another_car_of_the_category_first_dodges_nothing(env_id):
    """The change meets whichever car the member reserves (the fix, the report, the priority booking find it; the
    peak takes both home cars): the stale plan with another car earns nothing, its failed write shows the change
    without any read, and the listed recovery from that first choice scores 1.0."""
    env = gym.make(env_id)
    for seed in range(3):
        assert any_car_of_the_category(env, seed) == 0.0
        arena = env.unwrapped
        planned = next(c for c in arena.task.nominal_plan if c.name == "reserve_car").arguments["car_id"]
        assert arena.log.calls[3]["arguments"]["car_id"] != planned  # after find, profile, quote
        assert arena.log.noticed(arena.task.triggers[0].name)
        for plan in arena.task.alternatives:
            assert rollout(gym.make(env_id), PlanAgent(plan), seed=seed).reward == 1.0


@pytest.mark.parametrize("env_id", ["STTArena/CarShare-ST1-easy", "STTArena/CarShare-ST2-easy"])
def test_a_ride_the_change_never_met_scores_as_well_as_a_recovery(env_id):
    """The peak leaves a home car behind, the outage spares the street car: reserved first, either serves the ride,
    and the outcome is what is scored."""
    env = gym.make(env_id)
    for seed in range(3):
        assert any_car_of_the_category(env, seed) == 1.0
        assert not env.unwrapped.log.noticed(env.unwrapped.task.triggers[0].name)


def test_ending_the_new_trip_again_is_no_ride():
    """After the oracle, ending the member's new trip where it started leaves nobody riding: the goal fails."""
    env, arena = start("STTArena/CarShare-S1-easy", seed=2)
    saved = {}
    for c in arena.task.oracle:
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    trip = saved["trip"]["data"]["trip_id"]
    assert call(env, "end_trip", trip_id=trip, zone_id=arena.world.state["trips"][trip]["start_zone"])["success"]
    assert finish(env) == 0.0


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_the_member_answers_alike_on_every_level(conflict):
    """A proposed change of plan gets the member's hard constraints (or the withheld fact it names the topic of) on
    every level, feasible or not, and every other question the same kind of answer (the same topic's, or the same
    words): the answers never tell whether the request can be met."""
    replies = set()
    for level in ("easy", "medium", "hard", "impossible"):
        task = start(f"STTArena/CarShare-{conflict}-{level}", seed=4)[1].task
        user, answers = RuleUser(task.profile), [*task.profile.withheld, *task.profile.clarifications]
        # a proposal gets the hard constraints, or the withheld fact whose topic it names (alike on every level)
        offer = user.reply("Could I reserve a different car instead?")
        assert offer and offer in (task.profile.insist, *[w.text for w in task.profile.withheld])

        def kind(reply: str) -> object:  # the topic an answer is on, else its words
            return next((tuple(a.keywords) for a in answers if a.text == reply), re.sub(r"\S*\d\S*", "#", reply))

        replies.add(tuple(kind(user.reply(q)) for q in ("Is there a requirement for where you pick it up?",
                                                         "Is there a deadline?", "What is your member id?",
                                                         "Which destination should the trip be planned to?")))
    assert len(replies) == 1, replies


# ------------------------------------------------- facts only the user knows


def other_zones(task) -> list[dict[str, str]]:
    """For each zone the oracle's question offers besides the one the user names, the ids that take it instead:
    the zone where the trip ends or starts, and (a car picked up there) that zone's car with the most charge."""
    offered = re.findall(r"ZN-[A-Z]+", question(task).arguments["message"])
    last = next(c for c in reversed(task.oracle) if c.name in ("end_trip", "start_trip")).arguments
    if "zone_id" in last:  # the trip ends there
        return [{last["zone_id"]: z} for z in offered if z != last["zone_id"]]
    wanted = next(c for c in reversed(task.oracle) if c.name == "reserve_car").arguments["car_id"]
    cars = task.initial_state["cars"]
    best = {z: max((c for c in cars if cars[c]["zone"] == z and cars[c]["category"] == cars[wanted]["category"]),
                   key=lambda c: cars[c]["level_pct"]) for z in offered}
    return [{last["member_zone_id"]: z, wanted: best[z]} for z in offered if z != last["member_zone_id"]]


@pytest.mark.parametrize("env_id", [f"STTArena/CarShare-{c}-{lvl}" for c in ("S3", "T2") for lvl in ("medium", "hard")])
def test_the_zone_the_member_can_go_to_is_theirs_to_say(env_id):
    def others(env, seed):  # the oracle's recovery in each other zone, unasked
        return [unasked(env.unwrapped.task, swap) for swap in other_zones(env.unwrapped.task)]

    assert_withheld_story(env_id, "ask me before you", "asked_user", others, seeds=(0, 1, 1000000))


def zone_cues(task) -> dict[str, bool]:
    """Whether the member's zone is the one a guess would take: listed first, or the nearest on foot from where the
    plan would have had the car (the destination, or home)."""
    offered = re.findall(r"ZN-[A-Z]+", question(task).arguments["message"])

    def zone(plan) -> str:
        last = next(c for c in reversed(plan) if c.name in ("end_trip", "start_trip")).arguments
        return last.get("zone_id") or last["member_zone_id"]

    mine, planned = zone(task.oracle), zone(task.nominal_plan)
    near = min(offered, key=lambda z: (walk_minutes(task.initial_state, planned, z), z))
    return {"listed first": mine == offered[0], "nearest": mine == near}


@pytest.mark.parametrize("env_id", ["STTArena/CarShare-S3-medium", "STTArena/CarShare-T2-hard"])
def test_nothing_the_tools_show_tells_which_zone_the_member_needs(env_id):
    assert_unpredictable(env_id, lambda env, seed: zone_cues(env.unwrapped.task))


# ------------------------------------------------ the appointment (hard: it moves)


def sentences(task, member: str) -> set[str]:
    """The query's sentences with the member's name, the car they want, every id and number masked: what stays the
    same across the levels' cities."""
    query = task.query.replace(task.initial_state["members"][member]["name"], "#")
    query = re.sub(r"\ban? (?:electric )?(?:city car|compact car|estate car|8-seat van) \(category \w+\)", "#", query)
    return {re.sub(r"\S*\d\S*|ZN-[A-Z]+", "#", x) for x in re.split(r"(?<=[.?!])\s+", query)}


@pytest.mark.parametrize("conflict", APPOINTED)
def test_the_appointment_is_asked_for_at_every_level_and_moves_at_medium_and_hard(conflict):
    # A request only hard makes would tell the agent the level: at every level the zone comes from the profile alone.
    said = {}
    for level in ("easy", "medium", "hard", "impossible"):
        task = start(f"STTArena/CarShare-{conflict}-{level}", seed=1)[1].task
        member = next(c.arguments["member_id"] for c in task.oracle if "member_id" in c.arguments)
        zone = task.initial_state["members"][member]["appointment_zone"]
        planned = next(c for c in task.nominal_plan if c.name == "start_trip").arguments["destination_zone_id"]
        assert APPOINTMENT in task.query and zone == planned and zone not in task.query
        assert ("appointment_moved" in [t.name for t in task.triggers]) == (level in ("medium", "hard"))
        said[level] = sentences(task, member)
    assert said["hard"] <= said["easy"] | said["medium"] | said["impossible"], said


def without(plan: list, name: str) -> list:
    return [c for c in plan if c.name != name]


@pytest.mark.parametrize("conflict", APPOINTED)
def test_at_hard_the_appointment_moves_after_the_story_s_change_and_only_the_profile_shows_it(conflict):
    # Once the recovery rides to the appointment (whichever car), the profile names another zone: the trip planned to
    # the zone read at the start goes stale, yet still counts as the ride; nothing but get_member shows the move.
    for env, seed, task, moved in second_changes(f"STTArena/CarShare-{conflict}-hard", "appointment_moved",
                                                 "get_member"):
        member = moved.observable.args["member_id"]
        log = rollout(env, PlanAgent(task.oracle), seed=seed).info["trigger_log"]
        assert log[-1]["during"] == "start_trip"
        stale = without(task.oracle, "change_destination")
        traj = rollout(env, PlanAgent(stale), seed=seed)
        passed = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        assert passed["riding"] and not passed["to_appointment"] and 0.0 < traj.reward < 1.0
        assert all(op.args["path"][:2] == ["members", member] for op in moved.effect)  # the old zone stays as it is
        old = task.initial_state["members"][member]["appointment_zone"]
        blind = [*without(stale, "get_member"), Call(name="list_member_trips", arguments={"member_id": member}),
                 Call(name="get_zone", arguments={"zone_id": old})]
        rollout(env, PlanAgent(blind), seed=seed)
        assert not env.unwrapped.log.noticed("appointment_moved")  # the trip and the old zone read as they were
        nominal = rollout(env, PlanAgent(task.nominal_plan), seed=seed)
        assert "appointment_moved" not in [e["trigger"] for e in nominal.info["trigger_log"]]


@pytest.mark.parametrize("conflict", APPOINTED)
def test_at_medium_the_appointment_moves_with_the_story_s_change(conflict):
    # Medium's move comes in the call that brings the story's change, before any trip: the profile read after it
    # names the new zone, and a trip left planned to the zone read at the start is stale, as at hard.
    for env, seed, task, moved in second_changes_with_the_story(f"STTArena/CarShare-{conflict}-medium",
                                                                "appointment_moved", "get_member"):
        member = moved.observable.args["member_id"]
        traj = rollout(env, PlanAgent(without(task.oracle, "change_destination")), seed=seed)
        passed = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        assert passed["riding"] and not passed["to_appointment"] and 0.0 < traj.reward < 1.0
        assert env.unwrapped.world.state["members"][member]["appointment_zone"] != \
            task.initial_state["members"][member]["appointment_zone"]


@pytest.mark.parametrize("conflict", ["S1", "T3"])
def test_the_appointment_moves_at_the_later_of_the_unlock_and_the_trip_planned_there(conflict):
    # A recovery planned elsewhere first meets the move only once it sends the trip to the appointment.
    env = gym.make(f"STTArena/CarShare-{conflict}-hard")
    for seed in range(3):
        env.reset(seed=seed)
        task = env.unwrapped.task
        last = max(i for i, c in enumerate(task.oracle) if c.name == "start_trip")
        planned, fix = task.oracle[last].arguments["destination_zone_id"], next(
            c for c in task.oracle if c.name == "change_destination")
        detour = [*task.oracle[:last], task.oracle[last].model_copy(update={"arguments": {
            **task.oracle[last].arguments, "destination_zone_id": fix.arguments["destination_zone_id"]}}),
            fix.model_copy(update={"arguments": {**fix.arguments, "destination_zone_id": planned}}),
            *task.oracle[last + 1:]]
        traj = rollout(env, PlanAgent(detour), seed=seed)
        assert traj.info["trigger_log"][-1]["during"] == "change_destination" and traj.reward == 1.0
