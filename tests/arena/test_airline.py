"""Airline: tool behaviour on a hand-made network, the rules of connections, and the stories against cheap policies."""

from __future__ import annotations

import copy
import json
from itertools import product

import gymnasium as gym
import pytest

from sttgym import arena_ids  # importing sttgym registers the ids
from sttgym.agents import NominalAgent, OracleAgent, PlanAgent
from sttgym.agents.probes import BlindWriter
from sttgym.clock import Clock
from sttgym.envs.arena.airline.generator import CONSULT, PASSPORT
from sttgym.envs.arena.airline.world import AirlineWorld
from sttgym.rollout import rollout
from sttgym.task import Call, Ref, resolve
from sttgym.tools import collect_tools
from tests.arena.harness import second_changes, second_changes_with_the_story
from tests.arena.withheld import assert_withheld_story, unasked

START = "2024-05-06T09:00"
DAY = "2024-05-07"
CONFLICTS = ["T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3"]


def flight(carrier: str, origin: str, destination: str, departs: str, arrives: str, seats: int = 3,
           fare: int = 100) -> dict:
    return {"carrier": carrier, "origin": origin, "destination": destination, "departs": f"{DAY}T{departs}",
            "arrives": f"{DAY}T{arrives}", "status": "scheduled", "aircraft": "A320-1", "inbound": None,
            "seats": {"economy": seats, "business": 1}, "fares": {"economy": fare, "business": 3 * fare}, "notice": ""}


def airport(name: str, city: str, country: str, mct: int = 45, interline: int = 75) -> dict:
    return {"name": name, "city": city, "country": country, "hub": True, "mct": mct, "interline_mct": interline,
            "status": "open", "notice": "", "transit_visa_for": [], "transit_rule": ""}


def network() -> dict:
    """Lisbon to Vienna through London (Heathrow, or Gatwick 60 minutes away by road)."""
    return {
        "airports": {"LIS": airport("Lisbon", "Lisbon", "PT"), "VIE": airport("Vienna", "Vienna", "AT"),
                     "LHR": airport("Heathrow", "London", "GB"), "LGW": airport("Gatwick", "London", "GB", mct=30)},
        "ground_links": {"GT-1": {"a": "LHR", "b": "LGW", "minutes": 60, "open": True}},
        "carriers": {"NX": {"name": "Northwind", "hold_minutes": 30, "change_fee": 50, "partners": [], "notice": ""},
                     "AQ": {"name": "Aquila", "hold_minutes": 20, "change_fee": 80, "partners": [], "notice": ""}},
        "flights": {"NX100": flight("NX", "LIS", "LHR", "08:00", "10:00"),
                    "NX200": flight("NX", "LHR", "VIE", "11:00", "13:00"),   # 60 min: legal at the 45 minimum
                    "AQ300": flight("AQ", "LHR", "VIE", "11:00", "13:00"),   # interline: needs 75
                    "AQ310": flight("AQ", "LHR", "VIE", "11:30", "13:30"),
                    "NX400": flight("NX", "LGW", "VIE", "11:15", "13:15"),   # 60 ground + 30 = 90 from LHR
                    "NX500": flight("NX", "LHR", "VIE", "12:00", "14:00", seats=1, fare=300)},
        "passengers": {"PAX-1": {"name": "Ada", "nationality": "KE", "visas": [], "tier": "standard", "budget": 300}},
        "bookings": {},
        "promotions": {"HALF": {"carriers": ["NX"], "discount_pct": 50, "quota": 1, "used": 0, "status": "active",
                                "note": ""}},
        "counters": {"booking": 100},
    }


class Desk:
    """A world plus its clock, calling tools the way the env does (the clock advances by each tool's cost)."""

    def __init__(self, state: dict | None = None):
        self.clock = Clock(START)
        self.world = AirlineWorld(state or network(), self.clock)
        self.tools = collect_tools(self.world)

    def __call__(self, name: str, **arguments) -> dict:
        result = self.tools[name].func(**arguments)
        self.clock.advance(self.tools[name].cost)
        return result

    def hold(self, *fids: str) -> dict:
        return self("hold_itinerary", passenger_id="PAX-1", flight_ids=list(fids))

    def holds(self, name: str, **request) -> bool:
        spec = {"passenger": "PAX-1", "origin": "LIS", "destination": "VIE", "arrive_by": f"{DAY}T13:30",
                "cabin": "economy", **request}
        return self.world.holds({"name": name, "args": {"request": spec}})


@pytest.fixture
def w() -> Desk:
    return Desk()


# ----------------------------------------------------------------------- tools


def test_a_hold_then_a_ticket_takes_a_seat_at_the_current_fare(w):
    held = w.hold("NX100", "NX200")
    assert held["success"] and held["data"] == {"booking_id": "BK-101", "ticket_by": "2024-05-06T09:30",
                                                "estimated_price": 200}
    assert w("confirm_booking", booking_id="BK-101")["data"]["price"] == 200
    legs = w("search_flights", origin="LHR", destination="VIE", date=DAY)["data"]["flights"]
    assert next(f for f in legs if f["flight_id"] == "NX200")["seats_left"] == {"economy": 2}
    assert w.holds("trip_ticketed") and w.holds("one_ticket") and w.holds("bookings_sound")


@pytest.mark.parametrize("change, error", [
    ({"passenger_id": "PAX-404"}, "no passenger"),
    ({"flight_ids": ["NX100", "XX1"]}, "no flight 'XX1'"),
    ({"flight_ids": []}, "at least one flight"),
    ({"flight_ids": ["NX100", "AQ300"]}, "interline minimum is 75"),
    ({"flight_ids": ["NX100", "NX400"]}, "minimum is 90, 60 of them on the ground"),
    ({"flight_ids": ["NX200", "NX100"]}, "no connection"),
    ({"flight_ids": ["NX100", "NX100"]}, "appears twice"),
])
def test_a_bad_hold_is_refused_and_changes_nothing(w, change, error):
    before = copy.deepcopy(w.world.state)
    result = w("hold_itinerary", **{"passenger_id": "PAX-1", "flight_ids": ["NX100", "NX200"], **change})
    assert not result["success"] and error in result["error"], result
    assert w.world.state == before


@pytest.mark.parametrize("name, arguments, error", [
    ("confirm_booking", {"booking_id": "BK-999"}, "no booking"),
    ("confirm_booking", {"booking_id": "BK-101", "promo_code": "NOPE"}, "no promotion"),
    ("change_segment", {"booking_id": "BK-999", "old_flight_id": "NX200", "new_flight_id": "AQ310"}, "no booking"),
    ("change_segment", {"booking_id": "BK-101", "old_flight_id": "AQ300", "new_flight_id": "AQ310"}, "not a flight"),
    ("change_segment", {"booking_id": "BK-101", "old_flight_id": "NX200", "new_flight_id": "XX9"}, "no flight"),
    ("cancel_booking", {"booking_id": "BK-999"}, "no booking"),
    ("search_flights", {"origin": "LIS", "destination": "XXX", "date": DAY}, "no airport"),
    ("search_flights", {"origin": "LIS", "destination": "LHR", "date": "7 May"}, "YYYY-MM-DD"),
    ("get_flight_status", {"flight_id": "XX9"}, "no flight"),
    ("get_airport_info", {"airport_id": "XXX"}, "no airport"),
    ("get_booking", {"booking_id": "BK-999"}, "no booking"),
    ("list_passenger_bookings", {"passenger_id": "PAX-9"}, "no passenger"),
    ("get_passenger_profile", {"passenger_id": "PAX-9"}, "no passenger"),
    ("check_itinerary", {"passenger_id": "PAX-1", "flight_ids": ["XX9"]}, "no flight"),
    ("get_fare_quote", {"flight_ids": ["NX100"], "passenger_id": "PAX-9"}, "no passenger"),
])
def test_every_tool_refuses_bad_ids_and_changes_nothing(w, name, arguments, error):
    w.hold("NX100", "NX200")
    before = copy.deepcopy(w.world.state)
    result = w(name, **arguments)
    assert not result["success"] and error in result["error"], result
    assert w.world.state == before


def test_cancelled_full_departed_and_visa_blocked_flights_cannot_be_held(w):
    s = w.world.state
    s["flights"]["NX200"]["status"] = "cancelled"
    assert "cancelled" in w.hold("NX100", "NX200")["error"]
    s["flights"]["NX200"]["status"] = "scheduled"
    s["flights"]["NX200"]["seats"]["economy"] = 0
    assert "no economy seat" in w.hold("NX100", "NX200")["error"]
    s["flights"]["NX200"]["seats"]["economy"] = 3
    s["airports"]["LHR"].update(transit_visa_for=["KE"], transit_rule="TR-1")
    assert "transit visa for GB" in w.hold("NX100", "NX200")["error"]
    s["passengers"]["PAX-1"]["visas"] = ["GB"]
    assert w.hold("NX100", "NX200")["success"]
    w.clock.advance(24 * 60)
    assert "already departed" in w.hold("NX100", "NX200")["error"]
    assert w.world.state["bookings"].keys() == {"BK-101"}


def test_partners_connect_at_the_plain_minimum_and_other_airports_of_the_city_by_road(w):
    assert not w("check_itinerary", passenger_id="PAX-1", flight_ids=["NX100", "AQ300"])["data"]["valid"]
    w.world.state["carriers"]["NX"]["partners"] = ["AQ"]
    assert w("check_itinerary", passenger_id="PAX-1", flight_ids=["NX100", "AQ300"])["data"]["valid"]
    w.world.state["ground_links"]["GT-1"]["minutes"] = 45  # 45 + 30 fits the 75-minute layover
    assert w("check_itinerary", passenger_id="PAX-1", flight_ids=["NX100", "NX400"])["data"]["valid"]
    w.world.state["ground_links"]["GT-1"]["open"] = False
    check = w("check_itinerary", passenger_id="PAX-1", flight_ids=["NX100", "NX400"])["data"]
    assert not check["valid"] and "no connection" in check["problems"][0]


def test_a_hold_lapses_at_its_ticketing_deadline_and_then_takes_no_seat(w):
    w.world.state["flights"]["NX200"]["seats"]["economy"] = 1
    w.hold("NX100", "NX200")
    w.clock.advance(30)
    assert w("get_booking", booking_id="BK-101")["data"]["status"] == "expired"
    refused = w("confirm_booking", booking_id="BK-101")
    assert not refused["success"] and "expired" in refused["error"]
    assert w.hold("NX100", "NX200")["success"]  # the seat is free again
    # What the collateral gate counts: the live hold commits something, the lapsed one nothing.
    assert [w.world.commits("bookings", w.world.state["bookings"][b]) for b in ("BK-101", "BK-102")] == [False, True]
    assert w("cancel_booking", booking_id="BK-101")["success"]  # a lapsed hold can still be tidied away
    assert not w.world.commits("bookings", w.world.state["bookings"]["BK-101"])


def test_released_holds_lapse_at_once_and_new_ones_are_short(w):
    w.hold("NX100", "NX200")
    w.world.apply({"name": "release_holds", "args": {"carrier": "NX", "hold_minutes": 5, "notice": "fare closed"}})
    assert w("get_booking", booking_id="BK-101")["data"]["status"] == "expired"
    again = w.hold("NX100", "NX200")
    assert again["data"]["ticket_by"] == "2024-05-06T09:09"  # held at 09:04 for five minutes
    w("check_itinerary", passenger_id="PAX-1", flight_ids=["NX100", "NX200"])  # two minutes ...
    assert "expired" in w("confirm_booking", booking_id="BK-102")["error"]  # ... and the hold is gone


def test_the_budget_and_promotions_gate_the_ticket(w):
    w.world.state["passengers"]["PAX-1"]["budget"] = 150
    w.hold("NX100", "NX200")
    before = copy.deepcopy(w.world.state)
    refused = w("confirm_booking", booking_id="BK-101")
    assert "exceeds the passenger's budget 150" in refused["error"] and w.world.state == before
    quote = w("get_fare_quote", flight_ids=["NX100", "NX200"], passenger_id="PAX-1", promo_code="HALF")["data"]
    assert quote["total"] == 100 and quote["within_budget"]
    assert w("confirm_booking", booking_id="BK-101", promo_code="HALF")["data"]["price"] == 100
    # A use is the ticket itself: the promotion's own record keeps the uses from before the desk's tickets.
    assert w("list_promotions")["data"]["promotions"][0]["used"] == 1
    assert w.world.state["promotions"]["HALF"]["used"] == 0
    w.hold("NX100", "AQ310")
    assert "no quota left" in w("confirm_booking", booking_id="BK-102", promo_code="HALF")["error"]
    w("cancel_booking", booking_id="BK-101")  # the cancelled ticket gives its use back
    assert w("list_promotions")["data"]["promotions"][0]["remaining"] == 1


def test_a_held_booking_counts_only_if_some_fare_fits_the_budget(w):
    w.world.state["passengers"]["PAX-1"]["budget"] = 150
    w.hold("NX100", "NX200")
    assert w.holds("trip_secured")  # HALF still applies
    w.world.state["promotions"]["HALF"]["status"] = "exhausted"
    assert not w.holds("trip_secured") and not w.holds("bookings_sound")


def test_changing_a_ticket_charges_the_change_fee_unless_gold(w):
    w.hold("NX100", "NX200")
    w("confirm_booking", booking_id="BK-101")
    before = copy.deepcopy(w.world.state)
    assert "interline minimum" in w("change_segment", booking_id="BK-101", old_flight_id="NX200",
                                    new_flight_id="AQ300")["error"]
    assert "over the budget" in w("change_segment", booking_id="BK-101", old_flight_id="NX200",
                                  new_flight_id="NX500")["error"]
    assert w.world.state == before
    changed = w("change_segment", booking_id="BK-101", old_flight_id="NX200", new_flight_id="AQ310")
    assert changed["data"]["change_fee"] == 50 and w.world.state["bookings"]["BK-101"]["fees"] == 50
    w.world.state["passengers"]["PAX-1"]["tier"] = "gold"
    assert w("change_segment", booking_id="BK-101", old_flight_id="AQ310",
             new_flight_id="NX200")["data"]["change_fee"] == 0
    assert w("cancel_booking", booking_id="BK-101")["data"]["voucher"] == 200
    assert "cancelled" in w("cancel_booking", booking_id="BK-101")["error"]


def test_seats_moved_to_another_flight_offload_the_newest_booking(w):
    w.hold("NX100", "NX200")
    w.world.state["bookings"]["BK-050"] = {**w.world.state["bookings"]["BK-101"], "status": "ticketed",
                                           "passenger": "PAX-1"}
    w.world.state["flights"]["NX200"]["seats"]["economy"] = 0  # two seats in all, both taken here
    w.world.apply({"name": "reallocate_seats", "args": {"from_flight": "NX200", "to_flight": "AQ310",
                                                        "cabin": "economy", "seats": 1, "notice": "moved"}})
    assert w.world.state["bookings"]["BK-101"]["offloaded"] == ["NX200"]
    assert w.world.state["bookings"]["BK-050"]["offloaded"] == []
    assert w.world.state["flights"]["AQ310"]["seats"]["economy"] == 4
    assert "offloaded from NX200" in w("get_booking", booking_id="BK-101")["data"]["problems"][0]


def test_a_closed_hub_cancels_the_flights_in_its_window_only(w):
    w.world.apply({"name": "close_airport", "args": {"airport_id": "LHR", "start": f"{DAY}T09:30",
                                                     "end": f"{DAY}T11:15", "notice": "storm"}})
    status = {f: x["status"] for f, x in w.world.state["flights"].items()}
    assert status["NX100"] == status["NX200"] == status["AQ300"] == "cancelled"
    assert status["AQ310"] == status["NX500"] == status["NX400"] == "scheduled"


def test_the_request_checks_read_the_final_world(w):
    w.hold("NX100", "NX200")
    assert w.holds("trip_secured") and not w.holds("trip_ticketed")
    w("confirm_booking", booking_id="BK-101")
    assert w.holds("trip_ticketed") and not w.holds("trip_ticketed", arrive_by=f"{DAY}T12:30")
    w.world.state["flights"]["NX200"]["departs"] = f"{DAY}T10:30"  # retimed earlier: the connection breaks
    assert not w.holds("trip_ticketed") and not w.holds("bookings_sound") and w.holds("one_ticket")


# ---------------------------------------------------------------------- stories


def test_every_conflict_has_four_levels():
    assert len(arena_ids("Airline")) == 36


def start(env_id: str, seed: int = 0):
    env = gym.make(env_id)
    env.reset(seed=seed)
    return env, env.unwrapped


def call(env, name: str, **arguments) -> dict:
    _, _, _, _, info = env.step({"name": name, "arguments": arguments})
    return info["result"]


def finish(env) -> dict:
    *_, info = env.step({"content": "Task Completed"})
    return info


def solutions(world: AirlineWorld, request: dict) -> list[list[str]]:
    """Every routing of up to three flights that could be ticketed now and serves the request."""
    flights, out = world.state["flights"], []
    budget = world.state["passengers"][request["passenger"]]["budget"]
    for n in (1, 2, 3):
        for fids in product(sorted(flights), repeat=n):
            if flights[fids[0]]["origin"] != request["origin"] or flights[fids[-1]]["destination"] != \
                    request["destination"] or flights[fids[-1]]["arrives"] > request["arrive_by"]:
                continue
            if not world.problems(request["passenger"], list(fids), "economy") and \
                    world.best_price(list(fids), "economy") <= budget:
                out.append(list(fids))
    return out


def request_of(task) -> dict:
    spec = next(c for c in task.static_checklist if c.name == "ticketed").holds.args["request"]
    return dict(spec)


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_impossible_means_no_routing_is_left_and_the_refusal_needs_its_fact(conflict):
    env_id = f"STTArena/Airline-{conflict}-impossible"
    for seed in range(2):
        traj = rollout(gym.make(env_id), OracleAgent(), seed=seed)
        assert traj.reward == 1.0
        env, arena = start(env_id, seed)
        task = arena.task
        for c in task.oracle:
            if c.name != "chat_with_user":
                call(env, c.name, **resolve(c.arguments, {}))  # refs are not needed: the oracle never tickets
        for booking in arena.world.state["bookings"].values():  # the oracle's lapsing hold takes no seat
            booking["status"] = "cancelled" if booking["passenger"] == request_of(task)["passenger"] else \
                booking["status"]
        assert solutions(arena.world, request_of(task)) == [], (conflict, seed)
        # ... while the world as it was offered at least the routing the request names.
        fresh = AirlineWorld(copy.deepcopy(task.initial_state), Clock(task.start_time))
        assert solutions(fresh, request_of(task))
    vague = [c if c.name != "chat_with_user" else c.model_copy(update={"arguments": {
        "message": "I'm sorry, but I cannot book this trip for you; something changed and it no longer works."}})
        for c in start(env_id)[1].task.oracle]
    assert rollout(gym.make(env_id), PlanAgent(vague), seed=0).reward == 0.0
    assert rollout(gym.make(env_id), NominalAgent(), seed=0).reward == 0.0


def hub_of(task) -> str:
    hold = next(c for c in task.nominal_plan if c.name == "hold_itinerary")
    return task.initial_state["flights"][hold.arguments["flight_ids"][0]]["destination"]


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_hard_levels_leave_no_routing_through_the_planned_hub(conflict):
    """A hard cascade needs global replanning: once the nominal plan met every change, whatever still works
    avoids the hub the request named (and something still works)."""
    for seed in range(2):
        env, arena = start(f"STTArena/Airline-{conflict}-hard", seed)
        task, saved = arena.task, {}
        for c in task.nominal_plan:
            saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
        for booking in arena.world.state["bookings"].values():
            if booking["passenger"] == request_of(task)["passenger"]:
                booking["status"] = "cancelled"
        found = solutions(arena.world, request_of(task))
        hub = hub_of(task)
        assert found and all(hub not in (task.initial_state["flights"][f]["destination"] for f in r[:-1])
                             for r in found), (conflict, seed, found)


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_the_blind_writer_meets_every_trigger_and_is_disrupted(conflict):
    env = gym.make(f"STTArena/Airline-{conflict}-medium")
    traj = rollout(env, BlindWriter(), seed=5)
    assert {e["trigger"] for e in traj.info["trigger_log"]} == {t.name for t in env.unwrapped.task.triggers}
    assert traj.reward == 0.0
    tools = env.unwrapped.tools
    assert all(tools[name].mutates for t in env.unwrapped.task.triggers for name in t.activation)


def test_t1_a_hold_then_a_check_lapses_but_a_hold_ticketed_at_once_does_not():
    env, arena = start("STTArena/Airline-T1-easy", seed=2)
    plan, saved = arena.task.nominal_plan, {}
    for c in plan[:3]:  # search, search, hold: the fare closes
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    assert arena.log.events and arena.log.events[0]["trigger"] == "fare_hold_cut"
    held = call(env, "hold_itinerary", **plan[2].arguments)
    call(env, "check_itinerary", **plan[3].arguments)
    assert "expired" in call(env, "confirm_booking", booking_id=held["data"]["booking_id"])["error"]
    again = call(env, "hold_itinerary", **plan[2].arguments)
    assert call(env, "confirm_booking", booking_id=again["data"]["booking_id"])["success"]


def test_s2_the_onward_flight_waits_for_the_aircraft_of_its_inbound_flight():
    env, arena = start("STTArena/Airline-S2-easy", seed=4)
    ticket, *passport = arena.task.nominal_plan[-4:]
    hold = next(c for c in arena.task.nominal_plan if c.name == "hold_itinerary")
    second = hold.arguments["flight_ids"][1]
    inbound = call(env, "get_flight_status", flight_id=second)["data"]["inbound"]
    before = call(env, "get_flight_status", flight_id=inbound)["data"]["arrives"]
    call(env, "hold_itinerary", **hold.arguments)
    after = call(env, "get_flight_status", flight_id=second)["data"]
    assert after["status"] == "delayed" and inbound in after["notice"]
    assert call(env, "get_flight_status", flight_id=inbound)["data"]["arrives"] > before
    assert ticket.name == "confirm_booking" and passport[-1].name == "record_travel_document"


def test_a_stored_task_replays_and_each_seed_draws_a_different_network():
    env, arena = start("STTArena/Airline-ST2-hard", seed=11)
    stored = json.loads(arena.task.model_dump_json())
    again = gym.make("STTArena/Airline-ST2-hard")
    again.reset(options={"task": stored})
    assert again.unwrapped.task.initial_state == arena.task.initial_state
    assert rollout(again, OracleAgent(), seed=11).reward == 1.0
    _, other = start("STTArena/Airline-ST2-hard", seed=12)
    assert other.task.initial_state != arena.task.initial_state


def played(env_id: str, seed: int, plan: list) -> tuple[float, dict, object]:
    """``plan`` played from ``seed``: the score, each check's outcome, and the env (for its log)."""
    env = gym.make(env_id)
    traj = rollout(env, PlanAgent(plan), seed=seed)
    return traj.reward, {c["name"]: c["passed"] for c in traj.info["checklist"]}, env.unwrapped


def shared_prefix(a: list, b: list) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


@pytest.mark.parametrize("conflict", ["T1", "T2", "S1", "S3", "ST1", "ST2", "ST3"])
def test_the_failed_ticket_shows_the_change_and_recovering_from_it_alone_scores_full_marks(conflict):
    """The stale plan's ticket fails with an error that names what changed: that is noticing, by whatever route.
    The oracle's recovery writes straight after it, without the story's read, get the ticket and full marks. (In
    S2 and T3 the stale ticket does not fail: it lands late, or the promotion's refusal is the change itself.)"""
    env_id = f"STTArena/Airline-{conflict}-easy"
    for seed in range(3):
        task = start(env_id, seed)[1].task
        writes = [c for c in task.oracle[shared_prefix(task.oracle, task.nominal_plan):]
                  if c.name in ("change_segment", "cancel_booking", "hold_itinerary", "confirm_booking",
                                "record_travel_document")]
        score, checks, arena = played(env_id, seed, task.nominal_plan + writes)
        assert score == 1.0, (seed, checks)
        failed = next(i for i, c in enumerate(arena.log.calls) if not c["result"]["success"])
        assert arena.log.calls[failed]["name"] == "confirm_booking"
        assert arena.log.revealed[task.triggers[0].name] == failed  # the error was the first thing to show it


def test_a_ticket_the_change_never_touches_is_a_solution():
    """Ticketing the direct flight from the start (every constraint of the request met, the desk's suggestion
    aside) never meets the transit rule the first hold sets off, and still scores 1.0."""
    for seed in range(3):
        task = start("STTArena/Airline-S3-easy", seed)[1].task
        direct = [c for c in task.oracle if c.name == "hold_itinerary"][-1].arguments["flight_ids"]
        hold = next(c for c in task.nominal_plan if c.name == "hold_itinerary")
        plan = [hold.model_copy(update={"arguments": {**hold.arguments, "flight_ids": direct}}),
                next(c for c in task.nominal_plan if c.name == "confirm_booking"), task.nominal_plan[-1]]
        score, checks, arena = played("STTArena/Airline-S3-easy", seed, plan)
        assert score == 1.0 and not arena.log.revealed, (seed, checks)


def test_a_hold_the_change_left_as_it_was_earns_nothing():
    """T3-easy: the stale hold still flies the request (the members' promotion fits the budget), but keeping it
    is no recovery: only a ticket, or a hold made or changed after the change, counts."""
    for seed in range(3):
        assert rollout(gym.make("STTArena/Airline-T3-easy"), BlindWriter(), seed=seed).reward == 0.0
        assert rollout(gym.make("STTArena/Airline-T3-easy"), OracleAgent(), seed=seed).reward == 1.0


@pytest.mark.parametrize("env_id", ["STTArena/Airline-T2-easy", "STTArena/Airline-ST2-medium",
                                    "STTArena/Airline-T1-hard"])
def test_anything_beyond_the_request_fails_the_collateral_gate(env_id):
    task = start(env_id, 0)[1].task
    traveller = request_of(task)["passenger"]
    other = next(b for b, x in task.initial_state["bookings"].items() if x["passenger"] != traveller)
    _, _, solved = played(env_id, 0, task.oracle)
    flown = next(b["segments"] for b in solved.world.state["bookings"].values()
                 if b["passenger"] == traveller and b["status"] == "ticketed")
    extra_hold = Call(name="hold_itinerary", arguments={"passenger_id": traveller, "flight_ids": flown},
                      save_as="extra")
    for extra, kept in (([task.oracle[0].model_copy(update={"name": "cancel_booking",
                                                              "arguments": {"booking_id": other}})], False),
                        ([extra_hold], False),  # a second live hold on the traveller's routing
                        ([extra_hold, Call(name="cancel_booking", arguments={"booking_id": Ref(
                            step="extra", path=("data", "booking_id"))})], True)):  # ... released again
        score, checks, _ = played(env_id, 0, list(task.oracle) + extra)
        assert (score == 1.0) == kept and checks["no_collateral_change"] == kept, (extra, checks)


def test_every_alternative_the_task_lists_scores_full_marks_and_differs_from_the_oracle():
    found = 0
    for env_id in ("STTArena/Airline-T1-easy", "STTArena/Airline-T2-easy", "STTArena/Airline-T3-medium"):
        for seed in range(2):
            task = start(env_id, seed)[1].task
            for plan in task.alternatives:
                found += 1
                assert plan != task.oracle and played(env_id, seed, plan)[0] == 1.0
    assert found


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_the_traveller_answers_a_change_of_plan_alike_whether_or_not_it_can_be_made(conflict):
    """To any proposed change the traveller states their hard constraints, in the same words at every level (the
    consulted stories add that they need to be asked about the airline, feasible or not)."""
    import re

    from sttgym.user import RuleUser

    replies = {}
    for level in ("easy", "medium", "hard", "impossible"):
        task = start(f"STTArena/Airline-{conflict}-{level}")[1].task
        reply = RuleUser(task.profile).reply("Could I book you on a different flight instead?")
        replies[level] = re.sub(r"\b[A-Z]{3}\b|\d+(?::\d+)?", "#", reply.replace(
            ", on the airline I need: ask me which.", "."))
    assert len(set(replies.values())) == 1, replies


# ----------------------------------------------------------------- exploits


def next_flight_policy(env, seed: int, reread: bool) -> float:
    """Rebook the next flight on the same route: the nominal plan, then move the booking's onward leg onto the
    first flight leaving after the planned one, by the schedule as first searched (``reread``: as searched again
    now, which reads the change but does not weigh it), then ticket."""
    env.reset(seed=seed)
    task, saved, results = env.unwrapped.task, {}, []
    for c in task.nominal_plan:
        results.append(call(env, c.name, **resolve(c.arguments, saved)))
        saved[c.save_as or ""] = results[-1]
    hold = next(c for c in task.nominal_plan if c.name == "hold_itinerary")
    booking = saved[hold.save_as]["data"]["booking_id"]
    planned = hold.arguments["flight_ids"][-1]
    leg = next(i for i, c in enumerate(task.nominal_plan) if c.name == "search_flights"
               and c.arguments["destination"] == task.initial_state["flights"][planned]["destination"])
    search = task.nominal_plan[leg]
    flights = (call(env, "search_flights", **search.arguments) if reread else results[leg])["data"]["flights"]
    was = task.initial_state["flights"][planned]["departs"]
    later = [f["flight_id"] for f in flights if f["departs"] > was and f["flight_id"] != planned]
    if later:
        call(env, "change_segment", booking_id=booking, old_flight_id=planned, new_flight_id=later[0])
        call(env, "confirm_booking", booking_id=booking)
    return finish(env)["score"]


def rebook_same_policy(env, seed: int) -> float:
    """Confirm the original itinerary blind: the nominal plan, then hold the same flights again and ticket them
    with the passport the nominal plan recorded."""
    env.reset(seed=seed)
    task, saved = env.unwrapped.task, {}
    for c in task.nominal_plan:
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    hold = next(c for c in task.nominal_plan if c.name == "hold_itinerary")
    again = call(env, "hold_itinerary", **hold.arguments)
    if again["success"]:
        call(env, "confirm_booking", booking_id=again["data"]["booking_id"])
        call(env, "record_travel_document", booking_id=again["data"]["booking_id"],
             document_number=task.nominal_plan[-1].arguments["document_number"])
    return finish(env)["score"]


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_taking_the_next_flight_by_the_old_schedule_earns_nothing(conflict):
    """The failed ticket already shows the change (so the policy noticed it); what fails is the outcome. In T3 the
    next flight on the leg is the partner flight the recovery needs, but ticketing it at the plain fare breaks the
    budget: the hold counts, the ticket never comes."""
    for level in ("easy", "medium"):
        env = gym.make(f"STTArena/Airline-{conflict}-{level}")
        scores = [next_flight_policy(env, seed, reread=False) for seed in range(3)]
        assert max(scores) <= (2 / 3 if conflict == "T3" else 0.25), (level, scores)


@pytest.mark.parametrize("env_id", ["STTArena/Airline-T2-easy", "STTArena/Airline-S1-easy",
                                    "STTArena/Airline-ST1-easy", "STTArena/Airline-ST2-easy",
                                    "STTArena/Airline-T2-medium", "STTArena/Airline-S3-easy"])
def test_even_seen_anew_the_next_flight_on_the_leg_is_not_the_answer(env_id):
    env = gym.make(env_id)
    scores = [next_flight_policy(env, seed, reread=True) for seed in range(4)]
    assert max(scores) <= 0.25, scores


@pytest.mark.parametrize("conflict", [c for c in CONFLICTS if c != "T1"])
def test_ticketing_the_original_routing_again_earns_nothing(conflict):
    env = gym.make(f"STTArena/Airline-{conflict}-easy")
    scores = [rebook_same_policy(env, seed) for seed in range(3)]
    assert max(scores) <= 0.25, scores


def test_t1_holding_again_and_ticketing_at_once_is_the_recovery_only_while_the_seats_last():
    """In T1 the change is the hold lapsing, and the failed ticket says so ("expired"): holding the same flights
    again and ticketing at once is the easy recovery, noticed by that error alone. Once the lapsed seats are sold
    (medium, hard) it earns nothing."""
    assert [rebook_same_policy(gym.make("STTArena/Airline-T1-easy"), seed) for seed in range(3)] == [1.0] * 3
    for level in ("medium", "hard"):
        assert max(rebook_same_policy(gym.make(f"STTArena/Airline-T1-{level}"), seed) for seed in range(3)) == 0.0


# ----------------------------------------------------------------- the traveller's airline, told only when asked


def airline_alternatives(task) -> tuple[list[str], list[list[str]]]:
    """The routing the oracle tickets, and every other carrier's routing through the same hub that connects and
    lands in time."""
    flights, spec = task.initial_state["flights"], request_of(task)
    world = AirlineWorld(copy.deepcopy(task.initial_state), Clock(task.start_time))
    right = [c for c in task.oracle if c.name == "hold_itinerary"][-1].arguments["flight_ids"]
    hub, carrier = flights[right[0]]["destination"], flights[right[0]]["carrier"]
    legs = [(x, y) for (x, fx), (y, fy) in product(sorted(flights.items()), repeat=2)
            if (fx["origin"], fx["destination"], fy["origin"], fy["destination"]) == (spec["origin"], hub, hub,
                                                                                      spec["destination"])
            and fx["carrier"] == fy["carrier"] != carrier and fy["arrives"] <= spec["arrive_by"]
            and not world.problems(spec["passenger"], [x, y], "economy")]
    return right, [list(pair) for pair in legs]


@pytest.mark.parametrize("conflict, level", product(["ST2", "S3"], ["medium", "hard"]))
def test_a_rebooking_needs_the_airline_the_traveller_tells_only_when_asked(conflict, level):
    def others(env, seed):  # the oracle's recovery on each other carrier's routing, without the question
        right, routings = airline_alternatives(env.unwrapped.task)
        return [unasked(env.unwrapped.task, dict(zip(right, other))) for other in routings]

    outcomes = assert_withheld_story(f"STTArena/Airline-{conflict}-{level}", CONSULT, "asked_airline", others,
                                     offer="Shall I book you on another routing via a different hub?")
    assert all(run.static for run in outcomes)  # each other carrier's routing flies the request as it stands


def test_the_traveller_s_airline_is_not_the_first_routing_listed():
    env, firsts = gym.make("STTArena/Airline-ST2-hard"), set()
    for seed in range(8):
        env.reset(seed=seed)
        right, others = airline_alternatives(env.unwrapped.task)
        flights = env.unwrapped.task.initial_state["flights"]
        firsts.add(min([right, *others], key=lambda r: flights[r[0]]["departs"]) == right)
    assert firsts == {True, False}


# ------------------------------------------------- impossible: why the other routings fail, not just the change


def _flights(task, origin: str = "", destination: str = "", seats: int | None = None) -> list[str]:
    return [f for f, x in sorted(task.initial_state["flights"].items())
            if (not origin or x["origin"] == origin) and (not destination or x["destination"] == destination)
            and (seats is None or x["seats"]["economy"] == seats)]


def _legs(task) -> tuple[str, str, str, str]:
    """The planned flights, the hub they connect at and the other hub a flight from the origin reaches (if any)."""
    f1, f2 = next(c for c in task.nominal_plan if c.name == "hold_itinerary").arguments["flight_ids"]
    flights, spec = task.initial_state["flights"], request_of(task)
    hub = flights[f1]["destination"]
    hubs = [flights[f]["destination"] for f in _flights(task, spec["origin"]) if flights[f]["destination"] != hub
            and _flights(task, flights[f]["destination"], spec["destination"])]
    other = hubs[0] if hubs else ""
    return f1, f2, hub, other


def _twin(task, hub: str) -> str:
    airports = task.initial_state["airports"]
    return next(a for a, x in sorted(airports.items()) if x["city"] == airports[hub]["city"] and a != hub)


def _s1(task):
    f1, f2, hub, _ = _legs(task)
    twin = _twin(task, hub)
    direct = _flights(task, request_of(task)["origin"], twin)[0]
    return (f"{f2} now operates from {twin}, too far from where {f1} lands",
            f"the direct flight {direct} into {twin} is full")


def _s3(task):
    _, _, hub, _ = _legs(task)
    spec = request_of(task)
    return (f"under a new rule you would need a transit visa to connect at {hub}",
            f"the direct flight {_flights(task, spec['origin'], spec['destination'])[0]} is full")


def _t1(task):
    _, _, _, other = _legs(task)
    return ("your hold lapsed when the fare closed and both of your flights then sold out",
            f"the only other routing, via {other}, lands after your deadline")


def _t2(task):
    f1, f2, hub, _ = _legs(task)
    return f"{f2} was pulled forward, so {f1} no longer connects", f"the earlier flight into {hub} is full"


def _t3(task):
    code = next(c for c in task.initial_state["promotions"] if c in task.query)
    _, _, hub, _ = _legs(task)
    other = _flights(task, hub, request_of(task)["destination"], seats=0)[0]
    return (f"promotion {code} is exhausted and the fare without it is over your budget",
            f"the other promotion only covers the other carrier, and its flight {other} is full")


def _st2(task):
    f1, f2, hub, other = _legs(task)
    city = task.initial_state["airports"][other]["city"]
    return (f"a ground stop has closed {hub} and cancelled {f1} and {f2}",
            f"the only other routing, through {city}, lands too late for you")


def _st3(task):
    f1, f2, _, _ = _legs(task)
    carrier = task.initial_state["carriers"][task.initial_state["flights"][f1]["carrier"]]["name"]
    return (f"{f1} is delayed and now misses the interline connection to {f2}",
            f"{carrier}'s own onward flight is full and the next one lands too late")


@pytest.mark.parametrize("conflict, seed, words", [("S1", 0, _s1), ("S1", 3, _s1), ("S3", 2, _s3), ("T1", 1, _t1),
                                                    ("T2", 4, _t2), ("T3", 0, _t3), ("T3", 5, _t3),
                                                    ("ST2", 1, _st2), ("ST3", 2, _st3)])
def test_an_impossible_trip_s_refusal_says_why_the_other_routings_fail_too(conflict, seed, words):
    """The change blocks the routing asked for; the other routings fail for reasons only reading them shows (a
    full flight, a late landing). A refusal in plain words after the oracle's reads that names the change and
    one of those reasons scores 1.0; naming the change alone is not enough."""
    env_id = f"STTArena/Airline-{conflict}-impossible"
    task = start(env_id, seed)[1].task
    reads, said = task.oracle[:-1], task.oracle[-1]
    assert said.name == "chat_with_user"
    change, why = words(task)

    def refusal(message: str) -> dict:
        traj = rollout(gym.make(env_id), PlanAgent(reads + [Call(name="chat_with_user", arguments={
            "message": message})]), seed=seed)
        return {"score": traj.reward, **{c["name"]: c["passed"] for c in traj.info["checklist"]}}

    full = refusal(f"I'm sorry, I can't book this trip: {change}, and {why}.")
    assert full["score"] == 1.0, full
    alone = refusal(f"I'm sorry, I can't book this trip: {change}.")
    assert alone["score"] == 0.0 and not alone["named_why_no_alternative"], alone
    assert all(passed for name, passed in alone.items() if name not in ("score", "named_why_no_alternative")), alone


# ------------------------------------------ hard: the passport on the traveller's profile switches after the recovery


def test_the_passport_is_asked_for_and_answered_alike_at_every_level_and_switches_at_medium_and_hard():
    # A sentence or an answer only some levels have would tell the agent the level; at easy the passport holds.
    question = "Which passport should I record on your ticket?"
    for conflict in CONFLICTS:
        replies = set()
        for level in ("easy", "medium", "hard", "impossible"):
            env, arena = start(f"STTArena/Airline-{conflict}-{level}", seed=1)
            assert PASSPORT in arena.task.query and "current" not in arena.task.query
            assert ("passport_switched" in [t.name for t in arena.task.triggers]) == (level in ("medium", "hard"))
            replies.add(call(env, "chat_with_user", message=question)["data"]["reply"])
        assert len(replies) == 1 and "passenger profile" in replies.pop(), conflict


def stale(task) -> list[Call]:
    """The oracle without its second look at the profile: the passport read at first stays on the ticket."""
    records = [i for i, c in enumerate(task.oracle) if c.name == "record_travel_document"]
    return task.oracle[:records[0] + 1] + task.oracle[records[-1] + 1:]


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_at_hard_the_passport_switches_once_the_recovery_is_ticketed_and_only_the_profile_shows_it(conflict):
    # The switch waits for the recovery's ticket and a recorded passport, whichever routing the recovery took, and
    # leaves every write working: the number read at the start and recorded on the ticket goes stale.
    for env, seed, task, switch in second_changes(f"STTArena/Airline-{conflict}-hard", "passport_switched",
                                                  "get_passenger_profile"):
        traveller = switch.observable.args["passenger_id"]
        log = rollout(env, PlanAgent(task.oracle), seed=seed).info["trigger_log"]
        assert log[-1]["during"] == "record_travel_document"
        assert {tuple(c["path"].split(".")[:2]) for c in log[-1]["changes"]} == {("passengers", traveller)}
        first = task.initial_state["passengers"][traveller]["travel_document"]
        assert env.unwrapped.world.state["documents"][first] == task.initial_state["documents"][first]
        traj = rollout(env, PlanAgent(stale(task)), seed=seed)
        passed = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        # the recovered ticket still counts; the stale passport fails what it was for
        assert passed["ticketed"] and not passed["passport_recorded"] and 0.0 < traj.reward < 1.0, passed
        assert all(c["result"]["success"] for c in env.unwrapped.log.calls if c["name"] == "record_travel_document")
        nominal = rollout(env, PlanAgent(task.nominal_plan), seed=seed)
        assert "passport_switched" not in [e["trigger"] for e in nominal.info["trigger_log"]]


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_at_medium_the_passport_switches_with_the_story_and_a_look_at_the_profile_after_it_finds_it(conflict):
    # Medium's switch comes in the call that brings the story's change, so the profile read after it shows the new
    # passport; the number read before it and kept on the ticket is stale, as at hard.
    for env, seed, task, switch in second_changes_with_the_story(f"STTArena/Airline-{conflict}-medium",
                                                                 "passport_switched", "get_passenger_profile"):
        traveller = switch.observable.args["passenger_id"]
        log = rollout(env, PlanAgent(task.oracle), seed=seed).info["trigger_log"]
        switched = next(e for e in log if e["trigger"] == "passport_switched")
        later = next(c["new"] for c in switched["changes"] if c["path"].endswith("travel_document"))
        assert later != task.initial_state["passengers"][traveller]["travel_document"]
        number = task.initial_state["documents"][later]["number"]
        assert number in json.dumps(env.unwrapped.world.state["bookings"])  # the oracle recorded the new one
        traj = rollout(env, PlanAgent(stale(task)), seed=seed)
        passed = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        assert passed["ticketed"] and not passed["passport_recorded"] and 0.0 < traj.reward < 1.0, passed


@pytest.mark.parametrize("conflict", ["T2", "S1", "ST2"])
def test_a_passport_recorded_on_the_hold_goes_stale_at_the_ticket(conflict):
    # Whichever order the agent works in, the switch comes at the later of the ticket and the record (not T1, whose
    # five-minute holds outlive no record before the ticket).
    env_id = f"STTArena/Airline-{conflict}-hard"
    for seed in range(2):
        task = start(env_id, seed)[1].task
        plan = stale(task)
        record = next(i for i, c in enumerate(plan) if c.name == "record_travel_document")
        ticket = max(i for i, c in enumerate(plan[:record]) if c.name == "confirm_booking")
        early = plan[:ticket] + [plan[record], plan[ticket]] + plan[ticket + 1:record] + plan[record + 1:]
        traj = rollout(gym.make(env_id), PlanAgent(early), seed=seed)
        assert traj.info["trigger_log"][-1]["trigger"] == "passport_switched"
        assert traj.info["trigger_log"][-1]["during"] == "confirm_booking"
        passed = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        assert passed["ticketed"] and not passed["passport_recorded"] and 0.0 < traj.reward < 1.0, passed
