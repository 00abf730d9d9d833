"""Ticketing: tool behaviour on a hand-made venue, the tricky rules, and the cheap shortcuts that must fail."""

from __future__ import annotations

import copy
import json
import re
from itertools import product

import gymnasium as gym
import pytest

from tests.arena.harness import (WorldHarness, assert_alternatives_score_one, second_changes,
                                 second_changes_with_the_story)
from tests.arena.withheld import assert_answers_alike, assert_withheld_story, play, unasked
from sttgym.agents import NominalAgent, OracleAgent, PlanAgent
from sttgym.agents.probes import AlwaysRefuse, BlindWriter
from sttgym.checklist import evaluate
from sttgym.envs.arena.ticketing.generator import CONSULT, NAMES, hold_id, order_id
from sttgym.envs.arena.ticketing.world import TicketingWorld, adjacent_block
from sttgym.rollout import rollout
from sttgym.task import Call, resolve
from sttgym.user import RuleUser

START = "2024-05-06T10:00"


def venue() -> dict:
    """One venue with two gates: the North gate is a 10-minute tram ride from home, the South gate 40 minutes by
    metro; a show at 19:00 with a 15-minute cart, three sections and two promotions."""
    slots = {"2024-05-06T18:30": 10, "2024-05-06T18:45": 10, "2024-05-06T19:00": 1, "2024-05-06T19:30": 10}
    return {
        "places": {"HOME": {"name": "home", "kind": "home"}, "STN-A": {"name": "A", "kind": "station"},
                   "GT-N": {"name": "North gate", "kind": "gate"}, "GT-S": {"name": "South gate", "kind": "gate"}},
        "links": {"L1": {"a": "HOME", "b": "GT-N", "minutes": 10, "open": True, "line": "Tram 3"},
                  "L2": {"a": "HOME", "b": "STN-A", "minutes": 30, "open": True, "line": "Red line"},
                  "L3": {"a": "STN-A", "b": "GT-S", "minutes": 10, "open": True, "line": "walk"},
                  "L4": {"a": "STN-A", "b": "GT-N", "minutes": 50, "open": True, "line": "walk"}},
        "venues": {"VEN-1": {"name": "Hall", "status": "open", "notice": "", "desk_status": "open",
                             "desk_opens": "17:00"}},
        "gates": {"GT-N": {"venue": "VEN-1", "name": "North", "status": "open", "step_free": True, "notice": "",
                           "slots": dict(slots)},
                  "GT-S": {"venue": "VEN-1", "name": "South", "status": "open", "step_free": False, "notice": "",
                           "slots": dict(slots)}},
        "events": {"EVT-1": {"title": "Show", "performer": "Ada Quartet", "venue": "VEN-1",
                             "doors": "2024-05-06T18:30", "starts": "2024-05-06T19:30", "status": "on_sale",
                             "cart_minutes": 15, "notice": ""}},
        "sections": {
            "SEC-A": {"event": "EVT-1", "name": "Stalls", "price": 50, "accessible": True, "gate": "GT-N",
                      "status": "open", "notice": "", "rows": {"A": [1, 2, 4, 5, 6], "B": [3]}},
            "SEC-B": {"event": "EVT-1", "name": "Circle", "price": 30, "accessible": False, "gate": "GT-S",
                      "status": "open", "notice": "", "rows": {"A": [1, 3, 5]}},
            "SEC-C": {"event": "EVT-1", "name": "Box", "price": 90, "accessible": False, "gate": "GT-N",
                      "status": "closed", "notice": "inspection", "rows": {"A": [1, 2]}}},
        "customers": {"CUS-1": {"name": "Ada", "home": "HOME", "budget": 120, "smartphone": True,
                                "departs": "2024-05-06T18:00", "party": ["Ada", "Cy Long", "Di Park"],
                                "party_note": ""},
                      "CUS-2": {"name": "Bo", "home": "HOME", "budget": 500, "smartphone": False,
                                "departs": "2024-05-06T12:00"}},
        "carts": {}, "orders": {}, "tickets": {},
        "promotions": {"HALF": {"event": "EVT-1", "sections": ["SEC-A"], "discount_pct": 50, "quota": 3, "used": 0,
                                "ends": None, "status": "active", "note": ""},
                       "OLD": {"event": None, "sections": None, "discount_pct": 20, "quota": 9, "used": 0,
                               "ends": None, "status": "expired", "note": ""}},
        "settings": {"courier_minutes": 180, "delivery_fee": {"mobile": 0, "will_call": 3, "courier": 10}},
        "counters": {"hold": 100, "order": 500, "ticket": 9000},
    }


class Harness(WorldHarness):
    world_class, start, default_state = TicketingWorld, START, staticmethod(venue)


@pytest.fixture
def w() -> Harness:
    return Harness()


def bought(w: Harness, section: str = "SEC-A", count: int = 3, customer: str = "CUS-1", **kw) -> dict:
    held = w("hold_seats", customer_id=customer, section_id=section, count=count)
    assert held["success"], held
    return w("purchase", hold_id=held["data"]["hold_id"], **{"delivery": "mobile", **kw})


# ----------------------------------------------------------------------- tools


def test_adjacent_seats_come_from_one_row_and_skip_gaps():
    assert adjacent_block({"A": [1, 2, 4, 5, 6], "B": [3]}, 3) == ("A", [4, 5, 6])
    assert adjacent_block({"A": [1, 3, 5]}, 2) is None


def test_hold_then_purchase_with_a_promo_sells_those_seats(w):
    held = w("hold_seats", customer_id="CUS-1", section_id="SEC-A", count=3)
    assert held["data"]["seats"] == ["A4", "A5", "A6"] and held["data"]["expires"] == "2024-05-06T10:15"
    assert w("get_section", section_id="SEC-A")["data"]["rows"]["A"] == [1, 2]  # held seats are not offered
    order = w("purchase", hold_id=held["data"]["hold_id"], delivery="mobile", promo_code="HALF")
    assert order["success"] and order["data"]["total"] == 75 and len(order["data"]["tickets"]) == 3
    assert w.world.promotions["HALF"]["used"] == 3
    assert w.world.sections["SEC-A"]["rows"]["A"] == [1, 2]  # sold


@pytest.mark.parametrize("args, error", [
    ({"customer_id": "CUS-9"}, "no customer"),
    ({"section_id": "SEC-C"}, "closed"),
    ({"section_id": "SEC-B", "count": 2}, "no 2 adjacent"),
    ({"count": 9}, "between 1 and 8"),
])
def test_a_bad_hold_is_refused_and_changes_nothing(w, args, error):
    before = copy.deepcopy(w.world.state)
    result = w("hold_seats", **{"customer_id": "CUS-1", "section_id": "SEC-A", "count": 2, **args})
    assert not result["success"] and error in result["error"]
    assert w.world.state == before


def test_a_cart_lapses_after_the_cart_time_and_then_blocks_nothing(w):
    hid = w("hold_seats", customer_id="CUS-1", section_id="SEC-A", count=3)["data"]["hold_id"]
    w.clock.advance(16)
    before = copy.deepcopy(w.world.state)
    refused = w("purchase", hold_id=hid, delivery="mobile")
    assert not refused["success"] and "expired" in refused["error"] and w.world.state == before
    assert w("hold_seats", customer_id="CUS-1", section_id="SEC-A", count=3)["data"]["seats"] == ["A4", "A5", "A6"]


@pytest.mark.parametrize("code, section, error", [
    ("OLD", "SEC-A", "expired"), ("HALF", "SEC-B", "sections SEC-A only"), ("NOPE", "SEC-A", "no promotion")])
def test_a_promo_that_does_not_apply_is_refused_and_changes_nothing(w, code, section, error):
    hid = w("hold_seats", customer_id="CUS-1", section_id=section, count=1)["data"]["hold_id"]
    before = copy.deepcopy(w.world.state)
    for name in ("apply_promo", "purchase"):
        args = {"hold_id": hid, "promo_code": code, **({"delivery": "mobile"} if name == "purchase" else {})}
        result = w(name, **args)
        assert not result["success"] and error in result["error"]
    assert w.world.state == before


def test_a_quote_lists_the_delivery_fees_the_budget_must_cover(w):
    hid = w("hold_seats", customer_id="CUS-1", section_id="SEC-A", count=1)["data"]["hold_id"]
    quote = w("get_quote", hold_id=hid)["data"]
    assert quote["delivery_fees"] == {"mobile": 0, "will_call": 3, "courier": 10}
    bought = w("purchase", hold_id=hid, delivery="courier")
    assert bought["success"] and w.world.orders[bought["data"]["order_id"]]["total"] == quote["total"] + 10


def test_a_promo_quota_counts_seats(w):
    hid = w("hold_seats", customer_id="CUS-1", section_id="SEC-A", count=2)["data"]["hold_id"]
    w.world.promotions["HALF"]["used"] = 2
    assert "1 tickets of quota left" in w("get_quote", hold_id=hid, promo_code="HALF")["error"]


def test_budget_and_delivery_rules_refuse_a_purchase(w):
    hid = w("hold_seats", customer_id="CUS-1", section_id="SEC-A", count=3)["data"]["hold_id"]
    assert "exceeds the customer's budget 120" in w("purchase", hold_id=hid, delivery="mobile")["error"]
    hid2 = w("hold_seats", customer_id="CUS-2", section_id="SEC-B", count=1)["data"]["hold_id"]
    assert "no smartphone" in w("purchase", hold_id=hid2, delivery="mobile")["error"]
    assert "after the customer leaves" in w("purchase", hold_id=hid2, delivery="courier")["error"]
    w.world.venues["VEN-1"]["desk_opens"] = "18:15"  # less than half an hour before the doors
    assert "less than 30 minutes" in w("purchase", hold_id=hid2, delivery="will_call")["error"]
    w.world.venues["VEN-1"]["desk_opens"] = "17:00"
    order = w("purchase", hold_id=hid2, delivery="will_call")
    assert order["success"] and order["data"]["total"] == 33


def test_an_entry_slot_must_be_at_the_sections_gate_and_reachable(w):
    oid = bought(w, promo_code="HALF")["data"]["order_id"]
    assert "enters through GT-N" in w("book_entry_slot", order_id=oid, gate_id="GT-S", slot="2024-05-06T18:30")["error"]
    assert "places left" in w("book_entry_slot", order_id=oid, gate_id="GT-N", slot="2024-05-06T19:00")["error"]
    assert w("book_entry_slot", order_id=oid, gate_id="GT-N", slot="2024-05-06T18:30")["success"]
    assert w.world.gates["GT-N"]["slots"]["2024-05-06T18:30"] == 7
    w.world.links["L1"]["open"] = False  # the tram is suspended: 80 minutes by metro and a walk round
    route = w("get_travel_time", origin_id="HOME", destination_id="GT-N")["data"]
    assert route["minutes"] == 80 and "L1 (Tram 3)" in route["closed_links"]
    refused = w("book_entry_slot", order_id=oid, gate_id="GT-N", slot="2024-05-06T18:45")
    assert "reaches GT-N at 2024-05-06T19:20" in refused["error"]
    assert w.world.orders[oid]["entry"]["slot"] == "2024-05-06T18:30"  # the old booking stands


def test_cancel_and_exchange_give_seats_slots_and_quota_back(w):
    oid = bought(w, promo_code="HALF")["data"]["order_id"]
    w("book_entry_slot", order_id=oid, gate_id="GT-N", slot="2024-05-06T18:30")
    w.world.customers["CUS-1"]["budget"] = 200
    hid = w("hold_seats", customer_id="CUS-1", section_id="SEC-A", count=2)["data"]["hold_id"]
    swapped = w("exchange_order", order_id=oid, hold_id=hid, delivery="will_call")
    assert swapped["success"] and swapped["data"]["seats"] == ["A1", "A2"] and swapped["data"]["entry"] is None
    assert w.world.gates["GT-N"]["slots"]["2024-05-06T18:30"] == 10 and w.world.promotions["HALF"]["used"] == 0
    assert w.world.sections["SEC-A"]["rows"]["A"] == [4, 5, 6]
    assert w("cancel_order", order_id=oid)["success"]
    assert w.world.sections["SEC-A"]["rows"]["A"] == [1, 2, 4, 5, 6]
    before = copy.deepcopy(w.world.state)
    assert "refunded" in w("cancel_order", order_id=oid)["error"] and w.world.state == before


def test_names_print_one_per_ticket_and_stay_on_the_seats_an_exchange_gives(w):
    oid = bought(w, promo_code="HALF")["data"]["order_id"]
    spec = {"customer": "CUS-1", "events": ["EVT-1"], "count": 3, "accessible": False, "entry": False}
    before = copy.deepcopy(w.world.state)
    assert "give one non-empty name for each" in w("name_tickets", order_id=oid, names=["Ada", "Cy Long"])["error"]
    assert w.world.state == before and not w.holds("tickets_named", request=spec)
    printed = w("name_tickets", order_id=oid, names=["di  park", "Ada", "Cy Long"])
    assert [t["holder"] for t in printed["data"]["tickets"]] == ["di park", "Ada", "Cy Long"]
    assert set(printed["data"]) == {"order_id", "tickets"}  # no look at the order's delivery or notices
    assert w.holds("tickets_named", request=spec)  # one each, letter case and spacing aside
    w.world.customers["CUS-1"]["party"][1] = "Eve Stone"  # the party as it is now is what counts
    assert not w.holds("tickets_named", request=spec)
    w.world.customers["CUS-1"]["budget"] = 200
    hid = w("hold_seats", customer_id="CUS-1", section_id="SEC-B", count=1)["data"]["hold_id"]
    w.world.sections["SEC-B"]["rows"]["A"] = [1, 2, 3]
    w("release_hold", hold_id=hid)
    hid = w("hold_seats", customer_id="CUS-1", section_id="SEC-B", count=3)["data"]["hold_id"]
    swapped = w("exchange_order", order_id=oid, hold_id=hid, delivery="mobile")
    assert [t["holder"] for t in swapped["data"]["tickets"]] == ["di park", "Ada", "Cy Long"]
    w.world.customers["CUS-1"]["party"][1] = "Cy Long"
    assert w.holds("tickets_named", request=spec)


def test_only_mobile_tickets_transfer_and_only_before_the_doors(w):
    oid = bought(w, "SEC-B", 1)["data"]["order_id"]
    before = copy.deepcopy(w.world.state)
    assert "smartphone" in w("transfer_order", order_id=oid, recipient_id="CUS-2")["error"]
    w.world.customers["CUS-2"]["smartphone"] = True
    w.clock.advance(60 * 9)
    assert "doors open" in w("transfer_order", order_id=oid, recipient_id="CUS-2")["error"]
    w.world.customers["CUS-2"]["smartphone"] = False
    assert w.world.state == before
    w.clock.minutes = 0
    w.world.customers["CUS-2"]["smartphone"] = True
    assert w("transfer_order", order_id=oid, recipient_id="CUS-2")["success"]
    assert w.world.orders[oid]["customer"] == "CUS-2" and w.world.orders[oid]["transferred_from"] == "CUS-1"


def test_accessible_places_need_a_step_free_gate():
    h = Harness()
    h.world.customers["CUS-1"]["budget"] = 500
    oid = bought(h, "SEC-A", 2)["data"]["order_id"]
    spec = {"customer": "CUS-1", "events": ["EVT-1"], "count": 2, "accessible": True, "entry": False}
    assert h.world.ticketed(spec)
    h.world.gates["GT-N"]["step_free"] = False  # the lift is out
    assert not h.world.ticketed(spec) and h.world.orders[oid]["status"] == "paid"


# ------------------------------------------------------------------ scenarios


def start(env_id: str, seed: int = 0):
    env = gym.make(env_id)
    env.reset(seed=seed)
    return env, env.unwrapped


def call(env, name: str, **arguments) -> tuple[dict, list]:
    _, _, _, _, info = env.step({"name": name, "arguments": arguments})
    return info["result"], [e["trigger"] for e in info["events"]]


def test_t1_the_queue_shortens_the_cart_below_a_hold_plus_a_separate_promo_step():
    env, arena = start("STTArena/Ticketing-T1-easy", seed=3)
    hold = next(c for c in arena.task.nominal_plan if c.name == "hold_seats")
    held, fired = call(env, hold.name, **hold.arguments)
    assert fired == ["virtual_queue"]
    hid = held["data"]["hold_id"]
    code = next(c for c in arena.task.nominal_plan if c.name == "apply_promo").arguments["promo_code"]
    assert call(env, "apply_promo", hold_id=hid, promo_code=code)[0]["success"]
    assert "expired" in call(env, "purchase", hold_id=hid, delivery="mobile")[0]["error"]
    again = call(env, hold.name, **hold.arguments)[0]["data"]["hold_id"]  # the corrective action: buy at once
    assert call(env, "purchase", hold_id=again, delivery="mobile", promo_code=code)[0]["success"]


def test_t3_the_flash_code_dies_at_midnight_and_the_day_code_starts_afresh():
    env, arena = start("STTArena/Ticketing-T3-easy", seed=2)
    codes = {c: p for c, p in arena.task.initial_state["promotions"].items() if p["event"]}
    day = next(c for c, p in codes.items() if p["used"] == p["quota"])
    env.unwrapped.clock.advance(10)  # past midnight (the session starts minutes before it)
    listed, fired = call(env, "list_promotions")
    assert fired == ["midnight_reset"]
    after = {p["code"]: p for p in listed["data"]["promotions"]}
    assert after[day]["used"] == 0 and [c for c in codes if after[c]["status"] == "expired"]


@pytest.mark.parametrize("conflict", ["T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3"])
def test_the_blind_writer_meets_every_trigger_and_is_disrupted(conflict):
    env = gym.make(f"STTArena/Ticketing-{conflict}-hard")
    traj = rollout(env, BlindWriter(), seed=5)
    arena = env.unwrapped
    # The hard level's party change waits for an entry booking after the story's change, which a blind writer may
    # never get through.
    fired = {e["trigger"] for e in traj.info["trigger_log"]} - {"party_changed"}
    assert fired == {t.name for t in arena.task.triggers} - {"party_changed"}
    # A write whose result shows the change is meeting it (ST3: the entry slot's order page shows the late courier),
    # so the milestones the stale plan still holds may count; what must fail is the request itself.
    assert traj.reward < 1.0 and evaluate(arena.task.static_checklist, arena.world, arena.log)[0] < 1.0
    assert traj.reward == 0.0 or arena.log.revealed
    tools = arena.tools
    assert all(tools[name].mutates for t in arena.task.triggers for name in t.activation)


@pytest.mark.parametrize("conflict", ["T2", "S2", "ST2", "ST3"])
def test_impossible_tasks_need_the_blocking_fact_and_no_order_left(conflict):
    env_id = f"STTArena/Ticketing-{conflict}-impossible"
    assert rollout(gym.make(env_id), OracleAgent(), seed=1).reward == 1.0
    assert rollout(gym.make(env_id), NominalAgent(), seed=1).reward == 0.0
    _, arena = start(env_id, seed=1)
    vague = [c if c.name != "chat_with_user" else c.model_copy(update={"arguments": {
        "message": "I'm sorry, but I cannot get these tickets for you; something changed and it no longer works."}})
        for c in arena.task.oracle]
    assert rollout(gym.make(env_id), PlanAgent(vague), seed=1).reward == 0.0


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_refusing_everything_earns_nothing_on_a_feasible_task(level):
    assert rollout(gym.make(f"STTArena/Ticketing-S1-{level}"), AlwaysRefuse(), seed=0).reward == 0.0


# ------------------------------------------------------------ cheap shortcuts


def retry_policy(env, seed: int) -> float:
    """Follow the nominal plan; when a write fails, hold the same section again and buy at once with every code
    the request or the first listing named, never reading what changed."""
    env.reset(seed=seed)
    task, saved = env.unwrapped.task, {}
    codes = sorted(c for c in task.initial_state["promotions"] if c in task.query) or [""]
    hold = next(c for c in task.nominal_plan if c.name == "hold_seats")
    mutates = {n: s.mutates for n, s in env.unwrapped.tools.items()}
    for c in task.nominal_plan:
        if not mutates[c.name]:
            continue
        result, _ = call(env, c.name, **resolve(c.arguments, saved))
        saved[c.save_as or ""] = result
        if not result["success"] and c.name in ("purchase", "apply_promo"):
            held, _ = call(env, hold.name, **hold.arguments)
            for code in codes:
                if held["success"]:
                    bought, _ = call(env, "purchase", hold_id=held["data"]["hold_id"], delivery=c.arguments.get(
                        "delivery", "mobile"), **({"promo_code": code} if code else {}))
                    if bought["success"]:
                        saved["order"] = bought
                        break
    *_, info = env.step({"content": "Task Completed"})
    return info["score"]


@pytest.mark.parametrize("env_id", ["STTArena/Ticketing-T1-medium", "STTArena/Ticketing-S2-easy",
                                    "STTArena/Ticketing-ST1-easy"])
def test_buying_the_same_section_again_without_reading_the_change_earns_little(env_id):
    # Whatever the failed write showed, the same section again does not meet the request: sold out, closed or moved.
    env = gym.make(env_id)
    scores = [retry_policy(env, seed) for seed in range(4)]
    assert max(scores) <= 0.25, scores


def test_on_t1_easy_the_retry_is_the_recovery_and_the_failed_purchase_showed_the_queue():
    # The purchase's error names the lapsed cart: that is meeting the change, no particular read needed, and holding
    # again and buying at once with the code is the story's recovery.
    env = gym.make("STTArena/Ticketing-T1-easy")
    assert [retry_policy(env, seed) for seed in range(4)] == [1.0] * 4
    assert env.unwrapped.log.noticed("virtual_queue")


def every_code_policy(env, seed: int) -> float:
    """The T3 shortcut: read the promotions once, then hold and try every code listed in turn at purchase (a promo
    spray), never re-reading the promotions after midnight; the seats bought get the names the plan prints."""
    env.reset(seed=seed)
    task = env.unwrapped.task
    listed, _ = call(env, "list_promotions")
    codes = [p["code"] for p in listed["data"]["promotions"]]
    hold = next(c for c in task.nominal_plan if c.name == "hold_seats")
    names = next(c for c in task.nominal_plan if c.name == "name_tickets").arguments["names"]
    held, _ = call(env, hold.name, **hold.arguments)
    for code in codes:
        bought, _ = call(env, "purchase", hold_id=held["data"]["hold_id"], delivery="mobile", promo_code=code)
        if bought["success"]:
            call(env, "name_tickets", order_id=bought["data"]["order_id"], names=names)
            break
    *_, info = env.step({"content": "Task Completed"})
    return info["score"]


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_spraying_promo_codes_past_midnight_helps_only_where_the_day_code_fits(level):
    # The flash code's failed purchase names its expiry, so the spray meets the reset; on easy the reset day code buys
    # the seats asked for, which is the recovery. Where the day code is for another section (medium) or the reset
    # voids the cart (hard), trying codes on the stale cart buys nothing.
    env = gym.make(f"STTArena/Ticketing-T3-{level}")
    scores = [every_code_policy(env, seed) for seed in range(4)]
    assert scores == ([1.0] * 4 if level == "easy" else [0.0] * 4), scores


@pytest.mark.parametrize("conflict, level", product(["T1", "S2"], ["medium", "hard"]))
def test_a_move_needs_the_section_feature_the_customer_tells_only_when_asked(conflict, level):
    def others(env, seed):  # the oracle's recovery, unasked, in every other section of the show that would do
        task = env.unwrapped.task
        right = [c for c in task.oracle if c.name == "hold_seats"][-1].arguments["section_id"]
        event = task.initial_state["sections"][right]["event"]
        plans = [unasked(task, {right: sid}) for sid, x in sorted(task.initial_state["sections"].items())
                 if x["event"] == event and sid != right]
        return [plan for plan in plans if play(env, seed, plan).static]

    assert_withheld_story(f"STTArena/Ticketing-{conflict}-{level}", CONSULT, "asked_feature", others,
                          offer="Shall I get you seats in another section instead?")


def test_the_customer_s_section_is_not_the_cheapest_option():
    cheapest = set()
    for seed in range(8):
        env, arena = start("STTArena/Ticketing-S2-hard", seed)
        sections, task = arena.task.initial_state["sections"], arena.task
        right = [c for c in task.oracle if c.name == "hold_seats"][-1].arguments["section_id"]
        options = [sid for sid, x in sections.items() if len(x.get("features", [])) == 1 and x["accessible"]
                   and x["gate"] == sections[right]["gate"]]
        cheapest.add(min(options, key=lambda sid: (sections[sid]["price"], sid)) == right)
    assert cheapest == {True, False}


@pytest.mark.parametrize("level, seeds", [("easy", range(1000000, 1000041)), ("hard", [1001608, 1003402])])
def test_s3_oracle_books_the_slot_the_detour_really_makes(level, seeds):
    # Training seeds whose metro ride alone overran the story's target once: easy's oracle booked a slot the
    # detour missed (1000007, 1000010, ...) and hard found no slot left at the other gate (its reset failed).
    env = gym.make(f"STTArena/Ticketing-S3-{level}")
    for seed in seeds:
        traj = rollout(env, OracleAgent(), seed=seed)
        booked = [s["action"]["arguments"]["slot"] for s in traj.steps if s["action"].get("name") == "book_entry_slot"
                  and '"success": true' in s["observation"]]
        assert traj.reward == 1.0, (seed, traj.info["checklist"])
        # easy rebooks a later slot at the same gate; hard books once, at the other gate, after the suspension
        assert len(booked) == (2 if level == "easy" else 1) and booked == sorted(set(booked)), (seed, booked)


# ------------------------------------------------------------ v2: what scores what

@pytest.mark.parametrize("scenario", ["T3-easy", "T3-medium", "T3-hard", "ST1-easy", "ST1-medium", "S1-easy",
                                      "S3-easy", "T2-medium", "ST3-hard"])
def test_every_other_solution_meets_the_change_and_scores_full(scenario):
    # Another section the request allows taken first, another section to recover in, or another entry slot that the
    # customer makes: each is in Task.alternatives, meets the change, and scores 1.0 (none is collateral).
    env_id = f"STTArena/Ticketing-{scenario}"
    assert all(assert_alternatives_score_one(env_id, seeds=[seed], noticed=True) for seed in range(2))


@pytest.mark.parametrize("scenario", ["S1-easy", "S1-medium", "ST2-medium", "ST3-hard"])
def test_a_stale_order_read_at_the_end_earns_nothing(scenario):
    # The nominal plan, then every read the oracle makes: the change is seen, and the seats bought before it still
    # stand, but nothing was done after seeing it (acted_on), so none of it counts.
    env_id = f"STTArena/Ticketing-{scenario}"
    for seed in range(2):
        _, arena = start(env_id, seed)
        task, reads = arena.task, arena.tools
        plan = task.nominal_plan + [c for c in task.oracle if c.name in reads and not reads[c.name].mutates]
        env = gym.make(env_id)
        traj = rollout(env, PlanAgent(plan), seed=seed)
        assert env.unwrapped.log.noticed(task.triggers[0].name) and traj.reward == 0.0, traj.info["checklist"]
        static = evaluate(task.static_checklist, env.unwrapped.world, env.unwrapped.log)[1]
        assert any(c["passed"] for c in static if not c["gate"])  # ... though some of the request still stands


@pytest.mark.parametrize("level", ["easy", "medium", "hard", "impossible"])
def test_t3_no_purchase_beats_midnight_even_one_made_without_a_read(level):
    # A round-nine player held and bought on the flash code as its first two calls, a minute before the reset: a
    # path the story never met. A hold takes as long as the reads before midnight, so the purchase meets it.
    for seed in range(4):
        env, arena = start(f"STTArena/Ticketing-T3-{level}", seed)
        hold, buy = (next(c for c in arena.task.nominal_plan if c.name == n) for n in ("hold_seats", "purchase"))
        held, _ = call(env, hold.name, **hold.arguments)
        flash = next(c.arguments["promo_code"] for c in arena.task.nominal_plan if c.name == "apply_promo")
        bought, fired = call(env, "purchase", hold_id=held["data"]["hold_id"], delivery="mobile", promo_code=flash)
        assert fired[:1] == ["midnight_reset"] and "error" in bought, (level, seed, bought)


def test_buying_at_once_on_t1_meets_the_request_though_the_change_never_comes_in_its_way():
    # The cart lasts three minutes once the queue opens; a purchase right after the hold, with the code, beats it:
    # the seats asked for, no question needed (no move was made), 1.0 without the story's change ever shown (only
    # the party change that came with it, which the profile read before naming the tickets shows).
    for seed in range(2):
        _, arena = start("STTArena/Ticketing-T1-medium", seed)
        (plan,) = arena.task.alternatives
        env = gym.make("STTArena/Ticketing-T1-medium")
        traj = rollout(env, PlanAgent(plan), seed=seed)
        assert traj.reward == 1.0 and set(env.unwrapped.log.revealed) == {"party_changed"}


def test_a_later_entry_slot_than_the_oracle_s_is_no_collateral():
    # S3 easy: the detour makes every slot from the oracle's on; an agent that books a later one does as well.
    _, arena = start("STTArena/Ticketing-S3-easy", seed=0)
    slots = [[c.arguments["slot"] for c in plan if c.name == "book_entry_slot"][-1] for plan in arena.task.alternatives]
    oracle = [c.arguments["slot"] for c in arena.task.oracle if c.name == "book_entry_slot"][-1]
    assert slots and all(slot > oracle for slot in slots)


def test_the_request_s_own_order_must_keep_the_delivery_asked_for():
    # Reported: switching the new order from the requested mobile tickets to a courier still scored 1.0.
    for env_id in ("STTArena/Ticketing-T1-easy", "STTArena/Ticketing-S3-medium"):
        _, arena = start(env_id, seed=0)
        order = next(c.save_as for c in reversed(arena.task.oracle) if c.name == "purchase")
        switch = Call(name="change_delivery", arguments={"order_id": order_id(order), "delivery": "courier"})
        traj = rollout(gym.make(env_id), PlanAgent([*arena.task.oracle, switch]), seed=0)
        assert '"success": true' in traj.steps[len(arena.task.oracle)]["observation"]
        assert traj.reward < 1.0 and not {c["name"]: c["passed"] for c in traj.info["checklist"]}["delivered"]


def test_an_unrelated_write_after_the_oracle_zeroes_the_score():
    env_id = "STTArena/Ticketing-T2-easy"
    _, arena = start(env_id, seed=0)
    task = arena.task
    customer = task.profile.known_facts[0].split()[-1]
    asked = next(c for c in task.oracle if c.name == "hold_seats").arguments["section_id"]
    other = next(x for x, v in sorted(task.initial_state["sections"].items())
                 if x != asked and v["event"] == task.initial_state["sections"][asked]["event"])
    extra = Call(name="hold_seats", save_as="extra", arguments={"customer_id": customer, "section_id": other,
                                                                "count": 1})
    let_go = Call(name="release_hold", arguments={"hold_id": hold_id("extra")})

    def score(*after: Call) -> float:
        return rollout(gym.make(env_id), PlanAgent([*task.oracle, *after]), seed=0).reward

    assert score() == 1.0 and score(extra, let_go) == 1.0  # a hold let go again commits nothing
    assert score(extra) == 0.0  # an extra hold left open


def test_an_honest_refusal_names_what_the_change_brought():
    for conflict in ("T1", "T3", "ST1", "S3"):
        env_id = f"STTArena/Ticketing-{conflict}-impossible"
        _, arena = start(env_id, seed=0)
        facts = arena.task.impossibility.blocking_facts
        assert len(facts) > 1 and rollout(gym.make(env_id), OracleAgent(), seed=0).reward == 1.0
        assert not any(f in arena.task.query for f in facts if " " not in f)  # nothing the request already named




def test_the_customer_answers_alike_whether_or_not_the_request_can_be_met():
    # an impossible twin withholds a fact too, so that one held back is as common among the impossible instances
    # (1 id in 9) as among the feasible ones (4 in 27)
    assert_answers_alike("Ticketing", ("T1-medium", "T1-hard", "T1-impossible", "S2-medium", "S2-hard"))


# ------------------------------------- medium and hard: the party changes (with the story, after the recovery)

CONFLICTS = ["T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3"]


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_at_hard_the_party_changes_once_the_recovery_books_entry_and_only_the_profile_shows_it(conflict):
    # The second change waits for the first entry booking after the story's change, whatever the recovery bought,
    # and leaves every write working: the names read before it and printed after the recovery are stale.
    hard = f"STTArena/Ticketing-{conflict}-hard"
    for env, seed, task, changed in second_changes(hard, "party_changed", "get_customer", seeds=range(2)):
        customer = changed.observable.args["customer_id"]
        traj = rollout(env, PlanAgent(task.oracle), seed=seed)
        (event,) = [e for e in traj.info["trigger_log"] if e["trigger"] == "party_changed"]
        assert {c["path"] for c in event["changes"]} == {f"customers.{customer}.party",
                                                        f"customers.{customer}.party_note"}
        assert task.oracle[env.unwrapped.log.revealed["party_changed"]].name == "get_customer"
        party = task.initial_state["customers"][customer]["party"]
        stale = [c.model_copy(update={"arguments": {**c.arguments, "names": party}}) if c.name == "name_tickets" else c
                 for i, c in enumerate(task.oracle) if i < event["call_index"] or c.name != "get_customer"]
        traj = rollout(env, PlanAgent(stale), seed=seed)
        arena = env.unwrapped
        assert "party_changed" not in arena.log.revealed
        assert all(json.loads(s["observation"])["success"] for s in traj.steps[event["call_index"]:]
                   if arena.tools.get(s["action"].get("name")) and arena.tools[s["action"]["name"]].mutates)
        passed = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        # the recovered order still counts; the stale names fail what they were for
        assert passed["ticketed"] and not passed["tickets_named"] and 0.0 < traj.reward < 1.0, passed


def made_in_of(task):
    """The index of the call that set a trigger event off: an event's ``call_index`` is the first call to see it, so
    one checked after its call was made is seen from the next."""
    timing = {t.name: t.timing for t in task.triggers}
    return lambda event: event["call_index"] - (timing[event["trigger"]] == "after")


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_at_medium_the_party_changes_with_the_story_s_change(conflict):
    # The second change comes in the very call that sets off the story's first one (in every solution and in the
    # nominal plan), not at a later recovery write: the profile reads the new party right after that call and not
    # before it. Printing the names read at the start then fails the names alone, while the oracle scores 1.0.
    medium = f"STTArena/Ticketing-{conflict}-medium"
    for env, seed, task, changed in second_changes_with_the_story(medium, "party_changed", "get_customer",
                                                                  seeds=range(2)):
        customer, story = changed.observable.args["customer_id"], task.triggers[0].name
        party = task.initial_state["customers"][customer]["party"]
        made_in = made_in_of(task)
        log = rollout(env, PlanAgent(task.nominal_plan), seed=seed).info["trigger_log"]
        (event,) = [e for e in log if e["trigger"] == "party_changed"]
        assert made_in(event) == made_in(next(e for e in log if e["trigger"] == story)), log
        traj = rollout(env, PlanAgent(task.oracle), seed=seed)
        (event,) = [e for e in traj.info["trigger_log"] if e["trigger"] == "party_changed"]
        assert {c["path"] for c in event["changes"]} == {f"customers.{customer}.party",
                                                        f"customers.{customer}.party_note"}
        final = env.unwrapped.world.customers[customer]["party"]
        assert len(final) == len(party) and final[0] == party[0] and len(set(final) - set(party)) == 1
        at = made_in(event)
        rollout(env, PlanAgent(task.oracle[:at]), seed=seed)  # up to the call that sets the story's change off
        assert env.unwrapped.world.customers[customer]["party"] == party and not env.unwrapped.log.events
        rollout(env, PlanAgent(task.oracle[:at + 1]), seed=seed)  # and that call: the party changed in it too
        assert env.unwrapped.world.customers[customer]["party"] == final
        assert {e["trigger"] for e in env.unwrapped.log.events} >= {story, "party_changed"}
        stale = [c.model_copy(update={"arguments": {**c.arguments, "names": party}}) if c.name == "name_tickets" else c
                 for i, c in enumerate(task.oracle) if i < event["call_index"] or c.name != "get_customer"]
        traj = rollout(env, PlanAgent(stale), seed=seed)
        assert "party_changed" not in env.unwrapped.log.revealed
        passed = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        assert passed["ticketed"] and not passed["tickets_named"] and 0.0 < traj.reward < 1.0, passed


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_the_names_are_asked_for_and_answered_alike_on_every_level(conflict):
    # The request for the names and the customer's answers about them read the same at every level, so neither tells
    # the level; medium's and hard's party changes, no other level's does (impossible: the same refusal as ever).
    said, replies = set(), set()
    for level in ("easy", "medium", "hard", "impossible"):
        task = start(f"STTArena/Ticketing-{conflict}-{level}", seed=4)[1].task
        sentences = re.split(r"(?<=[.!?])\s+", task.query)
        said.add(tuple(s for s in sentences if re.search(r"\b(names?|party|profile)\b", s, re.I)))
        user = RuleUser(task.profile)
        replies.add(tuple(user.reply(q) for q in ("Whose names go on the tickets?", "Who is coming with you?")))
        customer = task.initial_state["customers"][task.profile.known_facts[0].split()[-1]]
        count = next(c for c in task.nominal_plan if c.name == "hold_seats").arguments["count"]
        assert customer["party"][0] == customer["name"] and len(set(customer["party"])) == count
        assert ("party_changed" in [t.name for t in task.triggers]) == (level in ("medium", "hard"))
    assert said == {(f"Please also {NAMES}.",)} and len(replies) == 1, (said, replies)
    assert all("customer profile" in r for r in next(iter(replies)))


def test_the_will_call_desk_s_lead_before_the_doors_is_stated_where_the_agent_reads_the_deliveries():
    # A playtester's will-call order was refused for a desk opening less than the lead before the doors, a rule no
    # tool description gave; the purchase's description states it.
    from sttgym.authoring import tool_specs
    from sttgym.envs.arena.ticketing.world import WILL_CALL_LEAD

    delivery = tool_specs(TicketingWorld)["purchase"].parameters["properties"]["delivery"]["description"]
    assert f"at least {WILL_CALL_LEAD} minutes before the doors" in delivery
