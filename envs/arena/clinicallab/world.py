"""ClinicalLab: a specimen logistics and laboratory intake coordinator's system.

State containers (JSON-like dicts keyed by id):

- ``sites``: ``{name, kind: ward|clinic|hub|lab, access: open|restricted, notice}``: where specimens are
  collected, where couriers meet and where labs receive. A restricted site takes no pickup, handoff or delivery.
  A ward or clinic also names its on-call doctor: ``on_call``, a clinician id.
- ``clinicians``: ``{name, ward, bleep}``: the doctors of the wards and clinics, and the bleep each carries.
- ``roads``: ``{a, b, minutes, open, note}`` between sites; couriers drive the fastest open route.
- ``labs``: keyed by the lab's site id: ``{status: open|outage, notice, tests, intake: {open, close} (HH:MM,
  daily), capacity: {limit, used: {date: count}}}``. ``used`` counts accessions registered outside this system;
  live accessions here count on top of it.
- ``analysers``: ``{lab, model, tests, status: running|fault, note}``: a lab runs a test only while an analyser
  there that lists it is running.
- ``tests``: ``{name, specimen, storage}``: the test catalogue.
- ``orders``: ``{patient, ward, test, specimen, priority: STAT|routine, status: open|recollect_requested,
  note}``.
- ``specimens``: ``{order, patient, type, storage: ambient|refrigerated|frozen, collected_at, stable_minutes,
  site, note}``: a specimen must be accessioned before ``collected_at + stable_minutes``.
- ``couriers``: ``{name, vehicle, storage, location, available_from, shift_end, status:
  available|busy|reassigned|off_shift, note}``; ``location`` is where it is, or where it is heading while
  ``available_from`` is ahead.
- ``accessions``: ``{specimen, lab, test, date, status: pending|cancelled|bumped, created_at, result_bleep,
  note}``: a place in a lab's intake on a date, and the bleep the lab phones the result to.
- ``runs``: ``{specimen, accession, lab, pickup, hub, legs: [{courier, ready_from, origin, to, departs, arrives,
  path}], handoff_at, arrives, accession_at, status: booked|cancelled|halted, booked_at, note}``: the specimen's
  custody from its site through one courier (or two, handed over at a hub) to the lab.
- ``counters``: the last accession and run numbers.

Times are ISO strings at minute precision (so they compare as strings).
"""

from __future__ import annotations

from datetime import timedelta

from sttgym.clock import format_time, local_time, shift
from sttgym.geo import shortest_route
from sttgym.tools import fail, ok, tool
from sttgym.world import World, operation, predicate

__all__ = ["ClinicalLabWorld", "PICKUP_MINUTES", "HANDOFF_MINUTES", "HANDOFF_WAIT", "ACCESSIONED_IN_TIME", "UNWIND",
           "NOTHING_SPOILED", "NO_COURIER", "RECOLLECT", "RESULT_CONTACT"]

PICKUP_MINUTES = 5  # signing the specimen out of the ward's fridge or rack
HANDOFF_MINUTES = 5  # the custody transfer at a hub
HANDOFF_WAIT = 20  # the longest one courier waits at a hub for the other
LIVE_ACCESSION = "pending"
LIVE_RUN = "booked"
# The rules the checklists enforce, as the world description tells every agent (the checks quote them).
ACCESSIONED_IN_TIME = ("A specimen is accessioned in time only when a booked run gets it to a lab that runs its test, "
                       "within the lab's intake window and before the specimen's stability limit.")
UNWIND = "Cancel a run that is halted or no longer on track"
NOTHING_SPOILED = ("never leave a booked run that would deliver a specimen spoiled, after intake closes or to a lab "
                   "that cannot test it, nor a pending accession at a lab that can no longer take it")
NO_COURIER = "When a specimen cannot be accessioned in time, send no courier for it"
RECOLLECT = "ask the ward to recollect it (request_recollection) and tell them why"
RESULT_CONTACT = ("A lab phones a specimen's result to the bleep recorded on its accession (set_result_contact); a "
                  "ward's or clinic's site record (get_site) names its on-call doctor, and the doctor's clinician "
                  "record (get_clinician) has their bleep.")


class ClinicalLabWorld(World):
    """Tools of a clinical specimen logistics and lab intake system; see the module docstring."""

    domain = "ClinicalLab"
    description = ("Clinical specimen logistics: wards and clinics collect specimens with stability limits, "
                   "couriers with storage capabilities carry them over a road graph (handing over at hubs), and "
                   "labs accession them within intake windows, daily capacity and analyser status. "
                   f"{ACCESSIONED_IN_TIME} {UNWIND}; {NOTHING_SPOILED}. {NO_COURIER}: {RECOLLECT}. "
                   f"{RESULT_CONTACT}")
    # A cancelled or bumped accession holds no place in a lab's intake; a cancelled or halted run carries nothing.
    inert = {"accessions": {"status": ["cancelled", "bumped"]}, "runs": {"status": ["cancelled", "halted"]}}

    # ----------------------------------------------------------------- helpers

    def _stable_until(self, sid: str) -> str:
        s = self.specimens[sid]
        return shift(s["collected_at"], s["stable_minutes"])

    def _window(self, lab: str, date: str) -> tuple[str, str]:
        intake = self.labs[lab]["intake"]
        return f"{date}T{intake['open']}", f"{date}T{intake['close']}"

    def _route(self, a: str, b: str) -> tuple[int, list[str]] | None:
        if a == b:
            return 0, [a]
        return shortest_route(self.roads, a, b)

    def _runs_test(self, lab: str, test: str) -> bool:
        return test in self.labs[lab]["tests"] and any(
            x["lab"] == lab and test in x["tests"] and x["status"] == "running" for x in self.analysers.values())

    def _lab_problem(self, lab: str, test: str) -> str | None:
        info = self.labs.get(lab)
        if info is None:
            return f"no lab {lab!r}"
        if info["status"] != "open":
            return f"lab {lab} is {info['status']}: {info.get('notice') or 'not receiving'}"
        if test not in info["tests"]:
            return f"lab {lab} does not run test {test}"
        if not self._runs_test(lab, test):
            faults = [a for a, x in sorted(self.analysers.items()) if x["lab"] == lab and test in x["tests"]]
            return f"no running analyser for {test} at lab {lab} ({', '.join(faults) or 'none'}: fault)"
        if self.sites[lab]["access"] != "open":
            return f"site {lab} is {self.sites[lab]['access']}: {self.sites[lab].get('notice') or 'no deliveries'}"
        return None

    def _live_accessions(self, lab: str, date: str) -> list[str]:
        return sorted((x["created_at"], a) for a, x in self.accessions.items()
                      if x["lab"] == lab and x["date"] == date and x["status"] == LIVE_ACCESSION)

    def _load(self, lab: str, date: str) -> int:
        return self.labs[lab]["capacity"]["used"].get(date, 0) + len(self._live_accessions(lab, date))

    def _within_capacity(self, aid: str) -> bool:
        acc = self.accessions[aid]
        order = [a for _, a in self._live_accessions(acc["lab"], acc["date"])]
        rank = order.index(aid) + 1 if aid in order else len(order) + 1
        return self.labs[acc["lab"]]["capacity"]["used"].get(acc["date"], 0) + rank <= \
            self.labs[acc["lab"]]["capacity"]["limit"]

    def _legs(self, sid: str, couriers: list[tuple], hub: str, lab: str) -> tuple[list, str, str | None]:
        """The legs of a run from the specimen's site (through ``hub`` when two couriers) to ``lab``; each courier
        ``(id, ready_from, start)`` free at ``start`` from ``ready_from``. Returns ``(legs, handoff_at, problem)``."""
        site = self.specimens[sid]["site"]
        legs, handoff = [], ""
        first, ready, start = couriers[0]
        to_site = self._route(start, site)
        stop = hub or lab
        onward = self._route(site, stop)
        if to_site is None or onward is None:
            return [], "", f"courier {first} has no open route {start} -> {site} -> {stop}"
        pickup = local_time(ready) + timedelta(minutes=to_site[0])
        departs = pickup + timedelta(minutes=PICKUP_MINUTES)
        arrives = departs + timedelta(minutes=onward[0])
        legs.append({"courier": first, "ready_from": ready, "start": start, "origin": site, "to": stop,
                     "departs": format_time(departs), "arrives": format_time(arrives), "path": onward[1]})
        if hub:
            second, ready2, start2 = couriers[1]
            to_hub = self._route(start2, hub)
            last = self._route(hub, lab)
            if to_hub is None or last is None:
                return [], "", f"courier {second} has no open route {start2} -> {hub} -> {lab}"
            there = local_time(ready2) + timedelta(minutes=to_hub[0])
            meet = max(arrives, there)
            if meet - min(arrives, there) > timedelta(minutes=HANDOFF_WAIT):
                return legs, "", (f"handoff missed at {hub}: {first} there {format_time(arrives)}, {second} there "
                                  f"{format_time(there)} (more than {HANDOFF_WAIT} minutes apart)")
            handoff = format_time(meet)
            go = meet + timedelta(minutes=HANDOFF_MINUTES)
            legs.append({"courier": second, "ready_from": ready2, "start": start2, "origin": hub, "to": lab,
                         "departs": format_time(go), "arrives": format_time(go + timedelta(minutes=last[0])),
                         "path": last[1]})
        return legs, handoff, None

    def _run_problem(self, sid: str, aid: str, legs: list, hub: str) -> str | None:
        """Why a run with ``legs`` cannot get specimen ``sid`` accessioned under ``aid`` (None: it can)."""
        spec, acc = self.specimens[sid], self.accessions[aid]
        if acc["status"] != LIVE_ACCESSION:
            return f"accession {aid} is {acc['status']}{': ' + acc['note'] if acc.get('note') else ''}"
        problem = self._lab_problem(acc["lab"], acc["test"])
        if problem:
            return problem
        if not self._within_capacity(aid):
            return f"lab {acc['lab']} is over its daily capacity for {acc['date']}"
        for place in [spec["site"]] + ([hub] if hub else []):
            if self.sites[place]["access"] != "open":
                return f"site {place} is {self.sites[place]['access']}: {self.sites[place].get('notice') or ''}"
        for leg in legs:
            c = self.couriers[leg["courier"]]
            if spec["storage"] not in c["storage"]:
                return f"courier {leg['courier']} cannot keep a specimen {spec['storage']}"
            if c["status"] in ("reassigned", "off_shift"):
                return f"courier {leg['courier']} is {c['status']}: {c.get('note') or 'not in service'}"
            if leg["arrives"] > c["shift_end"]:
                return f"courier {leg['courier']} would arrive {leg['arrives']}, past its shift end {c['shift_end']}"
        arrives = legs[-1]["arrives"]
        opens, closes = self._window(acc["lab"], acc["date"])
        if arrives[:10] > acc["date"]:
            return f"arrives {arrives}, after intake day {acc['date']}"
        received = max(arrives, opens)
        if received > closes:
            return f"arrives {arrives}, after lab {acc['lab']} intake closes at {closes}"
        if received > self._stable_until(sid):
            return (f"accessioned {received} at the earliest, past the specimen's stability limit "
                    f"{self._stable_until(sid)}")
        return None

    def _run_valid(self, rid: str) -> bool:
        run = self.runs[rid]
        return run["status"] == LIVE_RUN and self._run_problem(run["specimen"], run["accession"], run["legs"],
                                                               run["hub"]) is None

    def _recompute(self, rid: str, note: str) -> None:
        """A booked run's legs recomputed from its couriers' ``ready_from`` over the roads as they are now."""
        run = self.runs[rid]
        couriers = [(leg["courier"], leg["ready_from"], leg["start"]) for leg in run["legs"]]
        hub = run["hub"]
        legs, handoff, problem = self._legs(run["specimen"], couriers, hub, run["lab"])
        if problem is None:
            opens = self._window(run["lab"], self.accessions[run["accession"]]["date"])[0]
            # A courier busy until its old leg's arrival is now busy until the new one, so cancelling the run
            # still frees it (a playtest found one left busy after a detour).
            for old, new in zip(run["legs"], legs):
                c = self.couriers[old["courier"]]
                if c["status"] == "busy" and c["available_from"] == old["arrives"]:
                    c["available_from"] = new["arrives"]
            run.update(legs=legs, handoff_at=handoff, arrives=legs[-1]["arrives"], note=note,
                       accession_at=max(legs[-1]["arrives"], opens))
        else:
            run.update(status="halted", note=f"{note}: {problem}")

    def _specimen_view(self, sid: str) -> dict:
        s = self.specimens[sid]
        until = self._stable_until(sid)
        left = int((local_time(until) - self.clock.now).total_seconds() // 60)
        return {"specimen_id": sid, **s, "stable_until": until, "minutes_left": left,
                "status": "expired" if left < 0 else "stable"}

    # ------------------------------------------------------------------- reads

    @tool
    def list_sites(self, kind: str = "") -> dict:
        """List the wards, clinics, courier hubs and labs with their access status.

        Args:
            kind: ward, clinic, hub or lab to filter by; empty for every site.
        """
        rows = [{"site_id": s, **x} for s, x in sorted(self.sites.items()) if not kind or x["kind"] == kind]
        return ok({"sites": rows})

    @tool
    def get_site(self, site_id: str) -> dict:
        """Read a site: its kind, access status and notice; a ward or clinic also names its on-call doctor (a
        clinician id).

        Args:
            site_id: The site's id.
        """
        if site_id not in self.sites:
            return fail(f"no site {site_id!r}")
        return ok({"site_id": site_id, **self.sites[site_id]})

    @tool
    def get_clinician(self, clinician_id: str) -> dict:
        """Read a clinician: name, ward or clinic, and the bleep they carry.

        Args:
            clinician_id: The clinician's id.
        """
        if clinician_id not in self.clinicians:
            return fail(f"no clinician {clinician_id!r}")
        return ok({"clinician_id": clinician_id, **self.clinicians[clinician_id]})

    @tool
    def list_labs(self, test: str = "") -> dict:
        """List the labs with status, tests offered and daily intake hours, optionally only those offering a test.

        Args:
            test: A test code to filter by; empty for every lab.
        """
        rows = [{"lab_id": lab, "name": self.sites[lab]["name"], "status": x["status"], "tests": x["tests"],
                 "intake": x["intake"]} for lab, x in sorted(self.labs.items()) if not test or test in x["tests"]]
        return ok({"labs": rows})

    @tool
    def get_lab(self, lab_id: str) -> dict:
        """Read a lab: status and notices, intake window, capacity left today and tomorrow, analysers.

        Args:
            lab_id: The lab's site id.
        """
        info = self.labs.get(lab_id)
        if info is None:
            return fail(f"no lab {lab_id!r}")
        today = self.now[:10]
        tomorrow = shift(self.now, days=1)[:10]
        left = {d: max(0, info["capacity"]["limit"] - self._load(lab_id, d)) for d in (today, tomorrow)}
        analysers = [{"analyser_id": a, **x} for a, x in sorted(self.analysers.items()) if x["lab"] == lab_id]
        return ok({"lab_id": lab_id, "name": self.sites[lab_id]["name"], "access": self.sites[lab_id]["access"],
                   **info, "today": today, "tomorrow": tomorrow, "capacity_left": left, "analysers": analysers})

    @tool
    def list_orders(self, ward_id: str = "") -> dict:
        """Open test orders with patient, test, specimen, priority and requesting ward.

        Args:
            ward_id: Only orders of this ward or clinic; empty for all.
        """
        rows = [{"order_id": o, **x} for o, x in sorted(self.orders.items()) if not ward_id or x["ward"] == ward_id]
        return ok({"orders": rows})

    @tool
    def get_order(self, order_id: str) -> dict:
        """Read a test order with its specimen, accessions and courier runs.

        Args:
            order_id: The order's id.
        """
        order = self.orders.get(order_id)
        if order is None:
            return fail(f"no order {order_id!r}")
        sid = order["specimen"]
        acc = [{"accession_id": a, **x} for a, x in sorted(self.accessions.items()) if x["specimen"] == sid]
        runs = [{"run_id": r, **x} for r, x in sorted(self.runs.items()) if x["specimen"] == sid]
        return ok({"order_id": order_id, **order, "accessions": acc, "runs": runs})

    @tool
    def get_specimen(self, specimen_id: str) -> dict:
        """Read a specimen: where it is, storage condition, collection time and stability limit.

        Args:
            specimen_id: The specimen's id.
        """
        if specimen_id not in self.specimens:
            return fail(f"no specimen {specimen_id!r}")
        return ok(self._specimen_view(specimen_id))

    @tool
    def list_couriers(self, location: str = "") -> dict:
        """Couriers with vehicle, storage they can keep, location, when free, status and shift end.

        Args:
            location: Only couriers at (or heading to) this site; empty for all.
        """
        rows = [{"courier_id": c, **x} for c, x in sorted(self.couriers.items())
                if not location or x["location"] == location]
        return ok({"couriers": rows})

    @tool
    def get_courier(self, courier_id: str) -> dict:
        """Read a courier's status, location, storage, shift end and booked runs.

        Args:
            courier_id: The courier's id.
        """
        c = self.couriers.get(courier_id)
        if c is None:
            return fail(f"no courier {courier_id!r}")
        runs = [r for r, x in sorted(self.runs.items()) if x["status"] == LIVE_RUN
                and any(leg["courier"] == courier_id for leg in x["legs"])]
        return ok({"courier_id": courier_id, **c, "runs": runs})

    @tool(cost=2)
    def get_travel_time(self, origin_id: str, destination_id: str) -> dict:
        """The fastest open road route between two sites, its driving minutes and any closed roads.

        Args:
            origin_id: The site to leave from.
            destination_id: The site to arrive at.
        """
        for site in (origin_id, destination_id):
            if site not in self.sites:
                return fail(f"no site {site!r}")
        route = self._route(origin_id, destination_id)
        closed = sorted(f"{r} ({x.get('note') or 'closed'})" for r, x in self.roads.items() if not x["open"])
        if route is None:
            return ok({"reachable": False, "minutes": None, "path": [], "closed_roads": closed})
        return ok({"reachable": True, "minutes": route[0], "path": route[1], "closed_roads": closed})

    @tool
    def get_run(self, run_id: str) -> dict:
        """Read a courier run: legs, handoff, arrival, the time the specimen can be accessioned, status and notes.

        Args:
            run_id: The run's id.
        """
        run = self.runs.get(run_id)
        if run is None:
            return fail(f"no run {run_id!r}")
        problem = None if run["status"] != LIVE_RUN else self._run_problem(run["specimen"], run["accession"],
                                                                           run["legs"], run["hub"])
        return ok({"run_id": run_id, **run, "on_track": run["status"] == LIVE_RUN and problem is None,
                   "problem": problem})

    @tool
    def get_custody(self, specimen_id: str) -> dict:
        """The specimen's chain of custody: who holds it from its site to the lab, on its booked run.

        Args:
            specimen_id: The specimen's id.
        """
        if specimen_id not in self.specimens:
            return fail(f"no specimen {specimen_id!r}")
        chain = [{"holder": self.specimens[specimen_id]["site"], "since": self.specimens[specimen_id]["collected_at"]}]
        for r, run in sorted(self.runs.items()):
            if run["specimen"] == specimen_id and run["status"] == LIVE_RUN:
                chain += [{"holder": leg["courier"], "since": leg["departs"], "run": r} for leg in run["legs"]]
                chain.append({"holder": run["lab"], "since": run["arrives"], "run": r})
        return ok({"specimen_id": specimen_id, "chain": chain})

    # --------------------------------------------------------------- changes

    @tool(mutates=True, cost=3)
    def accession_specimen(self, specimen_id: str, lab_id: str, intake_date: str = "") -> dict:
        """Register a specimen in a lab's intake for a date (a place in its daily capacity) before it is sent.

        Args:
            specimen_id: The specimen.
            lab_id: The lab that will run the order's test.
            intake_date: The intake day, YYYY-MM-DD (today or tomorrow); empty for today.
        """
        spec = self.specimens.get(specimen_id)
        if spec is None:
            return fail(f"no specimen {specimen_id!r}")
        test = self.orders[spec["order"]]["test"]
        problem = self._lab_problem(lab_id, test)
        if problem:
            return fail(problem)
        today, tomorrow = self.now[:10], shift(self.now, days=1)[:10]
        date = intake_date or today
        if date not in (today, tomorrow):
            return fail(f"intake_date must be {today} or {tomorrow}, not {intake_date!r}")
        if self.orders[spec["order"]]["status"] != "open":
            return fail(f"order {spec['order']} is {self.orders[spec['order']]['status']}")
        live = [a for a, x in self.accessions.items() if x["specimen"] == specimen_id and x["status"] == LIVE_ACCESSION]
        if live:
            return fail(f"specimen {specimen_id} already has accession {live[0]}; cancel it first")
        if self._window(lab_id, date)[1] <= self.now:
            return fail(f"lab {lab_id} intake for {date} closed at {self._window(lab_id, date)[1]}")
        limit = self.labs[lab_id]["capacity"]["limit"]
        if self._load(lab_id, date) >= limit:
            return fail(f"lab {lab_id} has no capacity left for {date} (limit {limit})")
        aid = self.next_id("accession", "ACC")
        self.accessions[aid] = {"specimen": specimen_id, "lab": lab_id, "test": test, "date": date,
                                "status": LIVE_ACCESSION, "created_at": self.now, "result_bleep": None, "note": ""}
        return ok({"accession_id": aid, **self.accessions[aid]}, message=f"{specimen_id} registered at {lab_id} "
                  f"for {date}")

    @tool(mutates=True, cost=2)
    def cancel_accession(self, accession_id: str) -> dict:
        """Cancel a pending accession (its specimen must have no booked run to it).

        Args:
            accession_id: The accession.
        """
        acc = self.accessions.get(accession_id)
        if acc is None:
            return fail(f"no accession {accession_id!r}")
        if acc["status"] != LIVE_ACCESSION:
            return fail(f"accession {accession_id} is {acc['status']}")
        held = [r for r, x in self.runs.items() if x["accession"] == accession_id and x["status"] == LIVE_RUN]
        if held:
            return fail(f"run {held[0]} is booked to deliver under {accession_id}; cancel the run first")
        acc["status"] = "cancelled"
        return ok(message=f"{accession_id} cancelled")

    @tool(mutates=True)
    def set_result_contact(self, accession_id: str, bleep: str) -> dict:
        """Record on a pending accession the bleep the lab phones the specimen's result to.

        Args:
            accession_id: The pending accession.
            bleep: The bleep number, four digits (a ward's on-call doctor is on its site record, their bleep on
                their clinician record).
        """
        acc = self.accessions.get(accession_id)
        if acc is None:
            return fail(f"no accession {accession_id!r}")
        if acc["status"] != LIVE_ACCESSION:
            return fail(f"accession {accession_id} is {acc['status']}")
        number = bleep.strip()
        if len(number) != 4 or not number.isdigit():
            return fail(f"a bleep is four digits, not {bleep!r}")
        acc["result_bleep"] = number
        return ok({"accession_id": accession_id, **acc}, message=f"{acc['lab']} phones the result for "
                  f"{acc['specimen']} to bleep {number}")

    def _book(self, specimen_id: str, couriers: list[str], hub: str, accession_id: str) -> dict:
        spec = self.specimens.get(specimen_id)
        if spec is None:
            return fail(f"no specimen {specimen_id!r}")
        acc = self.accessions.get(accession_id)
        if acc is None:
            return fail(f"no accession {accession_id!r}")
        if acc["specimen"] != specimen_id:
            return fail(f"accession {accession_id} is for {acc['specimen']}, not {specimen_id}")
        for cid in couriers:
            if cid not in self.couriers:
                return fail(f"no courier {cid!r}")
            if self.couriers[cid]["status"] not in ("available", "busy"):
                c = self.couriers[cid]
                return fail(f"courier {cid} is {c['status']}: {c.get('note') or 'not in service'}")
        order = self.orders[spec["order"]]
        if order["status"] != "open":
            return fail(f"order {spec['order']} is {order['status']}")
        if hub and (hub not in self.sites or self.sites[hub]["kind"] != "hub"):
            return fail(f"no hub {hub!r}")
        if len(set(couriers)) != len(couriers):
            return fail("a handoff needs two different couriers")
        live = [r for r, x in self.runs.items() if x["specimen"] == specimen_id and x["status"] == LIVE_RUN]
        if live:
            return fail(f"specimen {specimen_id} is already on run {live[0]}; cancel it first")
        ready = [(c, format_time(max(self.clock.now, local_time(self.couriers[c]["available_from"]) or self.clock.now)),
                  self.couriers[c]["location"]) for c in couriers]
        legs, handoff, problem = self._legs(specimen_id, ready, hub, acc["lab"])
        problem = problem or self._run_problem(specimen_id, accession_id, legs, hub)
        if problem:
            return fail(problem)
        rid = self.next_id("run", "RUN")
        opens = self._window(acc["lab"], acc["date"])[0]
        self.runs[rid] = {"specimen": specimen_id, "accession": accession_id, "lab": acc["lab"],
                          "pickup": spec["site"], "hub": hub, "legs": legs, "handoff_at": handoff,
                          "arrives": legs[-1]["arrives"], "accession_at": max(legs[-1]["arrives"], opens),
                          "status": LIVE_RUN, "booked_at": self.now, "note": ""}
        for leg in legs:
            self.couriers[leg["courier"]].update(status="busy", location=leg["to"], available_from=leg["arrives"])
        notes = {c: self.couriers[c]["note"] for c in couriers if self.couriers[c]["note"]}  # as dispatch shows them
        return ok({"run_id": rid, **self.runs[rid], **({"courier_notes": notes} if notes else {})},
                  message=f"{specimen_id} reaches {acc['lab']} at {legs[-1]['arrives']}")

    @tool(mutates=True, cost=4)
    def book_pickup(self, specimen_id: str, courier_id: str, accession_id: str) -> dict:
        """Book a courier to collect a specimen at its site and drive it straight to the lab of its accession.

        Args:
            specimen_id: The specimen.
            courier_id: A courier whose storage keeps the specimen's condition.
            accession_id: The pending accession at the receiving lab.
        """
        return self._book(specimen_id, [courier_id], "", accession_id)

    @tool(mutates=True, cost=5)
    def schedule_handoff(self, specimen_id: str, courier_id: str, hub_id: str, relay_courier_id: str,
                         accession_id: str) -> dict:
        """Book a relay: one courier collects the specimen and hands it over at a hub to a second, who drives
        it to the lab. Both must be at the hub within 20 minutes of each other.

        Args:
            specimen_id: The specimen.
            courier_id: The courier who collects it at its site.
            hub_id: The hub where custody passes.
            relay_courier_id: The courier who takes it on from the hub.
            accession_id: The pending accession at the receiving lab.
        """
        return self._book(specimen_id, [courier_id, relay_courier_id], hub_id, accession_id)

    @tool(mutates=True, cost=3)
    def cancel_run(self, run_id: str) -> dict:
        """Cancel a booked (or halted) run before the specimen is collected; its couriers are freed.

        Args:
            run_id: The run.
        """
        run = self.runs.get(run_id)
        if run is None:
            return fail(f"no run {run_id!r}")
        if run["status"] not in (LIVE_RUN, "halted"):
            return fail(f"run {run_id} is {run['status']}")
        run["status"] = "cancelled"
        for leg in run["legs"]:
            c = self.couriers[leg["courier"]]
            if c["status"] == "busy" and c["available_from"] == leg["arrives"]:
                c.update(status="available", location=leg["start"],
                         available_from=leg["ready_from"] if leg["ready_from"] > self.now else None)
        return ok(message=f"{run_id} cancelled")

    @tool(mutates=True, cost=3)
    def request_recollection(self, order_id: str, reason: str) -> dict:
        """Ask the ward to collect a new specimen for an order (the current one cannot be tested in time).

        Args:
            order_id: The order.
            reason: Why, as the ward will read it.
        """
        order = self.orders.get(order_id)
        if order is None:
            return fail(f"no order {order_id!r}")
        if order["status"] != "open":
            return fail(f"order {order_id} is {order['status']}")
        if not reason.strip():
            return fail("give the ward a reason")
        sid = order["specimen"]
        live = [r for r, x in self.runs.items() if x["specimen"] == sid and x["status"] == LIVE_RUN]
        if live:
            return fail(f"specimen {sid} is still on run {live[0]}; cancel it first")
        order.update(status="recollect_requested", note=reason.strip()[:200])
        return ok(message=f"{order['ward']} asked to recollect for {order_id}")

    # ------------------------------------------------- predicates and operations

    def _spec_of(self, order_id: str) -> str:
        return self.orders[order_id]["specimen"]

    @predicate
    def routed(self, order_id: str) -> bool:
        """The order's specimen has a booked run that gets it accessioned in time at a lab able to test it."""
        sid = self._spec_of(order_id)
        return any(x["specimen"] == sid and self._run_valid(r) for r, x in self.runs.items())

    @predicate
    def routed_since(self, order_id: str, trigger: str, log, lab_id: str = "") -> bool:
        """Like ``routed``, by a run booked once ``trigger`` had fired: the recovery's own; with ``lab_id``, to
        that lab."""
        fired = next((e["at"] for e in log.events if e["trigger"] == trigger), None)
        sid = self._spec_of(order_id)
        return fired is not None and any(x["specimen"] == sid and x["booked_at"] >= fired and self._run_valid(r)
                                         and lab_id in ("", x["lab"]) for r, x in self.runs.items())

    @predicate
    def nothing_stale(self, order_id: str) -> bool:
        """Every booked run of the specimen is on track and every pending accession of it is one a valid run
        uses or one that a run could still use (lab able to test, within capacity)."""
        sid = self._spec_of(order_id)
        for r, x in self.runs.items():
            if x["specimen"] == sid and x["status"] == LIVE_RUN and not self._run_valid(r):
                return False
        for a, x in self.accessions.items():
            if x["specimen"] == sid and x["status"] == LIVE_ACCESSION:
                if self._lab_problem(x["lab"], x["test"]) or not self._within_capacity(a):
                    return False
                if self._window(x["lab"], x["date"])[1] <= self.now:
                    return False
        return True

    @predicate
    def no_stale_run(self, order_id: str) -> bool:
        """No run of the specimen is halted or booked but off track: nothing stale is left standing."""
        sid = self._spec_of(order_id)
        return not any(x["specimen"] == sid and (x["status"] == "halted" or (x["status"] == LIVE_RUN
                                                                          and not self._run_valid(r)))
                       for r, x in self.runs.items())

    @predicate
    def contact_current(self, order_id: str) -> bool:
        """The accession of the specimen's run that gets it accessioned in time records the bleep of the doctor
        the ordering ward's site record names as on call."""
        order = self.orders[order_id]
        bleep = self.clinicians[self.sites[order["ward"]]["on_call"]]["bleep"]
        return any(x["specimen"] == order["specimen"] and self._run_valid(r)
                   and self.accessions[x["accession"]]["result_bleep"] == bleep for r, x in self.runs.items())

    @predicate
    def contact_recorded(self, order_id: str) -> bool:
        """The accession of the specimen's booked run records a bleep, whichever."""
        sid = self._spec_of(order_id)
        return any(x["specimen"] == sid and x["status"] == LIVE_RUN
                   and self.accessions[x["accession"]]["result_bleep"] for x in self.runs.values())

    @predicate
    def has_accession(self, order_id: str) -> bool:
        """The order's specimen has a pending accession."""
        sid = self._spec_of(order_id)
        return any(x["specimen"] == sid and x["status"] == LIVE_ACCESSION for x in self.accessions.values())

    @predicate
    def run_booked(self, order_id: str) -> bool:
        """The order's specimen has a booked run."""
        sid = self._spec_of(order_id)
        return any(x["specimen"] == sid and x["status"] == LIVE_RUN for x in self.runs.values())

    @predicate
    def nothing_shipped(self, order_id: str) -> bool:
        """No booked run carries the order's specimen: nothing spoiled was sent anyway."""
        return not self.run_booked(order_id)

    @predicate
    def recollection_requested(self, order_id: str) -> bool:
        """The ward was asked to recollect the order's specimen."""
        return self.orders[order_id]["status"] == "recollect_requested"

    @operation
    def retime_runs(self, note: str) -> None:
        """Every booked run is recomputed over the roads and couriers as they are now (a detour, a slip)."""
        for r in sorted(self.runs):
            if self.runs[r]["status"] == LIVE_RUN:
                self._recompute(r, note)

    @operation
    def slip_courier(self, courier_id: str, minutes: int, note: str) -> None:
        """``courier_id`` is free ``minutes`` later than planned; its booked legs are recomputed."""
        c = self.couriers[courier_id]
        base = max(local_time(c["available_from"]) or self.clock.now, self.clock.now)
        c.update(note=note)
        for r in sorted(self.runs):
            run = self.runs[r]
            if run["status"] == LIVE_RUN:
                hit = False
                for leg in run["legs"]:
                    if leg["courier"] == courier_id:
                        leg["ready_from"] = shift(leg["ready_from"], minutes)
                        hit = True
                if hit:
                    self._recompute(r, note)
                    for leg in self.runs[r]["legs"]:
                        if leg["courier"] == courier_id:
                            c["available_from"] = leg["arrives"]
                    return
        c["available_from"] = format_time(base + timedelta(minutes=minutes))

    @operation
    def pull_courier(self, courier_id: str, note: str) -> None:
        """``courier_id`` is reassigned (to an emergency); its booked runs are halted."""
        self.couriers[courier_id].update(status="reassigned", note=note)
        for run in self.runs.values():
            if run["status"] == LIVE_RUN and any(leg["courier"] == courier_id for leg in run["legs"]):
                run.update(status="halted", note=note)

    @operation
    def move_specimen(self, specimen_id: str, site_id: str, note: str) -> None:
        """The specimen is found at ``site_id``; runs that would collect it elsewhere are halted."""
        self.specimens[specimen_id].update(site=site_id, note=note)
        for run in self.runs.values():
            if run["status"] == LIVE_RUN and run["specimen"] == specimen_id and run["pickup"] != site_id:
                run.update(status="halted", note=f"pickup site wrong: {note}")

    @operation
    def bump_accessions(self, lab_id: str, note: str) -> None:
        """Pending accessions at ``lab_id`` beyond its daily capacity are bumped."""
        for a, acc in sorted(self.accessions.items()):
            if acc["lab"] == lab_id and acc["status"] == LIVE_ACCESSION and not self._within_capacity(a):
                acc.update(status="bumped", note=note)
