"""Hotel: tool behaviour on a hand-made city, the rules of the front desk, and scripted exploits."""

from __future__ import annotations

import copy
import json
from itertools import product

import gymnasium as gym
import pytest

from tests.arena.harness import (WorldHarness, assert_alternatives_score_one, by_level, second_changes,
                                 second_changes_with_the_story)
from tests.arena.withheld import assert_answers_alike, assert_withheld_story, unasked
import sttgym
from sttgym.agents import NominalAgent, OracleAgent, PlanAgent
from sttgym.agents.probes import BlindWriter
from sttgym.envs.arena.hotel.generator import CONSULT
from sttgym.envs.arena.hotel.world import HotelWorld, travel
from sttgym.rollout import rollout
from sttgym.task import Call, Ref, resolve
from sttgym.tools import collect_tools

START = "2024-05-06T09:00"
STAY = {"check_in": "2024-05-07", "nights": 2}


def city() -> dict:
    """Two hotels and a venue: HTL-A is 5 minutes' walk from the venue, HTL-B 20 by tram (or 40 round the back)."""
    hotel = {"district": "Old Town", "status": "open", "notice": "", "check_in_from": "15:00", "late_cutoff": "22:00",
             "night_desk": False, "key_lockers": 1, "hold_minutes": 30, "closed_floors": [], "closed_wings": [],
             "rush_cleans": 1}
    nights = {"2024-05-07": 1, "2024-05-08": 1}
    return {
        "hotels": {"HTL-A": {**hotel, "name": "Hotel Alba"},
                   "HTL-B": {**hotel, "name": "Hotel Borgo", "district": "Harbour", "night_desk": True}},
        "places": {"VEN-1": {"name": "Congress Centre", "kind": "venue", "district": "Old Town"}},
        "links": {"L1": {"a": "HTL-A", "b": "VEN-1", "minutes": 5, "mode": "walk", "name": "", "open": True},
                  "L2": {"a": "HTL-A", "b": "HTL-B", "minutes": 15, "mode": "tram", "name": "", "open": True},
                  "L3": {"a": "HTL-B", "b": "VEN-1", "minutes": 40, "mode": "road", "name": "", "open": True}},
        "room_types": {
            "RT-1": {"hotel": "HTL-A", "kind": "deluxe", "name": "Deluxe King", "floor": 3, "wing": "east", "rate": 100,
                     "accessible": False, "ready_from": "15:00", "inventory": dict(nights)},
            "RT-2": {"hotel": "HTL-A", "kind": "accessible", "name": "Accessible Twin", "floor": 1, "wing": "west",
                     "rate": 90, "accessible": True, "ready_from": "14:00", "inventory": dict(nights)},
            "RT-3": {"hotel": "HTL-B", "kind": "deluxe", "name": "Premier Double", "floor": 2, "wing": "east",
                     "rate": 120, "accessible": False, "ready_from": "12:00", "inventory": dict(nights)}},
        "promotions": {"FAIR10": {"hotel": "HTL-A", "kind": "deluxe", "discount_pct": 50, "nightly_quota": 1,
                                  "used": {}, "note": ""}},
        "guests": {"GST-1": {"name": "Ada", "tier": "gold", "needs_accessible": False, "payment_limit": 200,
                             "arrival": "2024-05-07T18:00", "arrival_note": ""}},
        "reservations": {},
        "shuttles": {"SHT-1": {"hotel": "HTL-A", "destination": "VEN-1", "departs": "2024-05-08T08:30", "seats": 1,
                               "riders": [], "status": "scheduled"}},
        "meeting_rooms": {"MTG-1": {"hotel": "HTL-A", "name": "Salon 1", "wing": "east", "capacity": 10,
                                    "slots": {"2024-05-07T09:00": None, "2024-05-07T11:00": None}}},
        "counters": {"reservation": 100},
    }


class Harness(WorldHarness):
    world_class, start, default_state = HotelWorld, START, staticmethod(city)

    def book(self, room_type: str = "RT-1", **extra) -> str:
        rid = self("hold_room", guest_id="GST-1", room_type_id=room_type, **STAY)["data"]["reservation_id"]
        assert self("confirm_reservation", reservation_id=rid, **extra)["success"]
        return rid


@pytest.fixture
def w() -> Harness:
    return Harness()


REQUEST = {"guest": "GST-1", "kind": "deluxe", "check_in": "2024-05-07", "nights": 2, "count": 1, "venue": "VEN-1",
           "max_minutes": 10, "hotel": "", "arrival": False, "shuttle_by": "", "meeting": "", "capacity": 1}


# ----------------------------------------------------------------------- tools


def test_a_hold_then_confirm_books_at_the_loyalty_price_and_takes_the_room(w):
    held = w("hold_room", guest_id="GST-1", room_type_id="RT-1", **STAY)
    assert held["success"] and held["data"]["expires_at"] == "2024-05-06T09:30"
    done = w("confirm_reservation", reservation_id=held["data"]["reservation_id"])
    assert done["success"] and done["data"]["price"] == 180  # two nights at 100, gold 10% off
    found = w("search_availability", hotel_id="HTL-A", kind="deluxe", **STAY)
    assert found["data"]["room_types"] == []


@pytest.mark.parametrize("change, error", [
    ({"guest_id": "GST-404"}, "no guest"),
    ({"room_type_id": "RT-9"}, "no room type"),
    ({"room_type_id": "RT-2"}, "accessible rooms are kept"),
    ({"check_in": "2024-05-01"}, "in the past"),
    ({"check_in": "07/05/2024"}, "ISO date"),
    ({"nights": 0}, "between 1 and 14"),
    ({"nights": 3}, "no room left"),
])
def test_a_bad_hold_is_refused_and_changes_nothing(w, change, error):
    before = copy.deepcopy(w.world.state)
    result = w("hold_room", **{"guest_id": "GST-1", "room_type_id": "RT-1", **STAY, **change})
    assert not result["success"] and error in result["error"]
    assert w.world.state == before


def test_a_hold_lapses_and_then_blocks_nothing(w):
    rid = w("hold_room", guest_id="GST-1", room_type_id="RT-1", **STAY)["data"]["reservation_id"]
    w.clock.advance(31)
    assert w("get_reservation", reservation_id=rid)["data"]["status"] == "expired"
    before = copy.deepcopy(w.world.state)
    refused = w("confirm_reservation", reservation_id=rid)
    assert not refused["success"] and "expired" in refused["error"] and w.world.state == before
    assert w("hold_room", guest_id="GST-1", room_type_id="RT-1", **STAY)["success"]


def test_the_card_limit_and_the_nightly_promotion_quota(w):
    w.world.state["guests"]["GST-1"]["payment_limit"] = 100
    rid = w("hold_room", guest_id="GST-1", room_type_id="RT-1", **STAY)["data"]["reservation_id"]
    before = copy.deepcopy(w.world.state)
    refused = w("confirm_reservation", reservation_id=rid)
    assert not refused["success"] and "card limit" in refused["error"] and w.world.state == before
    assert w("confirm_reservation", reservation_id=rid, promo_code="FAIR10")["success"]
    assert w.world.state["promotions"]["FAIR10"]["used"] == {"2024-05-07": 1, "2024-05-08": 1}
    quote = w("get_quote", guest_id="GST-1", room_type_id="RT-1", promo_code="FAIR10", **STAY)
    assert not quote["success"] and "sold out" in quote["error"]
    assert w("cancel_reservation", reservation_id=rid)["success"]  # the quota comes back
    assert w("list_promotions", hotel_id="HTL-A")["data"]["promotions"][0]["left"] == {"2024-05-07": 1,
                                                                                     "2024-05-08": 1}


def test_a_closed_floor_or_wing_or_hotel_blocks_rooms_and_meeting_rooms(w):
    s = w.world.state
    s["hotels"]["HTL-A"]["closed_floors"] = [3]
    before = copy.deepcopy(s)
    held = w("hold_room", guest_id="GST-1", room_type_id="RT-1", **STAY)
    assert not held["success"] and "floor 3" in held["error"] and s == before
    s["hotels"]["HTL-A"].update(closed_floors=[], closed_wings=["east"])
    before = copy.deepcopy(s)
    meet = w("book_meeting_room", meeting_room_id="MTG-1", start="2024-05-07T09:00", guest_id="GST-1")
    assert not meet["success"] and "east wing" in meet["error"] and s == before
    s["hotels"]["HTL-A"].update(closed_wings=[], status="outage")
    assert not w("search_availability", hotel_id="HTL-A", **STAY)["data"]["room_types"]


def test_a_late_arrival_needs_a_night_desk_or_a_key_locker(w):
    rid = w.book()
    before = copy.deepcopy(w.world.state)
    late = w("set_arrival", reservation_id=rid, arrival="2024-05-07T23:10")
    assert not late["success"] and "until 22:00" in late["error"] and w.world.state == before
    assert not w("set_arrival", reservation_id=rid, arrival="2024-05-08T10:00")["success"]  # not the check-in day
    assert w("reserve_key_locker", reservation_id=rid)["success"]
    assert w.world.state["hotels"]["HTL-A"]["key_lockers"] == 0
    assert w("set_arrival", reservation_id=rid, arrival="2024-05-07T23:10")["success"]


def test_housekeeping_rushes_a_room_with_notice_and_capacity(w):
    rid = w.book()
    assert not w("rush_housekeeping", reservation_id=rid, ready_by="2024-05-08T10:00")["success"]
    assert w("rush_housekeeping", reservation_id=rid, ready_by="2024-05-07T10:00")["success"]
    assert w.world.state["reservations"][rid]["ready_at"] == "2024-05-07T10:00"
    before = copy.deepcopy(w.world.state)
    again = w("rush_housekeeping", reservation_id=rid, ready_by="2024-05-07T11:00")
    assert not again["success"] and "no rush clean" in again["error"] and w.world.state == before


def test_a_shuttle_needs_a_stay_at_its_hotel_and_arrives_by_the_open_way(w):
    before = copy.deepcopy(w.world.state)
    refused = w("book_shuttle", shuttle_id="SHT-1", guest_id="GST-1")
    assert not refused["success"] and "no confirmed stay" in refused["error"] and w.world.state == before
    w.book()
    assert w("book_shuttle", shuttle_id="SHT-1", guest_id="GST-1")["success"]
    assert not w("book_shuttle", shuttle_id="SHT-1", guest_id="GST-1")["success"]
    assert w("list_shuttles", hotel_id="HTL-A")["data"]["shuttles"][0]["arrives"] == "2024-05-08T08:35"
    w.world.state["links"]["L1"]["open"] = False  # the detour by tram and road: 15 + 40 minutes
    assert w("list_shuttles", hotel_id="HTL-A")["data"]["shuttles"][0]["arrives"] == "2024-05-08T09:25"
    assert w("get_travel_time", origin_id="HTL-A", destination_id="VEN-1")["data"]["minutes"] == 55


def test_the_request_checks_read_reach_and_extras_from_the_final_world(w):
    world = w.world
    rid = w.book()
    assert world.booked(REQUEST) and world.only_as_asked(REQUEST)
    world.state["links"]["L1"]["open"] = False  # HTL-A is now 55 minutes from the venue
    assert not world.booked(REQUEST) and not world.only_as_asked(REQUEST)
    world.state["links"]["L1"]["open"] = True
    extras = {**REQUEST, "arrival": True}
    assert not world.arranged(extras)  # no arrival recorded
    assert w("set_arrival", reservation_id=rid, arrival="2024-05-07T18:00")["success"]
    assert world.arranged(extras)
    world.state["guests"]["GST-1"]["arrival"] = "2024-05-07T11:00"  # earlier than the room is ready
    assert not world.arranged(extras)
    world.state["guests"]["GST-1"]["payment_limit"] = 300
    w.book("RT-3")  # a second stay elsewhere: more than asked
    assert not world.only_as_asked(REQUEST)


def test_the_world_changes_leave_confirmed_stays_alone():
    w = Harness()
    rid = w.book()
    held = w("hold_room", guest_id="GST-1", room_type_id="RT-3", **STAY)["data"]["reservation_id"]
    w.world.release_holds(guest="GST-1", minutes=5, notice="")  # at the hotel of the open hold only
    assert w("get_reservation", reservation_id=held)["data"]["status"] == "expired"
    assert w("get_reservation", reservation_id=rid)["data"]["status"] == "confirmed"
    assert [w.world.state["hotels"][h]["hold_minutes"] for h in ("HTL-A", "HTL-B")] == [30, 5]
    w.world.take_lapsed(guest="GST-1")  # the released hold's room type, on its nights
    assert w("get_room_type", room_type_id="RT-3")["data"]["free"] == {"2024-05-07": 0, "2024-05-08": 0}
    w.world.walk_guest(guest="GST-1", hotel="HTL-A", to_room_type="RT-3", note="walked")
    assert w.world.state["reservations"][rid]["hotel"] == "HTL-B"


def test_the_changes_fall_on_what_the_guest_booked():
    w = Harness()
    w.book("RT-1")  # floor 3, east wing
    w.world.close_booked(guest="GST-1", hotel="HTL-A", part="floor", notice="leak")
    assert w.world.state["hotels"]["HTL-A"]["closed_floors"] == [3]
    w.world.close_booked(guest="GST-1", hotel="HTL-A", part="wing", notice="works")
    assert w.world.state["hotels"]["HTL-A"]["closed_wings"] == ["east"]
    s = w.world.state
    s["shuttles"]["SHT-2"] = {**s["shuttles"]["SHT-1"], "riders": []}
    assert w("book_shuttle", shuttle_id="SHT-2", guest_id="GST-1")["success"]
    w.world.cut_power(guest="GST-1", notice="", hotel_wide=False)  # only the guest's departure
    assert [s["shuttles"][x]["status"] for x in ("SHT-1", "SHT-2")] == ["scheduled", "cancelled"]
    w.world.cut_power(guest="GST-1", notice="dark", hotel_wide=True)  # no seat left to cut: nothing happens
    assert s["hotels"]["HTL-A"]["status"] == "open"
    assert w("book_shuttle", shuttle_id="SHT-1", guest_id="GST-1")["success"]
    w.world.cut_power(guest="GST-1", notice="dark", hotel_wide=True)
    assert s["hotels"]["HTL-A"]["status"] == "outage" and s["shuttles"]["SHT-1"]["status"] == "cancelled"
    s["hotels"]["HTL-C"] = {**s["hotels"]["HTL-B"], "district": "Old Town"}
    w.world.spread_outage(notice="dark")  # the district's other hotel, not the one across town
    assert [s["hotels"][h]["status"] for h in ("HTL-B", "HTL-C")] == ["open", "outage"]


def test_the_quota_reset_hits_the_rate_of_the_hotel_held_at():
    w = Harness()
    w.world.state["promotions"]["FAIR20"] = {**w.world.state["promotions"]["FAIR10"], "hotel": "HTL-B", "used": {}}
    w("hold_room", guest_id="GST-1", room_type_id="RT-3", **STAY)
    w.world.reset_quota(guest="GST-1", codes=["FAIR10", "FAIR20"], night="2024-05-08")
    promotions = w.world.state["promotions"]
    assert promotions["FAIR10"]["used"] == {} and promotions["FAIR20"]["used"] == {"2024-05-08": 1}


# -------------------------------------------------------------------- scenarios


def test_every_conflict_and_level_is_registered():
    ids = sttgym.arena_ids("Hotel")
    assert len(ids) == 36 and "STTArena/Hotel-ST3-impossible" in ids


def start(env_id: str, seed: int):
    env = gym.make(env_id)
    env.reset(seed=seed)
    return env, env.unwrapped


def call(env, name: str, **arguments) -> dict:
    obs, *_ = env.step({"name": name, "arguments": arguments})
    return json.loads(obs)


def finish(env) -> float:
    *_, info = env.step({"content": "Task Completed"})
    return info["score"]


def test_t1_holds_are_released_by_a_hold_not_by_reading():
    env, arena = start("STTArena/Hotel-T1-medium", seed=3)
    for c in arena.task.nominal_plan:
        if c.name != "hold_room":
            continue
        hotel = arena.world.state["room_types"][c.arguments["room_type_id"]]["hotel"]
        for name, args in (("get_hotel", {"hotel_id": hotel}), ("list_guest_reservations",
                                                               {"guest_id": c.arguments["guest_id"]})):
            assert call(env, name, **args)["success"]
        assert not arena.log.events  # reading never fires anything
        held = call(env, "hold_room", **c.arguments)
        assert held["success"] and arena.log.events[0]["trigger"] == "holds_released"
        listed = call(env, "list_guest_reservations", guest_id=c.arguments["guest_id"])
        assert listed["data"]["reservations"][-1]["status"] == "expired"
        break


@pytest.mark.parametrize("conflict", ["T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3"])
def test_the_blind_writer_meets_every_trigger_and_is_disrupted(conflict):
    env = gym.make(f"STTArena/Hotel-{conflict}-hard")
    traj = rollout(env, BlindWriter(), seed=5)
    # The hard level's flight change waits for a recovery's confirmed stay, which a blind writer may never get.
    fired = {e["trigger"] for e in traj.info["trigger_log"]} - {"flight_moved"}
    assert fired == {t.name for t in env.unwrapped.task.triggers} - {"flight_moved"}
    assert traj.reward == 0.0
    assert all(env.unwrapped.tools[n].mutates for t in env.unwrapped.task.triggers for n in t.activation)


@pytest.mark.parametrize("conflict", ["T1", "S1", "S3", "ST3"])
def test_impossible_tasks_need_the_blocking_fact_and_punish_a_booking_anyway(conflict):
    env_id = f"STTArena/Hotel-{conflict}-impossible"
    assert rollout(gym.make(env_id), OracleAgent(), seed=0).reward == 1.0
    assert rollout(gym.make(env_id), NominalAgent(), seed=0).reward == 0.0
    env, arena = start(env_id, seed=0)
    vague = [c if c.name != "chat_with_user" else c.model_copy(update={"arguments": {
        "message": "I'm sorry, but I cannot make this booking for you; something changed and it no longer works."}})
        for c in arena.task.oracle]
    assert rollout(gym.make(env_id), PlanAgent(vague), seed=0).reward == 0.0
    # The oracle's reads and refusal, but with an out-of-reach room booked anyway "so the guest has something".
    saved = {}
    for c in arena.task.oracle:
        if c.name != "chat_with_user":
            saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    kind = next(c for c in arena.task.nominal_plan if c.name == "search_availability").arguments
    booked = False
    for hotel in arena.world.state["hotels"]:
        found = call(env, "search_availability", hotel_id=hotel, check_in=kind["check_in"], nights=kind["nights"])
        for row in found["data"]["room_types"]:
            held = call(env, "hold_room", guest_id=arena.task.profile.known_facts[0].split()[-1],
                        room_type_id=row["room_type_id"], check_in=kind["check_in"], nights=kind["nights"])
            if held["success"] and call(env, "confirm_reservation",
                                        reservation_id=held["data"]["reservation_id"])["success"]:
                booked = True
                break
        if booked:
            break
    assert booked
    call(env, "chat_with_user", message=next(c for c in arena.task.oracle if c.name == "chat_with_user")
         .arguments["message"])
    assert finish(env) == 0.0


def test_a_stored_task_replays_and_each_seed_draws_a_different_city():
    env, arena = start("STTArena/Hotel-S2-hard", seed=11)
    again = gym.make("STTArena/Hotel-S2-hard")
    again.reset(options={"task": json.loads(arena.task.model_dump_json())})
    assert again.unwrapped.task.initial_state == arena.task.initial_state
    assert rollout(again, OracleAgent(), seed=11).reward == 1.0
    _, other = start("STTArena/Hotel-S2-hard", seed=12)
    assert other.task.initial_state != arena.task.initial_state


# --------------------------------------------------------------------- exploits


def same_room_again(env, seed: int) -> float:
    """The cheapest recovery: the nominal plan, then once more a hold of the same room type at the same hotel and a
    confirmation (with the same promotion), and the arrival where the request asks for it, without any read of
    what changed (a failed write may show it)."""
    env.reset(seed=seed)
    task, saved = env.unwrapped.task, {}
    for c in task.nominal_plan:
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    for c in task.nominal_plan:
        if c.name == "hold_room":
            again = call(env, "hold_room", **c.arguments)
            if again["success"]:
                promo = next((x.arguments.get("promo_code") for x in task.nominal_plan
                              if x.name == "confirm_reservation" and x.arguments.get("promo_code")), "")
                call(env, "confirm_reservation", reservation_id=again["data"]["reservation_id"],
                     **({"promo_code": promo} if promo else {}))
                for x in task.nominal_plan:
                    if x.name == "set_arrival":
                        call(env, "set_arrival", reservation_id=again["data"]["reservation_id"],
                             arrival=x.arguments["arrival"])
    return finish(env)


def confirm_blind(env, seed: int) -> float:
    """Confirm each hold the moment it is placed (at the rate and promotion the plan names), skip every check and
    read, and declare success: the held rate confirmed blind."""
    env.reset(seed=seed)
    task, saved = env.unwrapped.task, {}
    for c in task.nominal_plan:
        if not env.unwrapped.tools[c.name].mutates:
            continue
        if c.name == "confirm_reservation":
            continue
        result = saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
        if c.name == "hold_room" and result["success"]:
            promo = next((x.arguments.get("promo_code") for x in task.nominal_plan
                          if x.name == "confirm_reservation" and x.arguments.get("promo_code")), "")
            call(env, "confirm_reservation", reservation_id=result["data"]["reservation_id"],
                 **({"promo_code": promo} if promo else {}))
    return finish(env)


@pytest.mark.parametrize("env_id", ["STTArena/Hotel-T1-medium", "STTArena/Hotel-T3-easy", "STTArena/Hotel-S1-easy",
                                    "STTArena/Hotel-ST1-easy", "STTArena/Hotel-S2-easy"])
def test_rebooking_the_same_room_type_at_the_same_hotel_earns_little(env_id):
    # Whatever the failed write showed, the same room type again does not meet the request: it was taken, walked,
    # shifted or closed, or the promotion is gone.
    env = gym.make(env_id)
    scores = [same_room_again(env, seed) for seed in range(4)]
    assert max(scores) <= 0.25, scores


def test_on_s3_easy_the_earlier_shuttle_runs_only_once_the_ring_road_closes():
    # Listed from the start, the earlier run would let an agent book it before the closure and never meet the change.
    env = gym.make("STTArena/Hotel-S3-easy")
    for seed in range(3):
        env.reset(seed=seed)
        task = env.unwrapped.task
        ride = next(c for c in reversed(task.oracle) if c.name == "book_shuttle")
        early = ride.arguments["shuttle_id"]
        assert early not in task.initial_state["shuttles"]
        refused = call(env, "book_shuttle", **ride.arguments)
        assert not refused["success"] and early in refused["error"]
        traj = rollout(env, PlanAgent(task.oracle), seed=seed)
        assert traj.reward == 1.0 and early in env.unwrapped.world.state["shuttles"]


def test_on_t1_easy_the_retry_is_the_recovery_and_the_failed_confirmation_showed_the_release():
    # The confirmation's error names the lapsed hold: that is meeting the change, no particular read needed.
    env = gym.make("STTArena/Hotel-T1-easy")
    assert [same_room_again(env, seed) for seed in range(4)] == [1.0] * 4
    assert env.unwrapped.log.noticed("holds_released")


@pytest.mark.parametrize("env_id", ["STTArena/Hotel-T1-easy", "STTArena/Hotel-T1-hard", "STTArena/Hotel-T3-medium",
                                    "STTArena/Hotel-T2-easy", "STTArena/Hotel-ST3-easy"])
def test_confirming_the_held_rate_blind_earns_little(env_id):
    env = gym.make(env_id)
    scores = [confirm_blind(env, seed) for seed in range(4)]
    assert max(scores) <= 0.25, scores


def act_then_look(env, seed: int) -> float:
    """The nominal plan, then every read the oracle makes (so the change is seen), and nothing done about it."""
    env.reset(seed=seed)
    task, saved, tools = env.unwrapped.task, {}, env.unwrapped.tools
    for c in task.nominal_plan:
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    for c in task.oracle:
        if c.name in tools and not tools[c.name].mutates:
            call(env, c.name, **resolve(c.arguments, saved))
    assert env.unwrapped.log.noticed(task.triggers[0].name)
    return finish(env)


@pytest.mark.parametrize("conflict", ["T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3"])
def test_seeing_the_change_without_acting_on_it_earns_nothing(conflict):
    # Noticing is evidence, never credit: what the stale plan still holds counts only after a write of the agent's
    # own follows the change it saw (acted_on).
    env = gym.make(f"STTArena/Hotel-{conflict}-medium")
    scores = [act_then_look(env, seed) for seed in range(2)]
    assert max(scores) == 0.0, scores


def every_alternative(env_id: str, seed: int) -> list[str]:
    """After the oracle's reads (every change has happened), try each room type of the asked kind with every extra the
    request names (every promotion, a key locker, a rush clean, each shuttle or meeting room in turn); the room types
    with which the original goal is met."""
    env, arena = start(env_id, seed)
    saved = {}
    for c in arena.task.oracle:
        if c.name != "chat_with_user":
            saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    request = arena.task.static_checklist[0].holds.args["request"]
    changed = copy.deepcopy(arena.world.state)
    found = []
    for rt in [t for t, x in sorted(changed["room_types"].items()) if x["kind"] == request["kind"]]:
        arena.world.state = copy.deepcopy(changed)
        tools = collect_tools(arena.world)
        stay = {"guest_id": request["guest"], "check_in": request["check_in"], "nights": request["nights"]}
        for rid in [r for r, x in changed["reservations"].items() if x["guest"] == request["guest"]]:
            tools["cancel_reservation"].func(reservation_id=rid)
        booked = []
        for _ in range(request["count"]):
            held = tools["hold_room"].func(room_type_id=rt, **stay)
            for promo in ["", *sorted(changed["promotions"])] if held["success"] else []:
                rid = held["data"]["reservation_id"]
                if tools["confirm_reservation"].func(reservation_id=rid, **({"promo_code": promo} if promo else {}))[
                        "success"]:
                    booked.append(rid)
                    break
        arrival = changed["guests"][request["guest"]]["arrival"]
        for rid in booked if request["arrival"] and arrival else []:
            tools["reserve_key_locker"].func(reservation_id=rid)
            tools["rush_housekeeping"].func(reservation_id=rid, ready_by=arrival)
            tools["set_arrival"].func(reservation_id=rid, arrival=arrival)
        def met() -> bool:
            return all(arena.world.holds(c.holds, log=arena.log) for c in arena.task.static_checklist)

        # One shuttle seat or meeting room at a time (holding two is more than asked), kept once the goal holds.
        extras = [(tools["book_shuttle"], tools["cancel_shuttle_seat"], {"shuttle_id": x})
                  for x in sorted(changed["shuttles"]) if request["shuttle_by"]]
        extras += [(tools["book_meeting_room"], tools["release_meeting_room"], {"meeting_room_id": x,
                                                                                 "start": request["meeting"]})
                   for x in sorted(changed["meeting_rooms"]) if request["meeting"]]
        for book, undo, args in extras:
            if met():
                break
            if book.func(guest_id=request["guest"], **args)["success"] and not met():
                undo.func(guest_id=request["guest"], **args)
        if met():
            found.append(rt)
    return found


@pytest.mark.parametrize("conflict", ["T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3"])
def test_an_impossible_task_leaves_no_way_round_and_its_medium_twin_one(conflict):
    assert every_alternative(f"STTArena/Hotel-{conflict}-impossible", seed=1) == []
    assert every_alternative(f"STTArena/Hotel-{conflict}-medium", seed=1)  # the search does find a way when one exists


@pytest.mark.parametrize("conflict, level", product(["S1", "ST1"], ["medium", "hard"]))
def test_a_move_needs_the_amenity_the_guest_tells_only_when_asked(conflict, level):
    def others(env, seed):  # the oracle's recovery in every other room type that meets the request, unasked
        task = env.unwrapped.task
        right = [c for c in task.oracle if c.name == "hold_room"][-1].arguments["room_type_id"]
        return [unasked(task, {right: rt}) for rt in every_alternative(env.spec.id, seed) if rt != right]

    assert_withheld_story(f"STTArena/Hotel-{conflict}-{level}", CONSULT, "asked_amenity", others,
                          offer="Shall I book another hotel within reach instead?")


def test_the_guest_s_hotel_is_not_the_nearest_alternative():
    env_id, nearest = "STTArena/Hotel-ST1-medium", set()
    for seed in range(8):
        env, arena = start(env_id, seed)
        state, task = arena.world.state, arena.task
        right = [c for c in task.oracle if c.name == "hold_room"][-1].arguments["room_type_id"]
        venue = task.static_checklist[0].holds.args["request"]["venue"]
        ranked = sorted(every_alternative(env_id, seed), key=lambda rt: travel(state, state["room_types"][rt]["hotel"],
                                                                              venue))
        nearest.add(ranked[0] == right)
    assert nearest == {True, False}


# ------------------------------------------------------------ v2: what scores what

ALTERNATIVES = ["T1-medium", "T1-hard", "T2-medium", "T2-hard", "T3-medium", "T3-hard", "S2-easy", "S2-medium",
                "S2-hard", "ST2-easy", "ST2-medium", "ST2-hard", "ST3-medium", "ST3-hard"]


@pytest.mark.parametrize("scenario", ALTERNATIVES)
def test_every_other_first_choice_meets_the_change_and_scores_full(scenario):
    # Another hotel, room type, shuttle or meeting room the request allows, taken first: the change falls on what was
    # booked (or on the guest), so each of these solutions meets it, and carried through, each scores 1.0.
    env_id = f"STTArena/Hotel-{scenario}"
    assert all(assert_alternatives_score_one(env_id, seeds=[seed], noticed=True) for seed in range(2))


def test_s2_the_closure_falls_on_the_room_type_booked():
    # Reported on seed 4: the hotel's other room type of the kind, on a floor the planned one is not on, and the
    # meeting room. The closure now takes that floor: staying put fails, moving to the other room type scores 1.0.
    _, arena = start("STTArena/Hotel-S2-easy", seed=4)
    other = next(p for p in arena.task.alternatives if p[2].arguments != arena.task.nominal_plan[2].arguments)
    booked = other[:5]  # search, meeting rooms, hold, confirm, meeting room
    assert [c.name for c in booked][2:] == ["hold_room", "confirm_reservation", "book_meeting_room"]
    assert rollout(gym.make("STTArena/Hotel-S2-easy"), PlanAgent(booked), seed=4).reward == 0.0
    assert rollout(gym.make("STTArena/Hotel-S2-easy"), PlanAgent(other), seed=4).reward == 1.0


def test_a_failed_hold_that_shows_the_shift_is_meeting_it():
    # Reported on ST1 easy seed 3: the hold fails (no room left), the agent never searches the hotel asked for and
    # books where the rooms went: the failed hold's error showed the change.
    for seed in (3, 4):
        _, arena = start("STTArena/Hotel-ST1-easy", seed)
        named = arena.task.nominal_plan[0].arguments["hotel_id"]
        plan = [c for c in arena.task.oracle if c.arguments.get("hotel_id") != named]
        env = gym.make("STTArena/Hotel-ST1-easy")
        assert rollout(env, PlanAgent(plan), seed=seed).reward == 1.0
        assert env.unwrapped.log.noticed("rooms_shifted")


def test_an_honest_refusal_names_the_change_whenever_the_agent_held():
    # T1 impossible: the blocking facts are what the change brought (the allotment, the release, the short holds), not
    # when the oracle's own hold lapsed, so a refusal after any number of reads first still names one.
    env_id = "STTArena/Hotel-T1-impossible"
    for seed in range(3):
        _, arena = start(env_id, seed)
        task = arena.task
        assert not [f for f in task.impossibility.blocking_facts if f[:1].isdigit() and ":" in f]
        guest = task.profile.known_facts[0].split()[-1]
        reads = [Call(name="get_guest", arguments={"guest_id": guest}), Call(name="list_hotels"),
                 Call(name="list_guest_reservations", arguments={"guest_id": guest})] * 3
        said = Call(name="chat_with_user", arguments={"message": "I'm sorry, I can't book this: the congress "
                    "allotment opened, your hold was released and the waiting list took the room, and no other "
                    "hotel within reach has one for those nights."})
        plan = reads + [c for c in task.oracle if c.name != "chat_with_user"] + [said]
        assert rollout(gym.make(env_id), PlanAgent(plan), seed=seed).reward == 1.0


def test_an_unrelated_write_after_the_oracle_zeroes_the_score():
    env_id = "STTArena/Hotel-S2-easy"  # a request that asks for no arrival
    _, arena = start(env_id, seed=0)
    task, state = arena.task, arena.task.initial_state
    guest = task.profile.known_facts[0].split()[-1]
    theirs = next(r for r, x in sorted(state["reservations"].items()) if x["guest"] != guest)
    stay = {k: task.nominal_plan[0].arguments[k] for k in ("check_in", "nights")}
    spare = next(t for t, x in sorted(state["room_types"].items()) if x["kind"] != "accessible"
                 and x["hotel"] != task.nominal_plan[0].arguments["hotel_id"])
    extra = Call(name="hold_room", save_as="extra", arguments={"guest_id": guest, "room_type_id": spare, **stay})
    let_go = Call(name="cancel_reservation", arguments={"reservation_id": Ref(step="extra",
                                                                              path=("data", "reservation_id"))})
    noted = Call(name="set_arrival", arguments={"reservation_id": Ref(step="new0", path=("data", "reservation_id")),
                                                "arrival": f"{stay['check_in']}T16:00"})

    def score(*after: Call) -> float:
        return rollout(gym.make(env_id), PlanAgent([*task.oracle, *after]), seed=0).reward

    assert score() == 1.0 and score(extra, let_go) == 1.0  # a hold let go again commits nothing
    assert score(Call(name="cancel_reservation", arguments={"reservation_id": theirs})) == 0.0  # someone else's
    assert score(extra) == 0.0  # an extra hold left open
    assert score(noted) == 0.0  # an arrival nobody gave




def test_a_second_meeting_room_for_the_slot_is_an_extra_booking():
    # Each of S2's meeting rooms is a solution (Task.alternatives), so either slot may change; holding both may not.
    env_id = "STTArena/Hotel-S2-easy"
    for seed in range(3):
        _, arena = start(env_id, seed)
        task = arena.task
        booked = [c for c in task.oracle if c.name == "book_meeting_room"][-1]
        hotel = task.nominal_plan[0].arguments["hotel_id"]
        other = next(m for m, x in sorted(task.initial_state["meeting_rooms"].items()) if x["hotel"] == hotel
                     and m != booked.arguments["meeting_room_id"] and booked.arguments["start"] in x["slots"])
        second = booked.model_copy(update={"arguments": {**booked.arguments, "meeting_room_id": other}})
        assert rollout(gym.make(env_id), PlanAgent([*task.oracle, second]), seed=seed).reward == 0.0


def test_the_guest_answers_alike_whether_or_not_the_request_can_be_met():
    # an impossible twin withholds a fact too, so that one held back is as common among the impossible instances
    # (1 id in 9) as among the feasible ones (4 in 27)
    assert_answers_alike("Hotel", ("S1-medium", "S1-hard", "S1-impossible", "ST1-medium", "ST1-hard"))


@pytest.mark.parametrize("conflict", ["S1", "ST1", "T1", "T3"])
def test_the_arrival_is_asked_for_at_every_level_and_moves_at_medium_and_hard(conflict):
    # A request only some levels make would tell the agent the level; at easy the profile's arrival simply holds.
    for level, env, task in by_level(f"STTArena/Hotel-{conflict}", seed=1):
        assert "record my arrival time from my guest profile" in task.query
        assert ("flight_moved" in [t.name for t in task.triggers]) == (level in ("medium", "hard"))
        if task.solvable:
            assert rollout(env, PlanAgent(task.oracle), seed=1).reward == 1.0


@pytest.mark.parametrize("conflict", ["S1", "ST1", "T1", "T3"])
def test_at_hard_the_flight_moves_once_the_recovery_is_confirmed_and_only_the_profile_shows_it(conflict):
    # The second change waits for the first confirmation after the story's change, wherever the recovery booked, and
    # leaves every write working: the arrival read at the start and recorded after the confirmation is stale.
    for env, seed, task, moved in second_changes(f"STTArena/Hotel-{conflict}-hard", "flight_moved", "get_guest"):
        planned = task.initial_state["guests"][moved.observable.args["guest_id"]]["arrival"]
        stale = [c.model_copy(update={"arguments": {**c.arguments, "arrival": planned}})
                 if c.name == "set_arrival" else c for c in task.oracle]
        log = rollout(env, PlanAgent(task.oracle), seed=seed).info["trigger_log"]
        assert log[-1]["during"] == "confirm_reservation"
        traj = rollout(env, PlanAgent(stale), seed=seed)
        passed = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        # the recovered stay still counts; the stale arrival fails what it was for
        assert passed["booked"] is True and passed["arranged"] is False and 0.0 < traj.reward < 1.0
        nominal = rollout(env, PlanAgent(task.nominal_plan), seed=seed)
        assert "flight_moved" not in [e["trigger"] for e in nominal.info["trigger_log"]]


@pytest.mark.parametrize("conflict", ["S1", "ST1", "T1", "T3"])
def test_at_medium_the_flight_moves_in_the_call_of_the_story_s_change_and_a_stale_arrival_loses_arranged(conflict):
    # Medium's second change comes in the very call that sets off the story's change, whatever the agent does next:
    # a read of the profile once the first change shows finds the new arrival, and the one read at the start, recorded
    # on the recovered stay, is stale.
    medium = f"STTArena/Hotel-{conflict}-medium"
    for _, seed, task, moved in second_changes_with_the_story(medium, "flight_moved", "get_guest"):
        env, arena = start(medium, seed)
        story = task.triggers[0]
        guest = moved.observable.args["guest_id"]
        planned = task.initial_state["guests"][guest]["arrival"]
        later = next(op.args["value"] for op in moved.effect if op.args["path"][-1] == "arrival")
        assert later > planned
        saved, during = {}, []
        for c in task.nominal_plan:  # the nominal plan, one call at a time, until the story's change fires
            before = len(arena.log.events)
            saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
            during = [e["trigger"] for e in arena.log.events[before:]]
            if story.name in during:
                break
        assert story.name in during and "flight_moved" in during, (seed, during)
        assert during.index("flight_moved") > during.index(story.name)
        assert arena.world.state["guests"][guest]["arrival"] == later
        assert call(env, "get_guest", guest_id=guest)["data"]["arrival"] == later
        # the oracle re-reads the profile and records the new arrival; keeping the first one loses what it was for
        recorded = [c.arguments["arrival"] for c in task.oracle if c.name == "set_arrival"]
        assert recorded and set(recorded) == {later}, (seed, recorded)
        stale = [c.model_copy(update={"arguments": {**c.arguments, "arrival": planned}})
                 if c.name == "set_arrival" else c for c in task.oracle]
        traj = rollout(env, PlanAgent(stale), seed=seed)
        passed = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        assert passed["booked"] is True and passed["arranged"] is False and 0.0 < traj.reward < 1.0, (seed, passed)
