"""Freight: a cross-border freight forwarder's operations system.

State containers (JSON-like dicts keyed by id):

- ``sites``: ``{name, kind: terminal|depot|crossing, country}``: terminals and inland depots on
  either side of the border, and the border crossings between them.
- ``roads``: ``{a, b, minutes, open}``: the road/rail graph with driving minutes. A leg to or from a
  crossing never runs through another crossing.
- ``crossings``: ``{status: open|outage, outage_until, notice, opens, closes, queue_minutes,
  banned, permit_for, bonded_for, required_docs, inspected, inspection: {limit, used: {date: n}}, brokers}``:
  customs rules per commodity (banned goods, goods that need a permit for this crossing, goods
  that only bonded trucks may carry), the documents every declaration needs, the daily quota of
  inspections (counted by the date a consignment crosses, afresh at 00:00: ``used`` counts other
  forwarders' inspections, each of this forwarder's movements through the crossing that day one more) and
  the customs ``brokers`` with an office there.
- ``slots``: ``{crossing, start, end, status: free|taken|cancelled, consignment, note}``: the crossings'
  capacity; a truck must reach the crossing by ``end`` and crosses from ``start`` on. ``taken`` by another
  forwarder or an order (``consignment`` names for whom), ``cancelled`` by the crossing.
- ``reservations``: ``{slot, consignment, status: booked|used|released|cancelled, booked_at, note}``: this
  forwarder's bookings of free slots, one booked per consignment; a booking holds only while its slot stays
  free (taken or cancelled under it, it is lost). Tools show a slot with a live booking as booked or used.
- ``consignments``: ``{shipper, consignee, commodity, weight_kg, declared_value, origin, location,
  available_from, destination, deliver_by, documents: {type: valid|rejected}, reissuable, priority,
  truck, note}``: ``location`` is the terminal it waits at, from ``available_from`` on; ``consignee_id``
  names the consignee's record and ``delivery_dock`` the dock the forwarder told the driver to unload at.
- ``consignees``: ``{name, site, docks, receiving_dock, note}``: the consignee's own record of the docks at
  its site and the one it receives goods at.
- ``declarations``: ``{consignment, crossing, status: cleared|held|void, missing, filed_at, note}``: a
  consignment has one declaration in force, a new one voids the one before.
- ``permits``: ``{consignment, crossing, valid_from, valid_to, status: valid|revoked, note}``.
- ``carriers``: ``{name, bonded}``; ``trucks``: ``{carrier, capacity_kg, bonded, location,
  shift_end, status: available|assigned|reassigned|en_route, consignment, note}``.
- ``permit_desks``: ``{crossing: {status: open|suspended, lead_minutes, valid_hours, note}}``.
- ``movements``: ``{consignment, truck, crossing, slot, departs, at_crossing, crosses, arrives,
  status: scheduled|cancelled}``.
- ``counters``: the last declaration, permit, reservation and movement numbers.

Times are ISO strings at minute precision.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.clock import Clock, format_time, local_time
from sttgym.geo import shortest_route
from sttgym.tools import fail, ok, tool
from sttgym.world import World, operation, predicate

__all__ = ["FreightWorld", "LOAD_MINUTES", "leg_minutes"]

LOAD_MINUTES = 20  # loading at the terminal before the truck leaves
LIVE = ("scheduled", "delivered")  # a movement that counts



def leg_minutes(state: dict, a: str, b: str) -> int | None:
    """Driving minutes from ``a`` to ``b`` that pass through no crossing other than the ends."""
    avoid = {s for s, x in state["sites"].items() if x["kind"] == "crossing"} - {a, b}
    route = shortest_route(state["roads"], a, b, avoid=avoid)
    return None if route is None else route[0]


class FreightWorld(World):
    """Tools of a cross-border freight forwarder; see the module docstring."""

    domain = "Freight"
    description = ("A cross-border freight forwarder: terminals, depots and border crossings joined by roads, "
                   "customs rules per commodity, declarations and permits, crossing slots, carriers' trucks and "
                   "movements of consignments to their consignees.")
    # A cancelled movement, a released or cancelled slot booking and a void declaration commit nothing; a permit
    # is an authorisation and never reserves anything.
    inert = {"movements": {"status": ["cancelled"]}, "declarations": {"status": ["void"]},
             "reservations": {"status": ["released", "cancelled"]}, "permits": {"status": ["valid", "revoked"]}}

    def __init__(self, state: dict, clock: Clock):
        super().__init__(state, clock)
        # A task stored before slot bookings were records of their own has no container for them yet.
        state.setdefault("reservations", {})
        state.setdefault("counters", {}).setdefault("reservation", 0)
        state.setdefault("consignees", {})  # nor one stored before consignees had records of their own

    # ----------------------------------------------------------------- helpers

    def _crossing(self, crossing_id: str) -> dict | None:
        return self.crossings.get(crossing_id)

    def _booking_of(self, cid: str) -> str | None:
        """The consignment's booked reservation, while its slot is still free (else the booking is lost)."""
        held = [r for r, x in sorted(self.reservations.items()) if x["consignment"] == cid and x["status"] == "booked"
                and self.slots[x["slot"]]["status"] == "free"]
        return held[0] if held else None

    def _slot_of(self, cid: str) -> str | None:
        booking = self._booking_of(cid)
        return self.reservations[booking]["slot"] if booking else None

    def _slot_view(self, sid: str) -> dict:
        """A slot as tools show it: booked or used (by whom) while this forwarder's booking holds it."""
        slot = self.slots[sid]
        held = [x for x in self.reservations.values() if x["slot"] == sid and x["status"] in ("booked", "used")]
        if slot["status"] == "free" and held:
            return {**slot, "status": held[0]["status"], "consignment": held[0]["consignment"]}
        return dict(slot)

    def _live(self, cid: str) -> list[dict]:
        return [m for m in self.movements.values() if m["consignment"] == cid and m["status"] in LIVE]

    def _inspections_left(self, crossing_id: str, day: str) -> int:
        """Inspections left at a crossing on ``day``: the quota less others' and each of this forwarder's movements
        of inspected goods crossing there that day."""
        x = self.crossings[crossing_id]
        mine = sum(1 for m in self.movements.values() if m["crossing"] == crossing_id and m["status"] in LIVE
                   and m["crosses"][:10] == day and self.consignments[m["consignment"]]["commodity"] in x["inspected"])
        quota = x["inspection"]
        return max(0, quota["limit"] - quota["used"].get(day, 0) - mine)

    def _permit_ok(self, cid: str, crossing_id: str, moment: datetime) -> bool:
        return any(p["consignment"] == cid and p["crossing"] == crossing_id and p["status"] == "valid"
                   and local_time(p["valid_from"]) <= moment <= local_time(p["valid_to"]) for p in self.permits.values())

    def _cleared(self, cid: str, crossing_id: str) -> bool:
        return any(d["consignment"] == cid and d["crossing"] == crossing_id and d["status"] == "cleared"
                   for d in self.declarations.values())

    def _rule_problems(self, cid: str, crossing_id: str, moment: datetime | None = None) -> list[str]:
        """What in the crossing's rules stands against the consignment crossing there (at ``moment``)."""
        c, x = self.consignments[cid], self.crossings[crossing_id]
        out = []
        if c["commodity"] in x["banned"]:
            out.append(f"{c['commodity']} may not cross at {crossing_id} ({x.get('notice') or 'banned goods'})")
        until = local_time(x.get("outage_until"))
        if x["status"] != "open" and (until is None or moment is None or moment < until):
            out.append(f"{crossing_id} is {x['status']} until {x.get('outage_until') or 'further notice'}")
        if c["commodity"] in x["permit_for"] and moment is not None and not self._permit_ok(cid, crossing_id, moment):
            out.append(f"no permit for {cid} at {crossing_id} valid at {format_time(moment)}")
        if c["commodity"] in x["inspected"] and moment is not None \
                and self._inspections_left(crossing_id, format_time(moment)[:10]) <= 0:
            out.append(f"the daily inspection quota at {crossing_id} is used up for {format_time(moment)[:10]}")
        return out

    def _timeline(self, cid: str, truck_id: str, crossing_id: str, slot: dict | None) -> dict | str:
        """When the truck would leave, reach the crossing, cross and arrive; or why it cannot."""
        c, truck = self.consignments[cid], self.trucks[truck_id]
        ready = max(self.clock.now, local_time(c.get("available_from")) or self.clock.now)
        departs = ready + timedelta(minutes=LOAD_MINUTES)
        leg1 = leg_minutes(self.state, c["location"], crossing_id)
        leg2 = leg_minutes(self.state, crossing_id, c["destination"])
        if leg1 is None or leg2 is None:
            return f"no road from {c['location']} via {crossing_id} to {c['destination']}"
        reach = departs + timedelta(minutes=leg1)
        start = reach if slot is None else max(reach, local_time(slot["start"]))
        crosses = start + timedelta(minutes=self.crossings[crossing_id]["queue_minutes"])
        arrives = crosses + timedelta(minutes=leg2)
        out = {"departs": format_time(departs), "at_crossing": format_time(reach), "crosses": format_time(start),
               "arrives": format_time(arrives), "pickup_minutes": leg1, "onward_minutes": leg2}
        if local_time(truck["shift_end"]) < arrives:
            out["driver_problem"] = f"driver of {truck_id} is off shift at {truck['shift_end']}"
        return out

    def _consignment_view(self, cid: str) -> dict:
        c = self.consignments[cid]
        decl = [{"declaration_id": d, **x} for d, x in sorted(self.declarations.items()) if x["consignment"] == cid]
        perm = [{"permit_id": p, **x} for p, x in sorted(self.permits.items()) if x["consignment"] == cid]
        slot = self._slot_of(cid)
        moves = [{"movement_id": m, **x} for m, x in sorted(self.movements.items()) if x["consignment"] == cid]
        problems = self._rule_problems(cid, self.slots[slot]["crossing"], local_time(self.slots[slot]["start"])) \
            if slot else []
        bookings = [{"reservation_id": r, **x, "slot_status": self._slot_view(x["slot"])["status"]}
                    for r, x in sorted(self.reservations.items()) if x["consignment"] == cid]
        return {"consignment_id": cid, **c, "slot": slot,
                "slot_crossing": self.slots[slot]["crossing"] if slot else None, "crossing_problems": problems,
                "slot_bookings": bookings, "declarations": decl, "permits": perm, "movements": moves}

    # ------------------------------------------------------------------- reads

    @tool
    def list_sites(self, kind: str = "") -> dict:
        """List terminals, inland depots and border crossings with their country.

        Args:
            kind: terminal, depot or crossing to filter by; empty for every site.
        """
        rows = [{"site_id": s, **x} for s, x in sorted(self.sites.items()) if not kind or x["kind"] == kind]
        return ok({"sites": rows})

    @tool
    def list_crossings(self) -> dict:
        """List the border crossings with their status and opening hours."""
        rows = [{"crossing_id": x, "name": self.sites[x]["name"], "status": c["status"],
                 "outage_until": c.get("outage_until"), "opens": c["opens"], "closes": c["closes"]}
                for x, c in sorted(self.crossings.items())]
        return ok({"crossings": rows})

    @tool
    def get_crossing(self, crossing_id: str) -> dict:
        """Read a crossing's status, hours, queue and customs rules: banned goods, goods needing a permit or a
        bonded truck, required documents, the customs brokers with an office there, and inspections left today.

        Args:
            crossing_id: The crossing's id.
        """
        x = self._crossing(crossing_id)
        if x is None:
            return fail(f"no crossing {crossing_id!r}")
        today = self.now[:10]
        desk = self.permit_desks.get(crossing_id, {})
        return ok({"crossing_id": crossing_id, "name": self.sites[crossing_id]["name"], **x, "today": today,
                   "inspections_left_today": self._inspections_left(crossing_id, today), "permit_desk": desk})

    @tool
    def list_slots(self, crossing_id: str) -> dict:
        """The crossing slots of a crossing from now on, with status and the consignment booked on each.

        Args:
            crossing_id: The crossing's id.
        """
        if crossing_id not in self.crossings:
            return fail(f"no crossing {crossing_id!r}")
        rows = [{"slot_id": s, **self._slot_view(s)} for s, x in sorted(self.slots.items(),
                                                                        key=lambda i: (i[1]["start"], i[0]))
                if x["crossing"] == crossing_id and local_time(x["end"]) > self.clock.now]
        return ok({"crossing_id": crossing_id, "slots": rows})

    @tool
    def list_consignments(self) -> dict:
        """Open consignments with commodity, weight, location, destination and deliver-by time."""
        rows = [{"consignment_id": c, **{k: x[k] for k in ("shipper", "consignee", "commodity", "weight_kg",
                                                           "location", "destination", "deliver_by", "priority")}}
                for c, x in sorted(self.consignments.items())]
        return ok({"consignments": rows})

    @tool
    def get_consignment(self, consignment_id: str) -> dict:
        """Read a consignment: where it waits and from when, documents, declarations, permits, booked slot,
        assigned truck, movements and notes.

        Args:
            consignment_id: The consignment's id.
        """
        if consignment_id not in self.consignments:
            return fail(f"no consignment {consignment_id!r}")
        return ok(self._consignment_view(consignment_id))

    @tool
    def list_trucks(self, location: str = "") -> dict:
        """Trucks with carrier, capacity, bonded or not, location, status and the driver's shift end.

        Args:
            location: Only trucks at this site; empty for all.
        """
        rows = [{"truck_id": t, **x} for t, x in sorted(self.trucks.items())
                if not location or x["location"] == location]
        return ok({"trucks": rows})

    @tool
    def get_truck(self, truck_id: str) -> dict:
        """Read a truck: carrier, capacity, bonded, location, status, shift end and notes.

        Args:
            truck_id: The truck's id.
        """
        if truck_id not in self.trucks:
            return fail(f"no truck {truck_id!r}")
        return ok({"truck_id": truck_id, **self.trucks[truck_id]})

    @tool
    def list_carriers(self) -> dict:
        """The carriers the forwarder works with, and whether they hold a customs bond."""
        return ok({"carriers": [{"carrier_id": c, **x} for c, x in sorted(self.carriers.items())]})

    @tool
    def get_consignee(self, consignee_id: str) -> dict:
        """Read a consignee's record: its site, the docks there and the dock it receives goods at.

        Args:
            consignee_id: The consignee's id (a consignment's ``consignee_id``).
        """
        if consignee_id not in self.consignees:
            return fail(f"no consignee {consignee_id!r}")
        return ok({"consignee_id": consignee_id, **self.consignees[consignee_id]})

    @tool
    def get_permit(self, permit_id: str) -> dict:
        """Read a permit: consignment, crossing, validity window and status.

        Args:
            permit_id: The permit's id.
        """
        if permit_id not in self.permits:
            return fail(f"no permit {permit_id!r}")
        return ok({"permit_id": permit_id, **self.permits[permit_id]})

    @tool(cost=2)
    def check_route(self, consignment_id: str, crossing_id: str, truck_id: str = "") -> dict:
        """Plan a consignment's trip via a crossing: driving minutes of each leg, estimated times if it left now,
        and what in the crossing's rules stands against it.

        Args:
            consignment_id: The consignment.
            crossing_id: The crossing to go through.
            truck_id: The truck to time the trip for; empty for the assigned one (or any).
        """
        if consignment_id not in self.consignments:
            return fail(f"no consignment {consignment_id!r}")
        if crossing_id not in self.crossings:
            return fail(f"no crossing {crossing_id!r}")
        truck_id = truck_id or self.consignments[consignment_id].get("truck") or ""
        if truck_id and truck_id not in self.trucks:
            return fail(f"no truck {truck_id!r}")
        out: dict = {"consignment_id": consignment_id, "crossing_id": crossing_id}
        if truck_id:
            line = self._timeline(consignment_id, truck_id, crossing_id, None)
            if isinstance(line, str):
                return ok({**out, "reachable": False, "problem": line})
            out.update(line)
            moment = local_time(line["crosses"])
        else:
            moment = None
            leg1 = leg_minutes(self.state, self.consignments[consignment_id]["location"], crossing_id)
            leg2 = leg_minutes(self.state, crossing_id, self.consignments[consignment_id]["destination"])
            out.update(pickup_minutes=leg1, onward_minutes=leg2)
        # Beside the rules of the moment, the standing ones a declaration or a dispatch would meet: the tool promises
        # everything in the crossing's rules that stands against the trip (a playtester relied on that).
        c, x = self.consignments[consignment_id], self.crossings[crossing_id]
        lacking = [f"{d} is {c['documents'].get(d, 'missing')}" for d in x["required_docs"]
                   if c["documents"].get(d) != "valid"]
        standing = [f"{crossing_id} requires {', '.join(x['required_docs'])}: {'; '.join(lacking)}"] if lacking else []
        if c["commodity"] in x["bonded_for"] and not (truck_id and self.trucks[truck_id]["bonded"]):
            standing.append(f"{crossing_id} takes {c['commodity']} only on a bonded truck"
                            + (f"; {truck_id} is not bonded" if truck_id else ""))
        out["rule_problems"] = self._rule_problems(consignment_id, crossing_id, moment) + standing
        return ok(out)

    # --------------------------------------------------------------- changes

    @tool(mutates=True, cost=10)
    def file_declaration(self, consignment_id: str, crossing_id: str) -> dict:
        """Lodge a customs declaration for a consignment at a crossing; it clears when every required document
        is valid and the goods are not banned there, else it is held. A consignment has one declaration in force:
        a new one voids the one before.

        Args:
            consignment_id: The consignment.
            crossing_id: The crossing it will go through.
        """
        c = self.consignments.get(consignment_id)
        if c is None:
            return fail(f"no consignment {consignment_id!r}")
        x = self._crossing(crossing_id)
        if x is None:
            return fail(f"no crossing {crossing_id!r}")
        if c["commodity"] in x["banned"]:
            return fail(f"{c['commodity']} may not cross at {crossing_id}: {x.get('notice') or 'banned goods'}")
        if self._live(consignment_id):
            return fail(f"{consignment_id} is already dispatched under its declaration")
        missing = [d for d in x["required_docs"] if c["documents"].get(d) != "valid"]
        did = self.next_id("declaration", "DEC")
        for d in self.declarations.values():
            if d["consignment"] == consignment_id and d["status"] != "void":
                d.update(status="void", note=f"superseded by {did}")
        self.declarations[did] = {"consignment": consignment_id, "crossing": crossing_id,
                                  "status": "held" if missing else "cleared", "missing": missing,
                                  "filed_at": self.now, "note": ""}
        return ok({"declaration_id": did, "status": self.declarations[did]["status"], "missing": missing})

    @tool(mutates=True, cost=15)
    def apply_for_permit(self, consignment_id: str, crossing_id: str) -> dict:
        """Apply at a crossing's permit desk for a consignment's permit; it is issued at once, valid from the
        desk's lead time on for its validity hours.

        Args:
            consignment_id: The consignment.
            crossing_id: The crossing the permit is for.
        """
        c = self.consignments.get(consignment_id)
        if c is None:
            return fail(f"no consignment {consignment_id!r}")
        if crossing_id not in self.crossings:
            return fail(f"no crossing {crossing_id!r}")
        desk = self.permit_desks.get(crossing_id)
        if desk is None or c["commodity"] not in self.crossings[crossing_id]["permit_for"]:
            return fail(f"{crossing_id} issues no permit for {c['commodity']}: none is needed there")
        if desk["status"] != "open":
            return fail(f"the permit desk at {crossing_id} is {desk['status']}: {desk.get('note', '')}")
        if self._live(consignment_id):
            return fail(f"{consignment_id} is already dispatched")
        begin = self.clock.now + timedelta(minutes=desk["lead_minutes"])
        pid = self.next_id("permit", "PRM")
        self.permits[pid] = {"consignment": consignment_id, "crossing": crossing_id, "valid_from": format_time(begin),
                             "valid_to": format_time(begin + timedelta(hours=desk["valid_hours"])),
                             "status": "valid", "note": ""}
        return ok({"permit_id": pid, **self.permits[pid]})

    @tool(mutates=True, cost=10)
    def request_document(self, consignment_id: str, document: str) -> dict:
        """Ask the shipper to re-issue one of a consignment's documents that is not valid; possible only for the
        documents the shipper can re-issue.

        Args:
            consignment_id: The consignment.
            document: The document type, e.g. certificate_of_origin.
        """
        c = self.consignments.get(consignment_id)
        if c is None:
            return fail(f"no consignment {consignment_id!r}")
        if document not in c["documents"]:
            return fail(f"{consignment_id} has no document {document!r}")
        if c["documents"][document] == "valid":
            return fail(f"{document} of {consignment_id} is valid: there is nothing to re-issue")
        if document not in c["reissuable"]:
            return fail(f"the shipper cannot re-issue {document} for {consignment_id}")
        c["documents"][document] = "valid"
        return ok(message=f"{document} of {consignment_id} re-issued and valid")

    @tool(mutates=True, cost=5)
    def book_slot(self, slot_id: str, consignment_id: str) -> dict:
        """Book a free crossing slot for a consignment; a consignment holds one slot, so the one it held before
        is released.

        Args:
            slot_id: The slot.
            consignment_id: The consignment.
        """
        slot = self.slots.get(slot_id)
        if slot is None:
            return fail(f"no slot {slot_id!r}")
        if consignment_id not in self.consignments:
            return fail(f"no consignment {consignment_id!r}")
        status = self._slot_view(slot_id)["status"]
        if status != "free":
            return fail(f"slot {slot_id} is {status}")
        if local_time(slot["end"]) <= self.clock.now:
            return fail(f"slot {slot_id} is over")
        if self._live(consignment_id):
            return fail(f"{consignment_id} is already dispatched")
        old = self._slot_of(consignment_id)
        for x in self.reservations.values():  # the booking before, held or lost, ends here
            if x["consignment"] == consignment_id and x["status"] == "booked":
                x["status"] = "released"
        rid = self.next_id("reservation", "RSV")
        self.reservations[rid] = {"slot": slot_id, "consignment": consignment_id, "status": "booked",
                                  "booked_at": self.now, "note": ""}
        return ok({"reservation_id": rid}, message=f"{slot_id} at {slot['crossing']} ({slot['start']}-{slot['end']}) "
                  f"booked for {consignment_id}" + (f"; {old} released" if old else ""))

    @tool(mutates=True, cost=3)
    def cancel_slot(self, slot_id: str) -> dict:
        """Release a booked crossing slot.

        Args:
            slot_id: The slot.
        """
        if slot_id not in self.slots:
            return fail(f"no slot {slot_id!r}")
        held = [x for x in self.reservations.values() if x["slot"] == slot_id and x["status"] == "booked"]
        if not held or self.slots[slot_id]["status"] != "free":
            return fail(f"slot {slot_id} is {self._slot_view(slot_id)['status']}, not booked")
        held[0]["status"] = "released"
        return ok(message=f"{slot_id} released")

    @tool(mutates=True, cost=5)
    def assign_truck(self, consignment_id: str, truck_id: str) -> dict:
        """Assign an available truck at the consignment's terminal to it (replacing any truck assigned before).

        Args:
            consignment_id: The consignment.
            truck_id: The truck.
        """
        c = self.consignments.get(consignment_id)
        if c is None:
            return fail(f"no consignment {consignment_id!r}")
        truck = self.trucks.get(truck_id)
        if truck is None:
            return fail(f"no truck {truck_id!r}")
        if self._live(consignment_id):
            return fail(f"{consignment_id} is already dispatched")
        if truck["status"] != "available":
            return fail(f"truck {truck_id} is {truck['status']}")
        if truck["location"] != c["location"]:
            return fail(f"truck {truck_id} is at {truck['location']}, the consignment at {c['location']}")
        if truck["capacity_kg"] < c["weight_kg"]:
            return fail(f"truck {truck_id} carries {truck['capacity_kg']} kg, the consignment weighs {c['weight_kg']}")
        old = self._held_truck(consignment_id)
        if old:
            self.trucks[old].update(status="available", consignment=None)
        truck.update(status="assigned", consignment=consignment_id)
        c["truck"] = truck_id
        return ok(message=f"{truck_id} assigned to {consignment_id}")

    @tool(mutates=True, cost=3)
    def release_truck(self, consignment_id: str) -> dict:
        """Release the truck assigned to a consignment that has not been dispatched; the truck is available again.

        Args:
            consignment_id: The consignment.
        """
        c = self.consignments.get(consignment_id)
        if c is None:
            return fail(f"no consignment {consignment_id!r}")
        if self._live(consignment_id):
            return fail(f"{consignment_id} is already dispatched")
        tid = self._held_truck(consignment_id)
        if not tid:
            return fail(f"{consignment_id} has no truck assigned")
        self.trucks[tid].update(status="available", consignment=None)
        c["truck"] = None
        return ok(message=f"{tid} released from {consignment_id}")

    def _held_truck(self, consignment_id: str) -> str | None:
        """The truck assigned to the consignment that still holds it (a record may name a truck since reassigned)."""
        tid = self.consignments[consignment_id].get("truck")
        return tid if tid in self.trucks and self.trucks[tid].get("consignment") == consignment_id else None

    @tool(mutates=True, cost=20)
    def transload(self, consignment_id: str, terminal_id: str) -> dict:
        """Move a consignment by rail shuttle to another terminal of the same country; it is there after the
        drive plus an hour's handling.

        Args:
            consignment_id: The consignment.
            terminal_id: The terminal to move it to.
        """
        c = self.consignments.get(consignment_id)
        if c is None:
            return fail(f"no consignment {consignment_id!r}")
        site = self.sites.get(terminal_id)
        if site is None or site["kind"] != "terminal":
            return fail(f"no terminal {terminal_id!r}")
        if terminal_id == c["location"]:
            return fail(f"{consignment_id} is already at {terminal_id}")
        if site["country"] != self.sites[c["location"]]["country"]:
            return fail(f"{terminal_id} is across the border: consignments cross only by truck through a crossing")
        if self._live(consignment_id):
            return fail(f"{consignment_id} is already moving")
        minutes = leg_minutes(self.state, c["location"], terminal_id)
        if minutes is None:
            return fail(f"no line from {c['location']} to {terminal_id}")
        ready = max(self.clock.now, local_time(c.get("available_from")) or self.clock.now) + timedelta(minutes=minutes + 60)
        old = c.get("truck")
        if old and old in self.trucks and self.trucks[old].get("consignment") == consignment_id:
            self.trucks[old].update(status="available", consignment=None)
        c.update(location=terminal_id, available_from=format_time(ready), truck=None)
        return ok(message=f"{consignment_id} at {terminal_id} from {c['available_from']}")

    def _dispatch_problem(self, cid: str) -> tuple[str | None, dict]:
        """Why a dispatch of consignment ``cid`` would be refused now (None: it would go), and what it would send:
        its timeline, truck, crossing and slot."""
        c = self.consignments[cid]
        if self._live(cid):
            return f"{cid} is already dispatched", {}
        truck_id = c.get("truck")
        if not truck_id or self.trucks.get(truck_id, {}).get("consignment") != cid \
                or self.trucks[truck_id]["status"] != "assigned":
            return f"{cid} has no assigned truck", {}
        truck = self.trucks[truck_id]
        if truck["location"] != c["location"]:
            return f"truck {truck_id} is at {truck['location']}, the consignment at {c['location']}", {}
        sid = self._slot_of(cid)
        if sid is None:
            return f"{cid} has no booked crossing slot", {}
        slot = self.slots[sid]
        xid = slot["crossing"]
        if not self._cleared(cid, xid):
            return f"{cid} has no cleared declaration at {xid}", {}
        if c["commodity"] in self.crossings[xid]["bonded_for"] and not truck["bonded"]:
            return f"{c['commodity']} crosses at {xid} only on a bonded truck; {truck_id} is not bonded", {}
        line = self._timeline(cid, truck_id, xid, slot)
        if isinstance(line, str):
            return line, {}
        if local_time(line["at_crossing"]) > local_time(slot["end"]):
            return (f"the truck would reach {xid} at {line['at_crossing']}, after slot {sid} ends at "
                    f"{slot['end']}"), {}
        if "driver_problem" in line:
            return line["driver_problem"], {}
        problems = self._rule_problems(cid, xid, local_time(line["crosses"]))
        return ("; ".join(problems) if problems else None), {**line, "truck": truck_id, "crossing": xid, "slot": sid}

    @tool(mutates=True, cost=10)
    def dispatch(self, consignment_id: str) -> dict:
        """Send a consignment on its assigned truck through the crossing of its booked slot to the consignee.
        Needs a cleared declaration there, a permit valid when it crosses (where the crossing asks for one), an
        inspection left that day (for inspected goods), a bonded truck (where required), the truck at the
        crossing by the slot's end and the driver within shift.

        Args:
            consignment_id: The consignment.
        """
        if consignment_id not in self.consignments:
            return fail(f"no consignment {consignment_id!r}")
        problem, line = self._dispatch_problem(consignment_id)
        if problem:
            return fail(problem)
        mid = self.next_id("movement", "MOV")
        booking = self._booking_of(consignment_id)
        self.movements[mid] = {"consignment": consignment_id, "truck": line["truck"], "crossing": line["crossing"],
                               "slot": line["slot"], "reservation": booking, **{
                                   k: line[k] for k in ("departs", "at_crossing", "crosses", "arrives")},
                               "status": "scheduled"}
        self.reservations[booking]["status"] = "used"
        self.trucks[line["truck"]].update(status="en_route")
        return ok({"movement_id": mid, **self.movements[mid]})

    @tool(mutates=True, cost=5)
    def cancel_movement(self, movement_id: str) -> dict:
        """Call back a scheduled movement before it leaves; its truck is assigned again and its slot booking ends.

        Args:
            movement_id: The movement.
        """
        m = self.movements.get(movement_id)
        if m is None:
            return fail(f"no movement {movement_id!r}")
        if m["status"] != "scheduled" or local_time(m["departs"]) <= self.clock.now:
            return fail(f"movement {movement_id} is {m['status']}" + (
                "" if m["status"] != "scheduled" else f" and left at {m['departs']}"))
        m["status"] = "cancelled"
        self.reservations[m["reservation"]]["status"] = "cancelled"
        if m["truck"] in self.trucks:
            self.trucks[m["truck"]]["status"] = "assigned"
        return ok(message=f"{movement_id} cancelled")

    @tool(mutates=True, cost=2)
    def confirm_delivery(self, movement_id: str) -> dict:
        """Confirm that a movement reached the consignee; possible once its arrival time has come.

        Args:
            movement_id: The movement.
        """
        m = self.movements.get(movement_id)
        if m is None:
            return fail(f"no movement {movement_id!r}")
        if m["status"] != "scheduled":
            return fail(f"movement {movement_id} is {m['status']}")
        if local_time(m["arrives"]) > self.clock.now:
            return fail(f"movement {movement_id} arrives only at {m['arrives']}")
        m["status"] = "delivered"
        if m["truck"] in self.trucks:
            self.trucks[m["truck"]].update(status="available", consignment=None,
                                           location=self.consignments[m["consignment"]]["destination"])
        return ok(message=f"{movement_id} delivered")

    @tool(mutates=True, cost=2)
    def set_delivery_dock(self, consignment_id: str, dock: str) -> dict:
        """Set the dock at the consignee's site where the driver unloads the consignment (kept on the consignment's
        record; it can change until delivery, even on the way).

        Args:
            consignment_id: The consignment.
            dock: One of the docks on the consignee's record.
        """
        c = self.consignments.get(consignment_id)
        if c is None:
            return fail(f"no consignment {consignment_id!r}")
        consignee = self.consignees.get(c.get("consignee_id") or "")
        if consignee is None:
            return fail(f"{consignment_id} has no consignee record")
        if dock not in consignee["docks"]:
            return fail(f"no dock {dock!r} at {consignee['site']}; docks: {', '.join(consignee['docks'])}")
        c["delivery_dock"] = dock
        return ok(message=f"{consignment_id} unloads at {dock}")

    @tool(mutates=True, cost=2)
    def notify_consignee(self, consignment_id: str, message: str) -> dict:
        """Send the consignee a message about their consignment (kept on the consignment's record).

        Args:
            consignment_id: The consignment.
            message: What to tell the consignee.
        """
        c = self.consignments.get(consignment_id)
        if c is None:
            return fail(f"no consignment {consignment_id!r}")
        if not message.strip() or len(message) > 2000:
            return fail("the message must be 1 to 2000 characters")
        c["notices"] = c.get("notices", []) + [{"at": self.now, "message": message}]
        return ok(message=f"{c['consignee']} notified")

    # ----------------------------------------------------------- predicates

    @predicate
    def on_time(self, consignment_id: str) -> bool:
        """The consignment has a scheduled movement arriving by its deliver-by time."""
        due = local_time(self.consignments[consignment_id]["deliver_by"])
        return any(local_time(m["arrives"]) <= due for m in self._live(consignment_id))

    @predicate
    def not_late(self, consignment_id: str) -> bool:
        """No scheduled movement of the consignment arrives after its deliver-by time."""
        due = local_time(self.consignments[consignment_id]["deliver_by"])
        return all(local_time(m["arrives"]) <= due for m in self._live(consignment_id))

    @predicate
    def dock_recorded(self, consignment_id: str) -> bool:
        """The consignment has a delivery dock set."""
        return bool(self.consignments[consignment_id].get("delivery_dock"))

    @predicate
    def dock_as_on_record(self, consignment_id: str) -> bool:
        """The consignment's delivery dock is the receiving dock on its consignee's record."""
        c = self.consignments[consignment_id]
        consignee = self.consignees.get(c.get("consignee_id") or "")
        return consignee is not None and c.get("delivery_dock") == consignee["receiving_dock"]

    @predicate
    def no_movement(self, consignment_id: str) -> bool:
        """The consignment has no scheduled movement."""
        return not self._live(consignment_id)

    @predicate
    def ready_to_cross(self, consignment_id: str) -> bool:
        """The consignment is on its way (a scheduled or delivered movement), or a dispatch now would send it in
        time: a booked slot it can make at a crossing that admits it, a cleared declaration there, a permit and an
        inspection where needed, a truck at its terminal that may carry it, a driver within shift, and an arrival by
        the deliver-by time (a plan that would run late is not ready, however complete)."""
        if self._live(consignment_id):
            return True
        problem, line = self._dispatch_problem(consignment_id)
        return problem is None and local_time(line["arrives"]) <= local_time(
            self.consignments[consignment_id]["deliver_by"])

    def _held_slots(self, cid: str) -> list[dict]:
        """The slots the consignment holds (its booking, while it holds) or used."""
        booking = self._booking_of(cid)
        return [self.slots[x["slot"]] for r, x in sorted(self.reservations.items()) if x["consignment"] == cid
                and (x["status"] == "used" or r == booking)]

    @predicate
    def cleared_to_cross(self, consignment_id: str) -> bool:
        """The consignment holds a slot (or used it) starting by its deliver-by time at a crossing that allows its
        goods, with a cleared declaration there, and a permit valid in the slot (where one is needed). (What tasks
        stored before ``ready_to_cross`` check.)"""
        c = self.consignments[consignment_id]
        due = local_time(c["deliver_by"])
        for s in self._held_slots(consignment_id):
            x, start = self.crossings[s["crossing"]], local_time(s["start"])
            if start > due or c["commodity"] in x["banned"] or not self._cleared(consignment_id, s["crossing"]):
                continue
            if x["status"] != "open" and start < (local_time(x.get("outage_until")) or local_time(s["end"])):
                continue
            if c["commodity"] in x["permit_for"] and not any(self._permit_ok(consignment_id, s["crossing"], t)
                                                             for t in (start, local_time(s["end"]))):
                continue
            return True
        return False

    @predicate
    def via(self, consignment_id: str, crossing_id: str) -> bool:
        """Every crossing slot the consignment holds or used is at ``crossing_id`` (and it has one)."""
        return {s["crossing"] for s in self._held_slots(consignment_id)} == {crossing_id}

    @predicate
    def carried_by(self, consignment_id: str, carrier_id: str) -> bool:
        """The consignment's truck (assigned or on its way with it) is one of ``carrier_id``'s."""
        tid = self.consignments[consignment_id].get("truck")
        return bool(tid) and self.trucks[tid]["carrier"] == carrier_id

    @predicate
    def truck_assigned(self, consignment_id: str) -> bool:
        """The consignment has a truck assigned (or on its way with it)."""
        tid = self.consignments[consignment_id].get("truck")
        return bool(tid) and self.trucks[tid].get("consignment") == consignment_id \
            and self.trucks[tid]["status"] in ("assigned", "en_route")

    @predicate
    def booked_by_call(self, consignment_id: str, ctx) -> bool:
        """The call being made booked the consignment the slot it names."""
        booked = ctx.arguments.get("slot_id") if ctx is not None else None
        return booked is not None and self._slot_of(consignment_id) == booked

    # ----------------------------------------------------------- operations

    @operation
    def congest(self, minutes: int, cause: str, ctx) -> None:
        """Traffic backs up at the crossing of the slot the call being made booked: it queues ``minutes`` longer
        from now on, and its notice says why and since when (a booking, a declaration and a dispatch still go
        through; only the times say the trip now runs late)."""
        x = self.crossings[self.slots[ctx.arguments["slot_id"]]["crossing"]]
        x["queue_minutes"] += minutes
        said = f"{cause}: queues of {x['queue_minutes']} min since {ctx.now}"
        x["notice"] = f"{x['notice']}; {said}" if x.get("notice") else said

    @operation
    def take_slots(self, crossing_id: str, until: str, by: str, note: str, status: str = "taken") -> None:
        """Every free or booked slot at ``crossing_id`` starting before ``until`` goes to ``by`` (a booking on it is
        lost: its record says so, so the agent is not left holding a booking it cannot cancel)."""
        for sid, s in self.slots.items():
            view = self._slot_view(sid)
            if s["crossing"] == crossing_id and view["status"] in ("free", "booked") and s["start"] < until:
                s.update(status=status, consignment=by or view["consignment"], note=note)
                for x in self.reservations.values():
                    if x["slot"] == sid and x["status"] == "booked":
                        x.update(status="cancelled", note=note)

    @operation
    def release_booking(self, consignment_id: str, note: str) -> None:
        """The consignment's slot booking is released (with ``note``, which its record shows)."""
        for x in self.reservations.values():
            if x["consignment"] == consignment_id and x["status"] == "booked":
                x.update(status="released", note=note)

    @operation
    def pull_trucks(self, location: str, note: str, keep: list | None = None) -> None:
        """Every truck at ``location`` (but ``keep``) is pulled to another corridor; consignments lose them."""
        for t, truck in self.trucks.items():
            if truck["location"] == location and t not in (keep or []) and truck["status"] in ("available",
                                                                                                 "assigned"):
                cid = truck.get("consignment")
                if cid and self.consignments.get(cid, {}).get("truck") == t:
                    self.consignments[cid]["truck"] = None
                truck.update(status="reassigned", consignment=None, note=note)

    @operation
    def hold_declarations(self, consignment_id: str, document: str, note: str) -> None:
        """The consignment's ``document`` is rejected and its cleared declarations are held for it."""
        self.consignments[consignment_id]["documents"][document] = "rejected"
        for d in self.declarations.values():
            if d["consignment"] == consignment_id and d["status"] == "cleared":
                d.update(status="held", missing=[document], note=note)

    @operation
    def void_declarations(self, consignment_id: str, crossing_id: str, note: str) -> None:
        """The consignment's declarations at ``crossing_id`` are lost (void) and must be lodged again."""
        for d in self.declarations.values():
            if d["consignment"] == consignment_id and d["crossing"] == crossing_id and d["status"] != "void":
                d.update(status="void", note=note)
