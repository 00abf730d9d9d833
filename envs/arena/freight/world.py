"""Freight: a cross-border freight forwarder's operations system.

State containers (JSON-like dicts keyed by id):

- ``sites``: ``{name, kind: terminal|depot|crossing, country}``: terminals and inland depots on
  either side of the border, and the border crossings between them.
- ``roads``: ``{a, b, minutes, open}``: the road/rail graph with driving minutes. A leg to or from a
  crossing never runs through another crossing.
- ``crossings``: ``{status: open|outage, outage_until, notice, opens, closes, queue_minutes,
  banned, permit_for, bonded_for, required_docs, inspected, inspection: {limit, used: {date: n}}}``:
  customs rules per commodity (banned goods, goods that need a permit for this crossing, goods
  that only bonded trucks may carry), the documents every declaration needs and the daily quota of
  inspections (counted by the date a consignment crosses, afresh at 00:00).
- ``slots``: ``{crossing, start, end, status: free|booked|taken|cancelled|used, consignment, note}``:
  crossing slots; a truck must reach the crossing by ``end`` and crosses from ``start`` on.
- ``consignments``: ``{shipper, consignee, commodity, weight_kg, declared_value, origin, location,
  available_from, destination, deliver_by, documents: {type: valid|rejected}, reissuable, priority,
  truck, note}``: ``location`` is the terminal it waits at, from ``available_from`` on.
- ``declarations``: ``{consignment, crossing, status: cleared|held|void, missing, filed_at, note}``.
- ``permits``: ``{consignment, crossing, valid_from, valid_to, status: valid|revoked, note}``.
- ``carriers``: ``{name, bonded}``; ``trucks``: ``{carrier, capacity_kg, bonded, location,
  shift_end, status: available|assigned|reassigned|en_route, consignment, note}``.
- ``permit_desks``: ``{crossing: {status: open|suspended, lead_minutes, valid_hours, note}}``.
- ``movements``: ``{consignment, truck, crossing, slot, departs, at_crossing, crosses, arrives,
  status: scheduled|cancelled}``.
- ``counters``: the last declaration, permit and movement numbers.

Times are ISO strings at minute precision.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.clock import format_time, local_time
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

    # ----------------------------------------------------------------- helpers

    def _crossing(self, crossing_id: str) -> dict | None:
        return self.crossings.get(crossing_id)

    def _slot_of(self, cid: str) -> str | None:
        held = [s for s, x in sorted(self.slots.items()) if x.get("consignment") == cid and x["status"] == "booked"]
        return held[0] if held else None

    def _live(self, cid: str) -> list[dict]:
        return [m for m in self.movements.values() if m["consignment"] == cid and m["status"] in LIVE]

    def _inspections_left(self, crossing_id: str, day: str) -> int:
        quota = self.crossings[crossing_id]["inspection"]
        return max(0, quota["limit"] - quota["used"].get(day, 0))

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
        return {"consignment_id": cid, **c, "slot": slot,
                "slot_crossing": self.slots[slot]["crossing"] if slot else None, "crossing_problems": problems,
                "declarations": decl, "permits": perm, "movements": moves}

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
        bonded truck, required documents, and inspections left today.

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
        rows = [{"slot_id": s, **x} for s, x in sorted(self.slots.items(), key=lambda i: (i[1]["start"], i[0]))
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
        out["rule_problems"] = self._rule_problems(consignment_id, crossing_id, moment)
        return ok(out)

    # --------------------------------------------------------------- changes

    @tool(mutates=True, cost=10)
    def file_declaration(self, consignment_id: str, crossing_id: str) -> dict:
        """Lodge a customs declaration for a consignment at a crossing; it clears when every required document
        is valid and the goods are not banned there, else it is held.

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
        missing = [d for d in x["required_docs"] if c["documents"].get(d) != "valid"]
        did = self.next_id("declaration", "DEC")
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
        begin = self.clock.now + timedelta(minutes=desk["lead_minutes"])
        pid = self.next_id("permit", "PRM")
        self.permits[pid] = {"consignment": consignment_id, "crossing": crossing_id, "valid_from": format_time(begin),
                             "valid_to": format_time(begin + timedelta(hours=desk["valid_hours"])),
                             "status": "valid", "note": ""}
        return ok({"permit_id": pid, **self.permits[pid]})

    @tool(mutates=True, cost=10)
    def request_document(self, consignment_id: str, document: str) -> dict:
        """Ask the shipper to re-issue one of a consignment's documents; possible only for the documents the
        shipper can re-issue.

        Args:
            consignment_id: The consignment.
            document: The document type, e.g. certificate_of_origin.
        """
        c = self.consignments.get(consignment_id)
        if c is None:
            return fail(f"no consignment {consignment_id!r}")
        if document not in c["documents"]:
            return fail(f"{consignment_id} has no document {document!r}")
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
        if slot["status"] != "free":
            return fail(f"slot {slot_id} is {slot['status']}")
        if local_time(slot["end"]) <= self.clock.now:
            return fail(f"slot {slot_id} is over")
        old = self._slot_of(consignment_id)
        if old:
            self.slots[old].update(status="free", consignment=None)
        slot.update(status="booked", consignment=consignment_id)
        return ok(message=f"{slot_id} at {slot['crossing']} ({slot['start']}-{slot['end']}) booked for "
                          f"{consignment_id}" + (f"; {old} released" if old else ""))

    @tool(mutates=True, cost=3)
    def cancel_slot(self, slot_id: str) -> dict:
        """Release a booked crossing slot.

        Args:
            slot_id: The slot.
        """
        slot = self.slots.get(slot_id)
        if slot is None:
            return fail(f"no slot {slot_id!r}")
        if slot["status"] != "booked":
            return fail(f"slot {slot_id} is {slot['status']}, not booked")
        slot.update(status="free", consignment=None)
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
        if truck["status"] != "available":
            return fail(f"truck {truck_id} is {truck['status']}")
        if truck["location"] != c["location"]:
            return fail(f"truck {truck_id} is at {truck['location']}, the consignment at {c['location']}")
        if truck["capacity_kg"] < c["weight_kg"]:
            return fail(f"truck {truck_id} carries {truck['capacity_kg']} kg, the consignment weighs {c['weight_kg']}")
        old = c.get("truck")
        if old and old in self.trucks and self.trucks[old].get("consignment") == consignment_id:
            self.trucks[old].update(status="available", consignment=None)
        truck.update(status="assigned", consignment=consignment_id)
        c["truck"] = truck_id
        return ok(message=f"{truck_id} assigned to {consignment_id}")

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

    @tool(mutates=True, cost=10)
    def dispatch(self, consignment_id: str) -> dict:
        """Send a consignment on its assigned truck through the crossing of its booked slot to the consignee.
        Needs a cleared declaration there, a permit valid when it crosses (where the crossing asks for one), an
        inspection left that day (for inspected goods), a bonded truck (where required), the truck at the
        crossing by the slot's end and the driver within shift.

        Args:
            consignment_id: The consignment.
        """
        c = self.consignments.get(consignment_id)
        if c is None:
            return fail(f"no consignment {consignment_id!r}")
        if self._live(consignment_id):
            return fail(f"{consignment_id} is already dispatched")
        truck_id = c.get("truck")
        if not truck_id or self.trucks.get(truck_id, {}).get("consignment") != consignment_id \
                or self.trucks[truck_id]["status"] != "assigned":
            return fail(f"{consignment_id} has no assigned truck")
        truck = self.trucks[truck_id]
        if truck["location"] != c["location"]:
            return fail(f"truck {truck_id} is at {truck['location']}, the consignment at {c['location']}")
        sid = self._slot_of(consignment_id)
        if sid is None:
            return fail(f"{consignment_id} has no booked crossing slot")
        slot = self.slots[sid]
        xid = slot["crossing"]
        x = self.crossings[xid]
        if not self._cleared(consignment_id, xid):
            return fail(f"{consignment_id} has no cleared declaration at {xid}")
        if c["commodity"] in x["bonded_for"] and not truck["bonded"]:
            return fail(f"{c['commodity']} crosses at {xid} only on a bonded truck; {truck_id} is not bonded")
        line = self._timeline(consignment_id, truck_id, xid, slot)
        if isinstance(line, str):
            return fail(line)
        if local_time(line["at_crossing"]) > local_time(slot["end"]):
            return fail(f"the truck would reach {xid} at {line['at_crossing']}, after slot {sid} ends at "
                        f"{slot['end']}")
        if "driver_problem" in line:
            return fail(line["driver_problem"])
        problems = self._rule_problems(consignment_id, xid, local_time(line["crosses"]))
        if problems:
            return fail("; ".join(problems))
        mid = self.next_id("movement", "MOV")
        if c["commodity"] in x["inspected"]:
            day = line["crosses"][:10]
            x["inspection"]["used"][day] = x["inspection"]["used"].get(day, 0) + 1
        self.movements[mid] = {"consignment": consignment_id, "truck": truck_id, "crossing": xid, "slot": sid,
                               "departs": line["departs"], "at_crossing": line["at_crossing"],
                               "crosses": line["crosses"], "arrives": line["arrives"], "status": "scheduled"}
        slot["status"] = "used"
        truck.update(status="en_route")
        return ok({"movement_id": mid, **self.movements[mid]})

    @tool(mutates=True, cost=5)
    def cancel_movement(self, movement_id: str) -> dict:
        """Call back a scheduled movement before it leaves; its truck is assigned again and the slot is lost.

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
        self.slots[m["slot"]]["status"] = "cancelled"
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
    def no_movement(self, consignment_id: str) -> bool:
        """The consignment has no scheduled movement."""
        return not self._live(consignment_id)

    @predicate
    def cleared_to_cross(self, consignment_id: str) -> bool:
        """The consignment holds a slot (or used it) starting by its deliver-by time at a crossing that allows its
        goods, with a cleared declaration there, and a permit valid in the slot (where one is needed)."""
        c = self.consignments[consignment_id]
        due = local_time(c["deliver_by"])
        slots = [s for s in self.slots.values() if s.get("consignment") == consignment_id
                 and s["status"] in ("booked", "used") and local_time(s["start"]) <= due]
        for s in slots:
            x = self.crossings[s["crossing"]]
            if c["commodity"] in x["banned"] or not self._cleared(consignment_id, s["crossing"]):
                continue
            if x["status"] != "open" and local_time(s["start"]) < (local_time(x.get("outage_until")) or local_time(s["end"])):
                continue
            if c["commodity"] in x["permit_for"] and not (self._permit_ok(consignment_id, s["crossing"],
                                                                          local_time(s["start"]))
                                                          or self._permit_ok(consignment_id, s["crossing"],
                                                                             local_time(s["end"]))):
                continue
            return True
        return False

    @predicate
    def via(self, consignment_id: str, crossing_id: str) -> bool:
        """Every crossing slot the consignment holds or used is at ``crossing_id`` (and it has one)."""
        held = {s["crossing"] for s in self.slots.values()
                if s.get("consignment") == consignment_id and s["status"] in ("booked", "used")}
        return held == {crossing_id}

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

    # ----------------------------------------------------------- operations

    @operation
    def take_slots(self, crossing_id: str, until: str, by: str, note: str, status: str = "taken") -> None:
        """Every free or booked slot at ``crossing_id`` starting before ``until`` goes to ``by``."""
        for s in self.slots.values():
            if s["crossing"] == crossing_id and s["status"] in ("free", "booked") and s["start"] < until:
                s.update(status=status, consignment=by or s.get("consignment"), note=note)

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
