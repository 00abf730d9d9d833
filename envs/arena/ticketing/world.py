"""Ticketing: an event-ticketing platform's operator console, selling seats to one customer (or a small group).

State containers (JSON-like dicts keyed by id):

- ``places``: ``{name, kind: home|station|gate}``; ``links``: ``{a, b, minutes, open, line}`` between
  places, the city's transit (and walking) graph; travel uses the fastest open route.
- ``venues``: ``{name, status, notice, desk_opens, desk_status}``: the will-call desk opens at ``desk_opens``
  (``HH:MM``) on a show day; collection needs it open ``WILL_CALL_LEAD`` minutes before the doors.
- ``gates``: ``{venue, name, status, step_free, notice, slots: {ISO time: places left}}``; a gate is a place.
- ``events``: ``{title, performer, venue, doors, starts, status: on_sale|postponed|cancelled, cart_minutes,
  notice}``.
- ``sections``: ``{event, name, price, accessible, gate, status: open|closed, notice, rows: {row: [free seat
  numbers]}}``. A group sits in one row of one section, on consecutive seat numbers. Some stories add
  ``features`` (``[covered|hearing_loop|near_exit|standing|legroom]``), which ``get_section`` shows.
- ``customers``: ``{name, home, budget, smartphone, departs, party, party_note}``: ``budget`` caps one order's
  total, ``departs`` is when the customer can leave home (for the entry slot and a courier's handoff), ``party``
  the names of the people coming (the customer first), to be printed on their tickets, ``party_note`` what last
  changed in it.
- ``carts``: ``{customer, event, section, seats, held_at, expires, status: held|purchased|released|void,
  promo}``; a held hold past ``expires`` reads ``expired``.
- ``promotions``: ``{event, sections (None: any), discount_pct, quota, used, ends, status: active|expired,
  note}``.
- ``orders``: ``{customer, event, section, seats, promo, total, delivery: mobile|will_call|courier,
  courier_eta, status: paid|refunded, entry: {gate, slot} | None, tickets, notice, transferred_from}``;
  ``tickets``: ``{order, seat, status: issued|void, holder}``: ``holder`` the name printed on it, or None.
- ``settings``: ``{courier_minutes, delivery_fee: {method: fee}}``; ``counters``: the last ids issued.

Times are ISO strings at minute precision.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from sttgym.clock import format_time, local_time
from sttgym.geo import shortest_route
from sttgym.tools import fail, ok, tool
from sttgym.world import World, operation, predicate

__all__ = ["TicketingWorld", "WILL_CALL_LEAD", "hold_status", "adjacent_block", "delivery_problem",
           "reach_time"]

WILL_CALL_LEAD = 30  # minutes before the doors the will-call desk must be open for a collection
Delivery = Literal["mobile", "will_call", "courier"]



def hold_status(hold: dict, now: datetime) -> str:
    """A hold's status as of ``now``: a held cart past its expiry reads ``expired``."""
    if hold.get("status") == "held":
        expires = local_time(hold.get("expires"))
        if expires is None or now > expires:
            return "expired"
    return hold.get("status", "")


def adjacent_block(rows: dict, count: int) -> tuple[str, list[int]] | None:
    """The first run of ``count`` consecutive free seats in one row (rows in name order), or None."""
    for row in sorted(rows):
        seats = sorted(rows[row])
        for i in range(len(seats) - count + 1):
            run = seats[i:i + count]
            if run[-1] - run[0] == count - 1:
                return row, run
    return None


def longest_run(rows: dict) -> int:
    best = 0
    for seats in rows.values():
        run, last = 0, None
        for s in sorted(seats):
            run = run + 1 if last is not None and s == last + 1 else 1
            best, last = max(best, run), s
    return best


def reach_time(state: dict, customer: dict, place: str) -> datetime | None:
    """When the customer, leaving home at ``departs``, reaches ``place`` by the fastest open route."""
    route = shortest_route(state["links"], customer["home"], place)
    departs = local_time(customer.get("departs"))
    return None if route is None or departs is None else departs + timedelta(minutes=route[0])


def _clean(name) -> str:
    """A printed name as the gate reads it: single spaces, none at the ends."""
    return " ".join(str(name or "").split())


def delivery_problem(state: dict, customer: dict, event: dict, method: str, courier_eta: datetime | None) -> str | None:
    """Why ``method`` cannot get the tickets to the customer for ``event``, or None."""
    if method == "mobile":
        return None if customer.get("smartphone") else "the customer has no smartphone for mobile tickets"
    if method == "will_call":
        venue = state["venues"].get(event["venue"], {})
        if venue.get("desk_status") != "open":
            return f"the will-call desk at {event['venue']} is {venue.get('desk_status')}: {venue.get('notice', '')}"
        doors = local_time(event["doors"])
        opens = datetime.fromisoformat(f"{event['doors'][:10]}T{venue['desk_opens']}")
        if opens > doors - timedelta(minutes=WILL_CALL_LEAD):
            return (f"the will-call desk at {event['venue']} opens at {venue['desk_opens']}, less than "
                    f"{WILL_CALL_LEAD} minutes before the doors at {event['doors'][11:16]}")
        return None
    if method == "courier":
        departs = local_time(customer.get("departs"))
        if courier_eta is None or departs is None or courier_eta > departs:
            eta = format_time(courier_eta) if courier_eta else "unknown"
            return f"the courier would arrive at {eta}, after the customer leaves home at {customer.get('departs')}"
        return None
    return f"unknown delivery method {method!r}"


class TicketingWorld(World):
    """Tools of a ticketing platform's operator console; see the module docstring for the state."""

    domain = "Ticketing"
    description = ("An event-ticketing platform: events at venues across a city joined by transit, seating "
                   "sections, expiring seat holds, promotions with quotas, orders and delivery, names printed on "
                   "tickets, entry-gate slots.")
    # What commits nothing any more: a cart let go or voided, a refunded order, a void ticket. A bought cart stays
    # live, so the carts a plan holds on its way to an order never outnumber a solution's.
    inert = {"carts": {"status": ["released", "void"]}, "orders": {"status": ["refunded"]},
             "tickets": {"status": ["void"]}}
    tallies = {"promotions": {"used"}}  # a valid promotion the agent pays with is no collateral

    # ----------------------------------------------------------------- helpers

    def _hold_view(self, hid: str) -> dict:
        hold = self.carts[hid]
        return {"hold_id": hid, **hold, "status": hold_status(hold, self.clock.now)}

    def _promo_problem(self, code: str, event_id: str, section_id: str, count: int) -> str | None:
        promo = self.promotions.get(code)
        if promo is None:
            return f"no promotion {code!r}"
        if promo["status"] != "active":
            return f"promotion {code} is {promo['status']}"
        ends = local_time(promo.get("ends"))
        if ends is not None and self.clock.now >= ends:
            return f"promotion {code} ended at {promo['ends']}"
        if promo.get("event") not in (None, event_id):
            return f"promotion {code} is for event {promo['event']} only"
        if promo.get("sections") and section_id not in promo["sections"]:
            return f"promotion {code} applies to sections {', '.join(promo['sections'])} only"
        if promo["quota"] - promo["used"] < count:
            return f"promotion {code} has {promo['quota'] - promo['used']} tickets of quota left, not {count}"
        return None

    def _price(self, hold: dict, code: str) -> dict:
        section = self.sections[hold["section"]]
        count = len(hold["seats"])
        pct = self.promotions[code]["discount_pct"] if code else 0
        subtotal = section["price"] * count
        discount = round(subtotal * pct / 100)
        return {"seats": count, "unit_price": section["price"], "subtotal": subtotal, "promo_code": code or None,
                "discount": discount, "total": subtotal - discount}

    def _live_hold(self, hold_id: str) -> tuple[dict | None, str | None]:
        hold = self.carts.get(hold_id)
        if hold is None:
            return None, f"no hold {hold_id!r}"
        status = hold_status(hold, self.clock.now)
        if status != "held":
            why = f" (it expired at {hold['expires']})" if status == "expired" else ""
            return None, f"hold {hold_id} is {status}{why}"
        return hold, None

    def _sale_problem(self, event_id: str, section_id: str) -> str | None:
        event, section = self.events.get(event_id), self.sections.get(section_id)
        if event is None:
            return f"no event {event_id!r}"
        if event["status"] != "on_sale":
            return f"event {event_id} is {event['status']}: {event.get('notice', '')}"
        if section is None or section["event"] != event_id:
            return f"no section {section_id!r} for event {event_id}"
        if section["status"] != "open":
            return f"section {section_id} is {section['status']}: {section.get('notice', '')}"
        return None

    def _available(self, section_id: str) -> dict:
        """The section's unsold seats by row, less those in live holds."""
        held = {seat for h in self.carts.values() if h["section"] == section_id
                and hold_status(h, self.clock.now) == "held" for seat in h["seats"]}
        return {row: [s for s in seats if f"{row}{s}" not in held]
                for row, seats in sorted(self.sections[section_id]["rows"].items())}

    def _free_seats(self, section_id: str, seats: list[str]) -> None:
        rows = self.sections[section_id]["rows"]
        for seat in seats:
            rows.setdefault(seat[0], []).append(int(seat[1:]))
            rows[seat[0]].sort()

    def _order_view(self, oid: str) -> dict:
        order = self.orders[oid]
        return {"order_id": oid, **order,
                "tickets": [{"ticket_id": t, **self.tickets[t]} for t in order["tickets"] if t in self.tickets]}

    # ------------------------------------------------------------------- reads

    @tool
    def list_events(self, venue_id: str = "") -> dict:
        """List the events on sale or announced, optionally only those at one venue.

        Args:
            venue_id: A venue id to filter by; empty for every event.
        """
        if venue_id and venue_id not in self.venues:
            return fail(f"no venue {venue_id!r}; venues: {', '.join(sorted(self.venues))}")
        rows = [{"event_id": e, **{k: x[k] for k in ("title", "performer", "venue", "doors", "starts", "status")}}
                for e, x in sorted(self.events.items()) if not venue_id or x["venue"] == venue_id]
        return ok({"events": rows})

    @tool
    def search_events(self, text: str) -> dict:
        """Find events whose title or performer contains the text (case-insensitive).

        Args:
            text: Part of a performer's name or an event title.
        """
        needle = text.strip().lower()
        if len(needle) < 3:
            return fail("give at least three letters to search for")
        rows = [{"event_id": e, "title": x["title"], "performer": x["performer"], "venue": x["venue"],
                 "starts": x["starts"], "status": x["status"]} for e, x in sorted(self.events.items())
                if needle in x["title"].lower() or needle in x["performer"].lower()]
        return ok({"events": rows})

    @tool
    def get_event(self, event_id: str) -> dict:
        """Read an event: venue, doors and start times, status and notices, cart time, and its seating sections.

        Args:
            event_id: The event's id.
        """
        event = self.events.get(event_id)
        if event is None:
            return fail(f"no event {event_id!r}")
        sections = [{"section_id": s, "name": x["name"], "price": x["price"], "accessible": x["accessible"],
                     "gate": x["gate"], "status": x["status"],
                     "free_seats": sum(len(r) for r in self._available(s).values()),
                     "longest_adjacent_run": longest_run(self._available(s))}
                    for s, x in sorted(self.sections.items()) if x["event"] == event_id]
        return ok({"event_id": event_id, **event, "sections": sections})

    @tool
    def get_section(self, section_id: str) -> dict:
        """Read a seating section: price, accessibility, entry gate, status, notices and its free seats by row.

        Args:
            section_id: The section's id.
        """
        section = self.sections.get(section_id)
        if section is None:
            return fail(f"no section {section_id!r}")
        return ok({"section_id": section_id, **section, "rows": self._available(section_id)})

    @tool
    def get_venue(self, venue_id: str) -> dict:
        """Read a venue: status, will-call desk hours, and its entry gates with their entry slots.

        Args:
            venue_id: The venue's id.
        """
        venue = self.venues.get(venue_id)
        if venue is None:
            return fail(f"no venue {venue_id!r}")
        gates = [{"gate_id": g, **x} for g, x in sorted(self.gates.items()) if x["venue"] == venue_id]
        return ok({"venue_id": venue_id, **venue, "gates": gates})

    @tool
    def list_promotions(self, event_id: str = "") -> dict:
        """List promotion codes with their discount, quota used, end time and status, optionally for one event.

        Args:
            event_id: Only promotions valid for this event; empty for all.
        """
        if event_id and event_id not in self.events:
            return fail(f"no event {event_id!r}")
        rows = [{"code": c, **p} for c, p in sorted(self.promotions.items())
                if not event_id or p.get("event") in (None, event_id)]
        return ok({"promotions": rows})

    @tool
    def get_customer(self, customer_id: str) -> dict:
        """Read a customer's profile: home, budget per order, whether they have a smartphone, when they leave home,
        and their party (the names of the people coming, the customer first).

        Args:
            customer_id: The customer's id.
        """
        customer = self.customers.get(customer_id)
        if customer is None:
            return fail(f"no customer {customer_id!r}")
        return ok({"customer_id": customer_id, **customer})

    @tool
    def list_customer_orders(self, customer_id: str) -> dict:
        """A customer's seat holds (with their live status) and orders (with tickets, delivery and entry slot).

        Args:
            customer_id: The customer's id.
        """
        if customer_id not in self.customers:
            return fail(f"no customer {customer_id!r}")
        holds = [self._hold_view(h) for h, x in sorted(self.carts.items()) if x["customer"] == customer_id]
        orders = [self._order_view(o) for o, x in sorted(self.orders.items()) if x["customer"] == customer_id]
        return ok({"customer_id": customer_id, "holds": holds, "orders": orders})

    @tool
    def get_order(self, order_id: str) -> dict:
        """Read an order: seats, total, delivery (and a courier's arrival), entry slot, tickets and status.

        Args:
            order_id: The order's id.
        """
        if order_id not in self.orders:
            return fail(f"no order {order_id!r}")
        return ok(self._order_view(order_id))

    @tool(cost=2)
    def get_travel_time(self, origin_id: str, destination_id: str) -> dict:
        """The fastest open transit route between two places (a home, a station or a venue's gate) and its minutes.

        Args:
            origin_id: Where the trip starts (a customer's home is a place too).
            destination_id: Where it ends, e.g. a venue's gate.
        """
        for place in (origin_id, destination_id):
            if place not in self.places:
                return fail(f"no place {place!r}")
        route = shortest_route(self.links, origin_id, destination_id)
        closed = sorted(f"{k} ({x.get('line', 'walk')})" for k, x in self.links.items() if not x.get("open", True))
        if route is None:
            return ok({"reachable": False, "minutes": None, "path": [], "closed_links": closed})
        return ok({"reachable": True, "minutes": route[0], "path": route[1], "closed_links": closed})

    @tool
    def get_quote(self, hold_id: str, promo_code: str = "") -> dict:
        """Price a live hold, optionally with a promotion code (checked as it stands now), and the delivery fee each
        method adds to the total the budget must cover.

        Args:
            hold_id: The hold to price.
            promo_code: A promotion code to apply; empty for none.
        """
        hold, problem = self._live_hold(hold_id)
        if problem:
            return fail(problem)
        if promo_code:
            problem = self._promo_problem(promo_code, hold["event"], hold["section"], len(hold["seats"]))
            if problem:
                return fail(problem)
        budget = self.customers[hold["customer"]]["budget"]
        price = self._price(hold, promo_code)
        # The fees were found only from purchase totals by a playtester, yet the budget covers them.
        return ok({"hold_id": hold_id, **price, "customer_budget": budget, "within_budget": price["total"] <= budget,
                   "delivery_fees": dict(self.settings["delivery_fee"])})

    # ------------------------------------------------------------------ writes

    @tool(mutates=True, cost=2)
    def hold_seats(self, customer_id: str, section_id: str, count: int) -> dict:
        """Hold ``count`` adjacent seats (one row, consecutive numbers) in a section; the cart expires after the
        event's cart time.

        Args:
            customer_id: The customer the seats are held for.
            section_id: The section to sit in.
            count: How many seats, side by side (1-8).
        """
        if customer_id not in self.customers:
            return fail(f"no customer {customer_id!r}")
        section = self.sections.get(section_id)
        if section is None:
            return fail(f"no section {section_id!r}")
        if not 1 <= count <= 8:
            return fail("count must be between 1 and 8")
        problem = self._sale_problem(section["event"], section_id)
        if problem:
            return fail(problem)
        block = adjacent_block(self._available(section_id), count)
        if block is None:
            return fail(f"section {section_id} has no {count} adjacent free seats in one row")
        row, run = block
        event = self.events[section["event"]]
        hid = self.next_id("hold", "HLD")
        expires = self.clock.now + timedelta(minutes=event["cart_minutes"])
        self.carts[hid] = {"customer": customer_id, "event": section["event"], "section": section_id,
                           "seats": [f"{row}{s}" for s in run], "held_at": self.now, "expires": format_time(expires),
                           "status": "held", "promo": None}
        return ok(self._hold_view(hid), message=f"{count} seats held in {section_id} until {format_time(expires)}")

    @tool(mutates=True)
    def release_hold(self, hold_id: str) -> dict:
        """Release a live hold, putting its seats back on sale.

        Args:
            hold_id: The hold to release.
        """
        hold, problem = self._live_hold(hold_id)
        if problem:
            return fail(problem)
        hold["status"] = "released"
        return ok(message=f"{hold_id} released")

    @tool(mutates=True, cost=2)
    def apply_promo(self, hold_id: str, promo_code: str) -> dict:
        """Attach a promotion code to a live hold (it is checked again at purchase).

        Args:
            hold_id: The hold.
            promo_code: The promotion code.
        """
        hold, problem = self._live_hold(hold_id)
        if problem:
            return fail(problem)
        problem = self._promo_problem(promo_code, hold["event"], hold["section"], len(hold["seats"]))
        if problem:
            return fail(problem)
        hold["promo"] = promo_code
        return ok(self._price(hold, promo_code), message=f"{promo_code} applied to {hold_id}")

    @tool(mutates=True, cost=3)
    def purchase(self, hold_id: str, delivery: Delivery, promo_code: str = "") -> dict:
        """Buy a live hold: the promotion (given here or applied before) is checked, the total must fit the
        customer's budget, and the delivery must get the tickets to them in time.

        Args:
            hold_id: The hold to buy.
            delivery: mobile (needs a smartphone), will_call (collect at the venue desk, which must open at
                least 30 minutes before the doors) or courier (to home).
            promo_code: A promotion code; empty to use the one applied to the hold, if any.
        """
        hold, problem = self._live_hold(hold_id)
        if problem:
            return fail(problem)
        code = promo_code or hold.get("promo") or ""
        customer, event = self.customers[hold["customer"]], self.events[hold["event"]]
        problem = self._sale_problem(hold["event"], hold["section"])
        if not problem and code:
            problem = self._promo_problem(code, hold["event"], hold["section"], len(hold["seats"]))
        eta = self.clock.now + timedelta(minutes=self.settings["courier_minutes"])
        problem = problem or delivery_problem(self.state, customer, event, delivery, eta)
        if problem:
            return fail(problem)
        price = self._price(hold, code)
        total = price["total"] + self.settings["delivery_fee"].get(delivery, 0)
        if total > customer["budget"]:
            return fail(f"the total {total} (with the {delivery} fee) exceeds the customer's budget "
                        f"{customer['budget']}")
        oid = self.next_id("order", "ORD")
        tickets = []
        for seat in hold["seats"]:
            tid = self.next_id("ticket", "TKT")
            self.tickets[tid] = {"order": oid, "seat": seat, "status": "issued", "holder": None}
            tickets.append(tid)
        if code:
            self.promotions[code]["used"] += len(hold["seats"])
        rows = self.sections[hold["section"]]["rows"]
        for seat in hold["seats"]:
            rows[seat[0]] = [s for s in rows[seat[0]] if s != int(seat[1:])]
        hold.update(status="purchased", promo=code or None)
        self.orders[oid] = {"customer": hold["customer"], "event": hold["event"], "section": hold["section"],
                            "seats": list(hold["seats"]), "promo": code or None, "total": total,
                            "delivery": delivery, "courier_eta": format_time(eta) if delivery == "courier" else None,
                            "status": "paid", "entry": None, "tickets": tickets}
        return ok(self._order_view(oid), message=f"order {oid} paid: {total}")

    @tool(mutates=True, cost=2)
    def change_delivery(self, order_id: str, delivery: Delivery) -> dict:
        """Change how a paid order's tickets reach the customer (a new courier run leaves now); the new
        delivery fee must still fit the budget.

        Args:
            order_id: The paid order.
            delivery: mobile, will_call or courier.
        """
        order = self.orders.get(order_id)
        if order is None:
            return fail(f"no order {order_id!r}")
        if order["status"] != "paid":
            return fail(f"order {order_id} is {order['status']}")
        if order["delivery"] == delivery and delivery != "courier":
            return fail(f"order {order_id} already goes by {delivery}")
        customer, event = self.customers[order["customer"]], self.events[order["event"]]
        eta = self.clock.now + timedelta(minutes=self.settings["courier_minutes"])
        problem = delivery_problem(self.state, customer, event, delivery, eta)
        if problem:
            return fail(problem)
        fees = self.settings["delivery_fee"]
        total = order["total"] - fees.get(order["delivery"], 0) + fees.get(delivery, 0)
        if total > customer["budget"]:
            return fail(f"with the {delivery} fee the total {total} exceeds the customer's budget {customer['budget']}")
        order.update(delivery=delivery, total=total, courier_eta=format_time(eta) if delivery == "courier" else None)
        return ok(self._order_view(order_id), message=f"{order_id} now delivered by {delivery}")

    @tool(mutates=True, cost=2)
    def name_tickets(self, order_id: str, names: list[str]) -> dict:
        """Print a name on each ticket of a paid order, in seat order (the gate checks every name against photo ID);
        naming again replaces the names printed before.

        Args:
            order_id: The paid order.
            names: One full name per ticket, as many names as the order has tickets.
        """
        order = self.orders.get(order_id)
        if order is None:
            return fail(f"no order {order_id!r}")
        if order["status"] != "paid":
            return fail(f"order {order_id} is {order['status']}")
        names = [_clean(n) for n in names]
        if len(names) != len(order["tickets"]) or not all(names):
            return fail(f"order {order_id} has {len(order['tickets'])} tickets: give one non-empty name for each")
        for tid, name in zip(order["tickets"], names):
            self.tickets[tid]["holder"] = name
        # The tickets alone: printing names is no look at the order's delivery or notices.
        tickets = [{"ticket_id": t, "seat": self.tickets[t]["seat"], "holder": self.tickets[t]["holder"]}
                   for t in order["tickets"]]
        return ok({"order_id": order_id, "tickets": tickets}, message=f"names printed on the tickets of {order_id}")

    @tool(mutates=True, cost=3)
    def exchange_order(self, order_id: str, hold_id: str, delivery: Delivery, promo_code: str = "") -> dict:
        """Exchange a paid order's seats for those of a live hold of the same customer and show: the old seats go
        back on sale, new tickets are issued (carrying the old tickets' names, in seat order), the entry slot is
        released, and the new total must fit the budget.

        Args:
            order_id: The paid order to exchange.
            hold_id: A live hold with the new seats.
            delivery: How the new tickets reach the customer: mobile, will_call or courier.
            promo_code: A promotion code for the new seats; empty for none.
        """
        order = self.orders.get(order_id)
        if order is None:
            return fail(f"no order {order_id!r}")
        if order["status"] != "paid":
            return fail(f"order {order_id} is {order['status']}")
        hold, problem = self._live_hold(hold_id)
        if problem:
            return fail(problem)
        if hold["customer"] != order["customer"] or hold["event"] != order["event"]:
            return fail(f"hold {hold_id} is not for the same customer and show as {order_id}")
        code = promo_code or hold.get("promo") or ""
        problem = self._sale_problem(hold["event"], hold["section"])
        if not problem and code:
            problem = self._promo_problem(code, hold["event"], hold["section"], len(hold["seats"]))
        customer, event = self.customers[order["customer"]], self.events[order["event"]]
        eta = self.clock.now + timedelta(minutes=self.settings["courier_minutes"])
        problem = problem or delivery_problem(self.state, customer, event, delivery, eta)
        if problem:
            return fail(problem)
        total = self._price(hold, code)["total"] + self.settings["delivery_fee"].get(delivery, 0)
        if total > customer["budget"]:
            return fail(f"the new total {total} exceeds the customer's budget {customer['budget']}")
        holders = [self.tickets[t].get("holder") for t in order["tickets"]]
        self._refund(order)
        section = self.sections.get(order["section"], {})
        if section.get("status") == "open":
            self._free_seats(order["section"], order["seats"])
        if order["promo"] in self.promotions:
            old = self.promotions[order["promo"]]
            old["used"] = max(0, old["used"] - len(order["seats"]))
        if code:
            self.promotions[code]["used"] += len(hold["seats"])
        rows = self.sections[hold["section"]]["rows"]
        tickets = []
        for i, seat in enumerate(hold["seats"]):
            rows[seat[0]] = [x for x in rows[seat[0]] if x != int(seat[1:])]
            tid = self.next_id("ticket", "TKT")
            self.tickets[tid] = {"order": order_id, "seat": seat, "status": "issued",
                                 "holder": holders[i] if i < len(holders) else None}
            tickets.append(tid)
        hold.update(status="purchased", promo=code or None)
        order.update(section=hold["section"], seats=list(hold["seats"]), promo=code or None, total=total,
                     delivery=delivery, courier_eta=format_time(eta) if delivery == "courier" else None,
                     status="paid", entry=None, tickets=tickets)
        return ok(self._order_view(order_id), message=f"{order_id} exchanged to {hold['section']}: total {total}")

    @tool(mutates=True, cost=3)
    def cancel_order(self, order_id: str) -> dict:
        """Cancel a paid order and refund it: its seats go back on sale, its entry slot is freed.

        Args:
            order_id: The order to cancel.
        """
        order = self.orders.get(order_id)
        if order is None:
            return fail(f"no order {order_id!r}")
        if order["status"] != "paid":
            return fail(f"order {order_id} is {order['status']}")
        if order["entry"]:
            slots = self.gates[order["entry"]["gate"]]["slots"]
            if order["entry"]["slot"] in slots:
                slots[order["entry"]["slot"]] += len(order["seats"])
        section = self.sections.get(order["section"], {})
        if section.get("event") == order["event"] and section.get("status") == "open":
            self._free_seats(order["section"], order["seats"])
        if order["promo"] in self.promotions:
            promo = self.promotions[order["promo"]]
            promo["used"] = max(0, promo["used"] - len(order["seats"]))
        for tid in order["tickets"]:
            self.tickets[tid]["status"] = "void"
        order.update(status="refunded", entry=None)
        return ok(message=f"{order_id} cancelled and refunded {order['total']}")

    @tool(mutates=True, cost=2)
    def transfer_order(self, order_id: str, recipient_id: str) -> dict:
        """Hand a paid order of mobile tickets to another customer of the platform before the doors open (its entry
        slot goes with it).

        Args:
            order_id: The paid order.
            recipient_id: The customer id of the person receiving the tickets.
        """
        order = self.orders.get(order_id)
        if order is None:
            return fail(f"no order {order_id!r}")
        if order["status"] != "paid":
            return fail(f"order {order_id} is {order['status']}")
        recipient = self.customers.get(recipient_id)
        if recipient is None:
            return fail(f"no customer {recipient_id!r}")
        if recipient_id == order["customer"]:
            return fail(f"order {order_id} already belongs to {recipient_id}")
        if order["delivery"] != "mobile" or not recipient.get("smartphone"):
            return fail("only mobile tickets can be transferred, to a customer with a smartphone")
        doors = local_time(self.events[order["event"]]["doors"])
        if self.clock.now >= doors:
            return fail(f"transfers close when the doors open ({self.events[order['event']]['doors']})")
        order.update(customer=recipient_id, transferred_from=order["customer"])
        return ok(self._order_view(order_id), message=f"{order_id} transferred to {recipient_id}")

    @tool(mutates=True, cost=2)
    def book_entry_slot(self, order_id: str, gate_id: str, slot: str) -> dict:
        """Book the group's entry slot at the gate of their section (replacing any earlier booking); the customer
        must reach the gate by the slot, leaving home when their profile says.

        Args:
            order_id: The paid order.
            gate_id: The gate, which must be the one serving the order's section.
            slot: The slot's start, ISO timestamp, between the doors and the start of the show.
        """
        order = self.orders.get(order_id)
        if order is None:
            return fail(f"no order {order_id!r}")
        if order["status"] != "paid":
            return fail(f"order {order_id} is {order['status']}")
        gate = self.gates.get(gate_id)
        if gate is None:
            return fail(f"no gate {gate_id!r}")
        event, section = self.events[order["event"]], self.sections[order["section"]]
        if gate["venue"] != event["venue"]:
            return fail(f"gate {gate_id} is at {gate['venue']}; the event is at {event['venue']}")
        if section["gate"] != gate_id:
            return fail(f"section {order['section']} enters through {section['gate']}, not {gate_id}")
        if gate["status"] != "open":
            return fail(f"gate {gate_id} is {gate['status']}: {gate.get('notice', '')}")
        moment = local_time(slot)
        if moment is None or slot not in gate["slots"]:
            return fail(f"no slot {slot!r} at {gate_id}; slots: {', '.join(sorted(gate['slots']))}")
        if not local_time(event["doors"]) <= moment <= local_time(event["starts"]):
            return fail(f"slot {slot} is outside the doors-to-start window {event['doors']} - {event['starts']}")
        need = len(order["seats"])
        if gate["slots"][slot] < need:
            return fail(f"slot {slot} at {gate_id} has {gate['slots'][slot]} places left, not {need}")
        arrives = reach_time(self.state, self.customers[order["customer"]], gate_id)
        if arrives is None:
            return fail(f"gate {gate_id} cannot be reached from the customer's home by open transit")
        if arrives > moment:
            return fail(f"leaving home at {self.customers[order['customer']]['departs']}, the customer reaches "
                        f"{gate_id} at {format_time(arrives)}, after the slot {slot}")
        if order["entry"]:
            old = self.gates[order["entry"]["gate"]]["slots"]
            if order["entry"]["slot"] in old:
                old[order["entry"]["slot"]] += need
        gate["slots"][slot] -= need
        order["entry"] = {"gate": gate_id, "slot": slot}
        return ok(self._order_view(order_id), message=f"entry at {gate_id} at {slot} booked for {order_id}")

    # ------------------------------------------------- predicates and operations
    # A request, as checks name it: {"customer", "events": [event ids that would do], "count",
    # "accessible": seats must be accessible, "entry": an entry slot must be booked, "deliveries": the delivery
    # methods the customer asked for}, and "feature" when the section must have it.

    def _paid(self, customer: str) -> list[dict]:
        return [o for _, o in sorted(self.orders.items()) if o["customer"] == customer and o["status"] == "paid"]

    def _serving(self, request: dict) -> list[dict]:
        out = []
        for order in self._paid(request["customer"]):
            event, section = self.events[order["event"]], self.sections[order["section"]]
            if (order["event"] in request["events"] and event["status"] == "on_sale"
                    and section["status"] == "open" and section["event"] == order["event"]
                    and self.gates.get(section["gate"], {}).get("status") == "open"
                    and self._in_time(order, section)
                    and len(order["seats"]) == request["count"]
                    and request.get("feature", "") in ["", *section.get("features", [])]
                    and (not request.get("accessible")
                         or (section["accessible"] and self.gates.get(section["gate"], {}).get("step_free")))
                    and all(self.tickets[t]["status"] == "issued" for t in order["tickets"])):
                out.append(order)
        return out

    def _in_time(self, order: dict, section: dict) -> bool:
        """The customer, leaving home when they do, reaches the section's gate by the start."""
        arrives = reach_time(self.state, self.customers[order["customer"]], section["gate"])
        return arrives is not None and arrives <= local_time(self.events[order["event"]]["starts"])

    def _delivered(self, order: dict) -> bool:
        customer, event = self.customers[order["customer"]], self.events[order["event"]]
        return delivery_problem(self.state, customer, event, order["delivery"], local_time(order.get("courier_eta"))) is None

    def _entry_ok(self, order: dict) -> bool:
        entry = order.get("entry")
        if not entry:
            return False
        gate, event = self.gates[entry["gate"]], self.events[order["event"]]
        section = self.sections[order["section"]]
        moment = local_time(entry["slot"])
        arrives = reach_time(self.state, self.customers[order["customer"]], entry["gate"])
        return (gate["venue"] == event["venue"] and section["gate"] == entry["gate"] and gate["status"] == "open"
                and entry["slot"] in gate["slots"] and local_time(event["doors"]) <= moment <= local_time(event["starts"])
                and arrives is not None and arrives <= moment
                and (gate.get("step_free") or not section["accessible"]))

    @predicate
    def ticketed(self, request: dict) -> bool:
        """The customer holds a paid order of ``count`` issued, adjacent tickets for one of the events, in an open
        section (accessible, behind a step-free gate, when asked) whose gate is open and reached by the start, of an
        event still on sale."""
        return bool(self._serving(request))

    @predicate
    def delivered(self, request: dict) -> bool:
        """An order serving the request goes by a delivery the customer asked for (any, without ``deliveries``) and
        gets the tickets to them in time."""
        asked = request.get("deliveries") or ["mobile", "will_call", "courier"]
        return any(o["delivery"] in asked and self._delivered(o) for o in self._serving(request))

    @predicate
    def entry_booked(self, request: dict) -> bool:
        """An order serving the request has an entry slot at its section's open gate, between the doors and the
        start, that the customer reaches in time (step-free for accessible seats)."""
        return any(self._entry_ok(o) for o in self._serving(request))

    @predicate
    def tickets_named(self, request: dict) -> bool:
        """An order serving the request has one ticket printed with each name on the customer's party list as it is
        now (letter case and spacing aside)."""
        party = sorted(_clean(n).casefold() for n in self.customers[request["customer"]].get("party", []))
        return any(sorted(_clean(self.tickets[t].get("holder")).casefold() for t in o["tickets"]) == party
                   for o in self._serving(request))

    @predicate
    def only_as_asked(self, request: dict) -> bool:
        """The customer has at most one paid order, for one of the events, of ``count`` tickets, within budget."""
        paid = self._paid(request["customer"])
        budget = self.customers[request["customer"]]["budget"]
        return len(paid) <= 1 and all(o["event"] in request["events"] and len(o["seats"]) == request["count"]
                                      and o["total"] <= budget for o in paid)

    @predicate
    def no_new_order(self, customer: str, existing: list) -> bool:
        """The customer has no paid order besides ``existing``."""
        return not [o for o, x in self.orders.items() if x["customer"] == customer and x["status"] == "paid"
                    and o not in existing]

    @predicate
    def has_hold(self, customer: str, section: str = "") -> bool:
        """The customer has a live hold (in ``section``, when given)."""
        return any(h["customer"] == customer and section in ("", h["section"])
                   and hold_status(h, self.clock.now) == "held" for h in self.carts.values())

    @predicate
    def has_order(self, customer: str, section: str = "") -> bool:
        """The customer has a paid order (in ``section``, when given)."""
        return any(section in ("", o["section"]) for o in self._paid(customer))

    @predicate
    def hold_lapsed(self, customer: str, section: str) -> bool:
        """A hold of the customer in ``section`` has expired unbought."""
        return any(h["customer"] == customer and h["section"] == section and hold_status(h, self.clock.now) == "expired"
                   for h in self.carts.values())

    @predicate
    def call_argument(self, name: str, value: Any, ctx) -> bool:
        """The call being made passes ``value`` as ``name``."""
        return ctx is not None and ctx.arguments.get(name) == value

    @operation
    def shorten_carts(self, event_id: str, minutes: int, notice: str) -> None:
        """A virtual queue opens: carts of the event last ``minutes`` from when they were placed."""
        self.events[event_id].update(cart_minutes=minutes, notice=notice)
        for hold in self.carts.values():
            if hold["event"] == event_id and hold_status(hold, self.clock.now) == "held":
                hold["expires"] = format_time(datetime.fromisoformat(hold["held_at"]) + timedelta(minutes=minutes))

    @operation
    def sell_out(self, section_id: str, notice: str) -> None:
        """Another buyer takes every unsold seat of a section (not the seats in live holds)."""
        section, free = self.sections[section_id], self._available(section_id)
        section["rows"] = {row: [s for s in seats if s not in free.get(row, [])]
                           for row, seats in section["rows"].items()}
        section["notice"] = notice

    @operation
    def close_section(self, section_id: str, notice: str) -> None:
        """A section closes: holds in it are void, its paid orders refunded and their tickets void."""
        section = self.sections[section_id]
        section.update(status="closed", notice=notice)
        for hold in self.carts.values():
            if hold["section"] == section_id and hold_status(hold, self.clock.now) == "held":
                hold["status"] = "void"
        for order in self.orders.values():
            if order["section"] == section_id and order["status"] == "paid":
                self._refund(order)

    def _refund(self, order: dict) -> None:
        if order["entry"]:
            slots = self.gates[order["entry"]["gate"]]["slots"]
            if order["entry"]["slot"] in slots:
                slots[order["entry"]["slot"]] += len(order["seats"])
        order.update(status="refunded", entry=None)
        for tid in order["tickets"]:
            self.tickets[tid]["status"] = "void"

    @operation
    def refund_event_orders(self, event_id: str) -> None:
        """The promoter refunds every paid order of an event (its tickets void)."""
        for order in self.orders.values():
            if order["event"] == event_id and order["status"] == "paid":
                self._refund(order)

    @operation
    def void_holds(self, event_id: str) -> None:
        """Every live hold of an event is void."""
        for hold in self.carts.values():
            if hold["event"] == event_id and hold_status(hold, self.clock.now) == "held":
                hold["status"] = "void"

    @operation
    def flag_orders(self, event_id: str, notice: str) -> None:
        """A service notice on every paid order of an event (what the customer's order page shows)."""
        for order in self.orders.values():
            if order["event"] == event_id and order["status"] == "paid":
                order["notice"] = notice

    @operation
    def delay_courier(self, customer: str, minutes: int, notice: str) -> None:
        """The courier runs of the customer's paid orders arrive ``minutes`` later."""
        for order in self._paid(customer):
            if order["delivery"] == "courier" and order.get("courier_eta"):
                eta = datetime.fromisoformat(order["courier_eta"]) + timedelta(minutes=minutes)
                order.update(courier_eta=format_time(eta), courier_notice=notice)
