"""T3 Quota Reset: the late-night flash code expires at the platform's midnight reset.

Just before midnight the customer asks for seats for tomorrow's show on tonight's flash code,
which their budget needs. The agent reads the profile and the show's promotions, holds the
seats, applies the code, prices and buys; at midnight the platform's daily reset runs (visible
in ``list_promotions``): the flash code expires, and the day code whose quota ran out today
starts afresh. Easy: buy with the day code. Medium: the day code is for one other section only,
so the seats move there. Hard: the reset also voids the carts carrying the expired code, the
day code is for the other section only, and the customer's entry slot must be booked at that
section's gate. Impossible: the day code's discount is too small for any seats to fit the
budget once the flash code is gone. The other section, which the customer would take as well, is a
solution too when taken first (``Task.alternatives``): midnight comes for every plan.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.clock import format_time
from sttgym.envs.arena.ticketing.generator import (ENTRY, Author, Plan, Request, Task, intro, leave_by, make_task,
                                                   new_city)
from sttgym.envs.arena.ticketing.world import TicketingWorld



def build(author: Author, level: str) -> Task:
    day = datetime(author.integer(2024, 2025), 1, 1) + timedelta(days=author.integer(10, 330))
    city = new_city(author, start=day + timedelta(hours=23, minutes=30))
    s, op = city.state, author.op
    count = author.integer(2, 4)
    north, south = city.gates_of(city.venue)
    price, pct = 10 * author.integer(6, 12), 5 * author.integer(5, 6)
    wanted = city.add_section(north, price)
    other = city.add_section(south, price - 5 * author.integer(0, 2))
    city.add_section(north, price + 10 * author.integer(2, 5))
    city.budget(budget := round(price * count * (100 - pct) / 100) + 5 * author.integer(1, 3))
    flash = city.promo(["MIDNIGHT", "NIGHTOWL", "LATESHOW", "AFTERDARK"], pct, 5 * author.integer(20, 40),
                       author.integer(10, 60), "tonight's flash code, while quota lasts")
    daily_quota = 5 * author.integer(6, 12)
    day_pct = 5 * author.integer(1, 2) if level == "impossible" else pct
    daily = city.promo(["SUNRISE", "DAYPASS", "MORNING", "DAYBREAK"], day_pct,
                       daily_quota, daily_quota, "daily code, quota resets at 00:00",
                       sections=[other] if level in ("medium", "hard") else None)
    leave_by(city, city.gate(other))
    req = Request(city, count, entry=level == "hard", how="Mobile tickets are fine", level=level)

    def plan_for(section: str) -> Plan:
        return Plan(look=[req.profile(), req.promos()], book=[req.search(), req.event(), req.hold(section)],
                    promo=[req.apply(flash)], quote=[req.quote()], buy=[req.buy("mobile")],
                    entry=req.entry_calls(section) if req.entry else [])

    plan = plan_for(wanted)
    # Midnight falls right after the agent has seen tonight's codes, and no later than a hold takes: a purchase
    # needs a hold first, so none starts before the reset, even one made without a single read.
    looked = datetime.fromisoformat(author.dry_run(s, format_time(city.start), plan["look"]).end) - city.start
    midnight = day + timedelta(days=1)
    city.start = midnight - min(looked, timedelta(minutes=TicketingWorld.hold_seats.__sttgym_tool__["cost"]))
    reset = city.trigger(
        "midnight_reset", f"at {format_time(midnight)} the daily reset expires {flash} and restores {daily}'s quota",
        author.pred.time_reached(moment=format_time(midnight)),
        city.sets("promotions", flash, status="expired", ends=format_time(midnight))
        + [city.set("promotions", daily, "used", value=0)], ("list_promotions", {"event_id": city.event}),
        timing="before")
    triggers = [reset]
    if level == "hard":
        triggers.append(city.cascade("carts_voided", f"the reset voids the carts carrying {flash}",
                                     ["promotions", flash, "status"], "expired", [op.void_holds(event_id=city.event)],
                                     ("list_customer_orders", {"customer_id": city.user})))
    fixes = {
        "easy": lambda: [req.buy("mobile", code=daily)],
        "medium": lambda: [req.event(), req.hold(other, "again"), req.buy("mobile", "again", daily)],
        "hard": lambda: [req.orders(), req.event(), req.hold(other, "again"), req.buy("mobile", "again", daily),
                         *req.entry_calls(other)],
        "impossible": lambda: [req.event(), req.quote(code=daily), *req.refuse(
            f"I can't get you {count} seats within your budget of {budget}: the flash code {flash} expired at the "
            f"midnight reset, and the only code left, {daily}, takes off too little for any section to fit the "
            f"budget.", ["midnight_reset"], [f"{flash} expired", "midnight reset", "expired"])]}
    oracle = plan.upto("quote") + [req.promos()] + fixes[level]()
    # The other section taken first: the day code buys it where it is (hard: once more, the cart voided).
    bought = {"hard": lambda: [req.orders(), req.hold(other, "again"), req.buy("mobile", "again", daily),
                               *req.entry_calls(other)]}.get(level, lambda: [req.buy("mobile", code=daily)])
    first = [plan_for(other).upto("quote") + [req.promos(), *bought()]] if level != "impossible" else []
    entry = f" Please also {ENTRY}." if req.entry else ""
    query = (f"Hi, it's {req.who}, late I know. Before the night is over, please get me {count} seats together "
             f"(section {wanted} would be lovely) for {intro(req)}, on tonight's flash code {flash}: my budget is "
             f"{budget} in total and I can't go over it. {req.how}.{entry}")
    return make_task(req, query, triggers, plan, oracle, "a fan booking late at night", {
        ("code", "promo", "promotion", "discount", "budget"): f"Any valid code is fine, as long as the total stays "
        f"within {budget}."}, insist=f"My budget of {budget} is fixed; I can't pay more.", alternatives=first)
