"""Irrigation: a farm's irrigation control system (pumps, pipe network, valves, runs, district water quota).

State containers (JSON-like dicts keyed by id):

- ``pumphouses``: ``{name, water, notice}``: the pump stations (``water``: soft or hard, from their source); they are
  nodes of the pipe network and of the farm tracks.
- ``pumps``: ``{name, house, capacity, status: ready|failed|reassigned|offline, note}``; ``capacity`` in m3/h is
  shared by every run overlapping in time.
- ``junctions``: ``{name}``: field headers, nodes of the pipe network.
- ``fields``: ``{name, crop, mix, mix_note}``: ``mix`` names the fertigation mix (in ``mixes``) the field's runs carry.
- ``mixes``: ``{name}``: the fertigation mixes the injectors hold.
- ``segments``: ``{field, name, crop, moisture, need_m3, windows: [{start, end}], priority, note}``. A segment is a
  node of the pipe network; it is watered correctly when valid runs inside an allowed window deliver ``need_m3``.
- ``valves``: ``{name, a, b, kind: main|bypass|field, max_flow, length, status: open|closed|faulty|locked|repair,
  house, unlocked_at, note}``: each valve is the pipe section between nodes ``a`` and ``b``. Water reaches a
  segment along a chain of valves from a pump house; main and bypass valves on it must be open, the segment's
  own field valve is opened and closed by the controller for each run (opening one by hand floods the segment).
  The flows of the runs overlapping in time through one valve add up to at most its ``max_flow``. A locked
  valve stays shut until a crew reaches its pump house (``house``) and unlocks it (``unlocked_at``).
- ``tracks``: ``{a, b, minutes, open}`` farm tracks between pump houses, for the crews.
- ``crews``: ``{name, location, available_from, shift_end, status: available|busy|recalled|off_shift, note}``.
- ``allocation``: ``{permit, limit: {date: m3}, default_limit, used: {date: m3}, notice}``: the district's daily
  water quota; a run's volume counts on the date it starts and each date starts afresh at 00:00.
- ``runs``: ``{segment, pump, start, end, flow, volume, path, valves, mix, status: scheduled|cancelled, note}``. A
  scheduled run is *valid* while its pump works, every valve on its path is usable and still joins the path,
  it lies inside an allowed window of its segment, and the pump, valve and day quota hold it next to the runs
  scheduled before it.
- ``counters``: the last run number.

Times are ISO strings at minute precision.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from sttgym.clock import format_time, local_time
from sttgym.geo import shortest_route
from sttgym.tools import fail, ok, tool
from sttgym.world import World, operation, predicate

__all__ = ["IrrigationWorld", "UNLOCK_MINUTES", "run_minutes"]

UNLOCK_MINUTES = 10  # a crew's work at a locked valve once on site
USABLE = ("open", "closed", "locked")  # valve states a path may pass through (closed/locked: to be opened first)



def run_minutes(volume: int, flow: int) -> int:
    """How long ``volume`` m3 takes at ``flow`` m3/h, in whole minutes."""
    return math.ceil(volume * 60 / flow)


def _overlap(a: dict, start: datetime, end: datetime) -> bool:
    return local_time(a["start"]) < end and start < local_time(a["end"])


def _rank(item: tuple[str, dict]) -> tuple[int, int]:
    """A run's place in the queue (see ``_order``), from its id and record."""
    run_id, run = item
    tail = run_id.rsplit("-", 1)[-1]
    return (0 if run.get("priority") else 1, int(tail) if tail.isdigit() else 0)


class IrrigationWorld(World):
    """Tools of a farm's irrigation control system; see the module docstring."""

    domain = "Irrigation"
    # The rules every check of the domain enforces, told to every agent (checks quote them in ``stated``).
    description = ("A farm irrigation control system: field segments with water needs and allowed watering windows, "
                   "a pipe network of valves from pump houses, pumps with capacity, scheduled runs, the district's "
                   "daily water quota, and maintenance crews travelling between pump houses. A block is watered when "
                   "valid scheduled runs deliver its whole need inside its allowed windows, and no block may be "
                   "scheduled more than its need. Field valves are opened and closed by the controller during runs: "
                   "opening one by hand floods its block. If a block cannot be watered as asked, leave no run "
                   "scheduled for it and tell the manager why.")
    inert = {"runs": {"status": ["cancelled"]}}  # a cancelled run holds no pump, valve or quota

    # ----------------------------------------------------------------- helpers

    def _node(self, node: str) -> bool:
        return node in self.pumphouses or node in self.junctions or node in self.segments

    def _pipes(self, flow: int = 0) -> dict:
        """The valves water may pass through, as a graph for ``shortest_route``."""
        return {v: {"a": x["a"], "b": x["b"], "minutes": x["length"],
                    "open": x["status"] in USABLE and x["max_flow"] >= flow}
                for v, x in self.valves.items()}

    def _path(self, house: str, segment: str, flow: int = 0) -> tuple[list[str], list[str]] | None:
        route = shortest_route(self._pipes(flow), house, segment)
        if route is None:
            return None
        nodes = route[1]
        return nodes, [self._valve_between(a, b, flow) for a, b in zip(nodes, nodes[1:])]

    def _valve_between(self, a: str, b: str, flow: int = 0) -> str:
        found = sorted((x["length"], v) for v, x in self.valves.items() if {x["a"], x["b"]} == {a, b}
                       and x["status"] in USABLE and x["max_flow"] >= flow)
        return found[0][1]

    def _live(self, segment: str = "") -> list[tuple[str, dict]]:
        return [(r, x) for r, x in sorted(self.runs.items(), key=_rank)
                if x["status"] == "scheduled" and segment in ("", x["segment"])]

    def _order(self, run_id: str) -> tuple[int, int]:
        """Priority runs come first, then runs in the order they were scheduled."""
        return _rank((run_id, self.runs[run_id]))

    def _in_window(self, segment: str, start: datetime, end: datetime) -> bool:
        return any(local_time(w["start"]) <= start and end <= local_time(w["end"]) for w in self.segments[segment]["windows"])

    def _problem(self, run_id: str) -> str:
        """Why a scheduled run would not water its segment now ('' when it would)."""
        run = self.runs[run_id]
        start, end = local_time(run["start"]), local_time(run["end"])
        pump = self.pumps[run["pump"]]
        if pump["status"] != "ready":
            return f"pump {run['pump']} is {pump['status']}"
        nodes = run["path"]
        for (a, b), v in zip(zip(nodes, nodes[1:]), run["valves"]):
            valve = self.valves[v]
            if {valve["a"], valve["b"]} != {a, b}:
                return f"valve {v} no longer joins {a} and {b}"
            if valve["status"] != "open" and not (valve["kind"] == "field" and valve["status"] == "closed"):
                return f"valve {v} is {valve['status']}"
            if valve.get("unlocked_at") and local_time(valve["unlocked_at"]) > start:
                return f"valve {v} is unlocked only at {valve['unlocked_at']}"
        if not self._in_window(run["segment"], start, end):
            return f"outside every allowed window of {run['segment']}"
        order, live = self._order(run_id), self._live()
        earlier = [x for r, x in live if _rank((r, x)) < order and _overlap(x, start, end)]
        if sum(x["flow"] for x in earlier if x["pump"] == run["pump"]) + run["flow"] > pump["capacity"]:
            return f"pump {run['pump']} ({pump['capacity']} m3/h) is over capacity"
        for v in run["valves"]:
            if sum(x["flow"] for x in earlier if v in x["valves"]) + run["flow"] > self.valves[v]["max_flow"]:
                return f"valve {v} ({self.valves[v]['max_flow']} m3/h) is over its max flow"
        day = run["start"][:10]
        booked = sum(x["volume"] for r, x in live if x["start"][:10] == day and _rank((r, x)) < order)
        if booked + run["volume"] > self._limit(day):
            return f"over the district quota for {day} ({self._limit(day)} m3)"
        return ""

    def _limit(self, day: str) -> int:
        return self.allocation["limit"].get(day, self.allocation["default_limit"])

    def _used(self, day: str) -> int:
        return sum(x["volume"] for _, x in self._live() if x["start"][:10] == day)

    def _valid_volume(self, segment: str, since: str = "") -> int:
        return sum(x["volume"] for r, x in self._live(segment) if not self._problem(r) and x["created"] >= since)

    def _run_view(self, run_id: str) -> dict:
        run = self.runs[run_id]
        view = {"run_id": run_id, **{k: v for k, v in run.items() if k != "created"}}
        if run["status"] == "scheduled":
            problem = self._problem(run_id)
            view["status"] = f"blocked: {problem}" if problem else "scheduled"
        return view

    # ------------------------------------------------------------------- reads

    @tool
    def list_fields(self) -> dict:
        """List the farm's fields with their crop, fertigation mix and segment ids."""
        rows = [{"field_id": f, **x, "mix_recipe": self.mixes[x["mix"]]["name"] if x.get("mix") else None,
                 "segments": sorted(s for s, y in self.segments.items() if y["field"] == f)}
                for f, x in sorted(self.fields.items())]
        return ok({"fields": rows})

    @tool
    def list_segments(self, field_id: str = "") -> dict:
        """List field segments with crop, water need, priority and allowed watering windows.

        Args:
            field_id: Only the segments of this field; empty for all.
        """
        if field_id and field_id not in self.fields:
            return fail(f"no field {field_id!r}")
        rows = [{"segment_id": s, **{k: x[k] for k in ("field", "name", "crop", "need_m3", "priority", "windows")}}
                for s, x in sorted(self.segments.items()) if field_id in ("", x["field"])]
        return ok({"segments": rows})

    @tool
    def get_segment(self, segment_id: str) -> dict:
        """Read a segment: crop, moisture, water need, allowed windows, its field valve, runs and what is still due.

        Args:
            segment_id: The segment's id.
        """
        seg = self.segments.get(segment_id)
        if seg is None:
            return fail(f"no segment {segment_id!r}")
        feed = sorted(v for v, x in self.valves.items() if segment_id in (x["a"], x["b"]))
        valid = self._valid_volume(segment_id)
        return ok({"segment_id": segment_id, **seg, "field_valves": feed, "scheduled_valid_m3": valid,
                   "still_due_m3": max(0, seg["need_m3"] - valid),
                   "runs": [self._run_view(r) for r, _ in self._live(segment_id)]})

    @tool
    def read_sensors(self, segment_id: str) -> dict:
        """Live sensor readings of a segment: soil moisture and the line pressure at its pump house.

        Args:
            segment_id: The segment's id.
        """
        seg = self.segments.get(segment_id)
        if seg is None:
            return fail(f"no segment {segment_id!r}")
        rows = []
        for h in sorted(self.pumphouses):
            pumps = [p for p, x in sorted(self.pumps.items()) if x["house"] == h]
            working = any(self.pumps[p]["status"] == "ready" for p in pumps)
            rows.append({"pumphouse": h, "pressure_bar": 3.2 if working else 0.4,
                         "pumps": {p: self.pumps[p]["status"] for p in pumps}})
        return ok({"segment_id": segment_id, "moisture_pct": seg["moisture"], "line_pressure": rows})

    @tool
    def list_valves(self, node_id: str = "") -> dict:
        """List valves (pipe sections) with the nodes they join, kind, max flow, status and notes.

        Args:
            node_id: Only valves touching this pump house, junction or segment; empty for all.
        """
        if node_id and not self._node(node_id):
            return fail(f"no pump house, junction or segment {node_id!r}")
        rows = [{"valve_id": v, **x} for v, x in sorted(self.valves.items()) if node_id in ("", x["a"], x["b"])]
        return ok({"valves": rows})

    @tool
    def get_valve(self, valve_id: str) -> dict:
        """Read a valve: the nodes it joins, kind, max flow, status, its pump house, unlock time and notes.

        Args:
            valve_id: The valve's id.
        """
        valve = self.valves.get(valve_id)
        if valve is None:
            return fail(f"no valve {valve_id!r}")
        runs = [{"run_id": r, "start": x["start"], "end": x["end"], "flow": x["flow"]}
                for r, x in self._live() if valve_id in x["valves"]]
        return ok({"valve_id": valve_id, **valve, "runs_through": runs})

    @tool
    def list_pumps(self) -> dict:
        """List pumps with pump house, capacity in m3/h, status and notes."""
        rows = [{"pump_id": p, **x} for p, x in sorted(self.pumps.items())]
        return ok({"pumps": rows, "pumphouses": [{"pumphouse_id": h, **x} for h, x in sorted(self.pumphouses.items())]})

    @tool
    def get_pump(self, pump_id: str) -> dict:
        """Read a pump: capacity, status, notes and the runs booked on it (start, end, flow).

        Args:
            pump_id: The pump's id.
        """
        pump = self.pumps.get(pump_id)
        if pump is None:
            return fail(f"no pump {pump_id!r}")
        runs = [{"run_id": r, "segment": x["segment"], "start": x["start"], "end": x["end"], "flow": x["flow"]}
                for r, x in self._live() if x["pump"] == pump_id]
        return ok({"pump_id": pump_id, **pump, "runs": runs})

    @tool(cost=2)
    def get_network_path(self, pump_id: str, segment_id: str, flow_m3h: int = 0) -> dict:
        """The shortest pipe path from a pump's house to a segment over valves that are not faulty or under
        repair and carry at least the flow: each valve's status and max flow, and the valves that are out.

        Args:
            pump_id: The pump that would feed the segment.
            segment_id: The segment to reach.
            flow_m3h: The flow the path must carry; 0 for any.
        """
        pump = self.pumps.get(pump_id)
        if pump is None:
            return fail(f"no pump {pump_id!r}")
        if segment_id not in self.segments:
            return fail(f"no segment {segment_id!r}")
        if flow_m3h < 0:
            return fail("the flow cannot be negative")
        out = sorted(f"{v} ({x['status']})" for v, x in self.valves.items() if x["status"] not in USABLE)
        found = self._path(pump["house"], segment_id, flow_m3h)
        if found is None:
            return ok({"reachable": False, "path": [], "valves": [], "valves_out": out})
        nodes, valves = found
        rows = [{"valve_id": v, "status": self.valves[v]["status"], "kind": self.valves[v]["kind"],
                 "max_flow": self.valves[v]["max_flow"], "unlocked_at": self.valves[v].get("unlocked_at")}
                for v in valves]
        return ok({"reachable": True, "path": nodes, "valves": rows,
                   "max_flow": min(self.valves[v]["max_flow"] for v in valves), "valves_out": out})

    @tool
    def get_quota(self) -> dict:
        """The district water allocation: the daily limit, what scheduled runs use per day, and notices."""
        alloc = self.allocation
        today = self.now[:10]
        tomorrow = format_time(self.clock.now + timedelta(days=1))[:10]
        days = {d: {"limit_m3": self._limit(d), "used_m3": self._used(d),
                    "remaining_m3": max(0, self._limit(d) - self._used(d))} for d in (today, tomorrow)}
        return ok({"permit": alloc["permit"], "days": days, "resets_at": f"{tomorrow}T00:00",
                   "notice": alloc["notice"]})

    @tool
    def list_runs(self, segment_id: str = "") -> dict:
        """Scheduled irrigation runs with their live status (a blocked run says why), optionally of one segment.

        Args:
            segment_id: Only this segment's runs; empty for all.
        """
        if segment_id and segment_id not in self.segments:
            return fail(f"no segment {segment_id!r}")
        return ok({"runs": [self._run_view(r) for r, _ in self._live(segment_id)]})

    @tool
    def list_crews(self) -> dict:
        """Maintenance crews with location (a pump house), status, when free and shift end."""
        return ok({"crews": [{"crew_id": c, **x} for c, x in sorted(self.crews.items())]})

    @tool
    def get_travel_time(self, from_id: str, to_id: str) -> dict:
        """Driving minutes between two pump houses over the open farm tracks.

        Args:
            from_id: The pump house to leave from.
            to_id: The pump house to reach.
        """
        for h in (from_id, to_id):
            if h not in self.pumphouses:
                return fail(f"no pump house {h!r}")
        route = shortest_route(self.tracks, from_id, to_id)
        closed = sorted(t for t, x in self.tracks.items() if not x.get("open", True))
        if route is None:
            return ok({"reachable": False, "minutes": None, "path": [], "closed_tracks": closed})
        return ok({"reachable": True, "minutes": route[0], "path": route[1], "closed_tracks": closed})

    # --------------------------------------------------------------- changes

    @tool(mutates=True, cost=2)
    def open_valve(self, valve_id: str) -> dict:
        """Open a closed main or bypass valve (a faulty, locked or under-repair valve cannot be opened from here).
        Field valves are the controller's: opening one by hand floods its block.

        Args:
            valve_id: The valve to open.
        """
        valve = self.valves.get(valve_id)
        if valve is None:
            return fail(f"no valve {valve_id!r}")
        if valve["status"] == "locked":
            return fail(f"valve {valve_id} is locked: a crew must unlock it at {valve['house']}")
        if valve["status"] != "closed":
            return fail(f"valve {valve_id} is {valve['status']}{': ' + valve['note'] if valve.get('note') else ''}")
        valve["status"] = "open"
        return ok(message=f"{valve_id} open")

    @tool(mutates=True, cost=2)
    def close_valve(self, valve_id: str) -> dict:
        """Close an open valve.

        Args:
            valve_id: The valve to close.
        """
        valve = self.valves.get(valve_id)
        if valve is None:
            return fail(f"no valve {valve_id!r}")
        if valve["status"] != "open":
            return fail(f"valve {valve_id} is {valve['status']}, not open")
        valve["status"] = "closed"
        return ok(message=f"{valve_id} closed")

    @tool(mutates=True, cost=3)
    def schedule_run(self, segment_id: str, pump_id: str, start: str, flow_m3h: int, volume_m3: int = 0,
                     mix_id: str = "") -> dict:
        """Schedule an irrigation run along the shortest usable pipe path; it lasts until its volume is delivered.

        Args:
            segment_id: The segment to water.
            pump_id: The pump that feeds it.
            start: Start time, ISO (e.g. 2025-06-03T06:30), not in the past.
            flow_m3h: Flow in m3/h.
            volume_m3: Volume in m3; 0 for all the segment still needs.
            mix_id: The fertigation mix the run's injector adds; empty for plain water.
        """
        seg = self.segments.get(segment_id)
        if seg is None:
            return fail(f"no segment {segment_id!r}")
        pump = self.pumps.get(pump_id)
        if pump is None:
            return fail(f"no pump {pump_id!r}")
        begin = local_time(start)
        if begin is None:
            return fail(f"start {start!r} is not an ISO time")
        if begin < self.clock.now - timedelta(minutes=1):
            return fail(f"start {start} is in the past (now {self.now})")
        if flow_m3h <= 0 or volume_m3 < 0:
            return fail("the flow must be positive and the volume not negative")
        if mix_id and mix_id not in self.mixes:
            return fail(f"no fertigation mix {mix_id!r}")
        if pump["status"] != "ready":
            return fail(f"pump {pump_id} is {pump['status']}{': ' + pump['note'] if pump.get('note') else ''}")
        due = max(0, seg["need_m3"] - sum(x["volume"] for _, x in self._live(segment_id)))
        volume = volume_m3 or due
        if volume <= 0 or volume > due:
            return fail(f"segment {segment_id} has {due} m3 left to schedule (cancel a run to reschedule it)")
        try:
            end = begin + timedelta(minutes=run_minutes(volume, flow_m3h))
        except OverflowError:
            return fail(f"a run from {start} at {flow_m3h} m3/h would end past the calendar")
        if not self._in_window(segment_id, begin, end):
            return fail(f"a run {format_time(begin)}-{format_time(end)} lies outside every allowed window of "
                        f"{segment_id}: {seg['windows']}")
        found = self._path(pump["house"], segment_id, flow_m3h)
        if found is None:
            return fail(f"no usable pipe path from {pump['house']} to {segment_id} for {flow_m3h} m3/h")
        nodes, valves = found
        for v in valves:
            x = self.valves[v]
            if x["status"] == "locked" or (x["status"] == "closed" and x["kind"] != "field"):
                return fail(f"valve {v} on the path {'-'.join(nodes)} is {x['status']}")
            if x.get("unlocked_at") and local_time(x["unlocked_at"]) > begin:
                return fail(f"valve {v} is unlocked only at {x['unlocked_at']}, after the start")
        others = [x for _, x in self._live() if _overlap(x, begin, end)]
        used = sum(x["flow"] for x in others if x["pump"] == pump_id)
        if used + flow_m3h > pump["capacity"]:
            return fail(f"pump {pump_id} has {pump['capacity'] - used} of {pump['capacity']} m3/h free then")
        for v in valves:
            used = sum(x["flow"] for x in others if v in x["valves"])
            if used + flow_m3h > self.valves[v]["max_flow"]:
                return fail(f"valve {v} carries {self.valves[v]['max_flow'] - used} more m3/h then, not {flow_m3h}")
        day = format_time(begin)[:10]
        if self._used(day) + volume > self._limit(day):
            return fail(f"the district quota for {day} has {max(0, self._limit(day) - self._used(day))} m3 left, "
                        f"not {volume}")
        self.counters["run"] += 1
        rid = f"RUN-{self.counters['run']}"
        self.runs[rid] = {"segment": segment_id, "pump": pump_id, "start": format_time(begin), "end": format_time(end),
                          "flow": flow_m3h, "volume": volume, "path": nodes, "valves": valves,
                          "mix": mix_id, "status": "scheduled", "note": "", "created": self.now}
        return ok({"run_id": rid, **{k: v for k, v in self.runs[rid].items() if k != "created"}},
                  message=f"{rid}: {volume} m3 to {segment_id} {format_time(begin)}-{format_time(end)}")

    @tool(mutates=True, cost=2)
    def cancel_run(self, run_id: str) -> dict:
        """Cancel a scheduled run; its pump capacity, valve flow and quota are freed. The farm office's priority
        runs are its own: they cannot be cancelled from here.

        Args:
            run_id: The run to cancel.
        """
        run = self.runs.get(run_id)
        if run is None:
            return fail(f"no run {run_id!r}")
        if run["status"] != "scheduled":
            return fail(f"run {run_id} is {run['status']}")
        if run.get("priority"):
            return fail(f"run {run_id} is a priority run of the farm office: only the office can cancel it")
        run.update(status="cancelled", note=f"cancelled at {self.now}")
        return ok(message=f"{run_id} cancelled")

    @tool(mutates=True)
    def set_run_mix(self, run_id: str, mix_id: str) -> dict:
        """Change the fertigation mix a scheduled run's injector adds (empty for plain water).

        Args:
            run_id: The scheduled run.
            mix_id: The fertigation mix its injector adds; empty for plain water.
        """
        run = self.runs.get(run_id)
        if run is None:
            return fail(f"no run {run_id!r}")
        if run.get("priority"):
            return fail(f"run {run_id} is a priority run of the farm office: only the office can change it")
        if run["status"] != "scheduled":
            return fail(f"run {run_id} is {run['status']}")
        if mix_id and mix_id not in self.mixes:
            return fail(f"no fertigation mix {mix_id!r}")
        run["mix"] = mix_id
        return ok(message=f"{run_id} carries {mix_id or 'plain water'}")

    @tool(mutates=True, cost=3)
    def dispatch_crew(self, crew_id: str, valve_id: str) -> dict:
        """Send a crew along the farm tracks to a locked valve's pump house to unlock and open it on arrival.

        Args:
            crew_id: The crew.
            valve_id: The locked valve.
        """
        crew = self.crews.get(crew_id)
        if crew is None:
            return fail(f"no crew {crew_id!r}")
        valve = self.valves.get(valve_id)
        if valve is None:
            return fail(f"no valve {valve_id!r}")
        if valve["status"] != "locked":
            return fail(f"valve {valve_id} is {valve['status']}, not locked")
        if crew["status"] != "available":
            return fail(f"crew {crew_id} is {crew['status']}{': ' + crew['note'] if crew.get('note') else ''}")
        route = shortest_route(self.tracks, crew["location"], valve["house"])
        if route is None:
            return fail(f"no open track from {crew['location']} to {valve['house']}")
        free = max(self.clock.now, local_time(crew.get("available_from")) or self.clock.now)
        arrives = free + timedelta(minutes=route[0])
        done = arrives + timedelta(minutes=UNLOCK_MINUTES)
        if done > local_time(crew["shift_end"]):
            return fail(f"crew {crew_id} would finish at {format_time(done)}, past its shift end {crew['shift_end']}")
        crew.update(status="busy", location=valve["house"], available_from=format_time(done),
                    note=f"unlocking {valve_id}")
        valve.update(status="open", unlocked_at=format_time(done),
                     note=f"unlocked and opened by {crew_id} at {format_time(done)}")
        return ok({"crew_id": crew_id, "valve_id": valve_id, "arrives": format_time(arrives),
                   "unlocked_at": format_time(done)}, message=f"{crew_id} unlocks {valve_id} at {format_time(done)}")

    # ------------------------------------------------- predicates and operations

    @predicate
    def watered(self, segment_id: str) -> bool:
        """Valid scheduled runs deliver the segment's whole need inside its allowed windows."""
        return self._valid_volume(segment_id) >= self.segments[segment_id]["need_m3"]

    @predicate
    def watered_since(self, segment_id: str, trigger: str, log, pump_id: str = "") -> bool:
        """Like ``watered``, with at least one of the valid runs scheduled once ``trigger`` had fired; with
        ``pump_id``, every valid run of the segment comes from that pump."""
        fired = next((e["at"] for e in log.events if e["trigger"] == trigger), None)
        pumps = {x["pump"] for r, x in self._live(segment_id) if not self._problem(r)}
        return (fired is not None and self.watered(segment_id) and self._valid_volume(segment_id, fired) > 0
                and (not pump_id or pumps == {pump_id}))

    @predicate
    def fertigated(self, segment_id: str) -> bool:
        """The segment is watered and every run left for it carries the mix its field's record names."""
        mix = self.fields[self.segments[segment_id]["field"]]["mix"]
        return self.watered(segment_id) and all(x.get("mix") == mix for _, x in self._live(segment_id))

    @predicate
    def mixed_since(self, segments: list, trigger: str, log) -> bool:
        """A run of ``segments`` scheduled after the call during which ``trigger`` fired is still scheduled and
        carries a mix: the recovery has been made and its mix written, in whichever order."""
        fired = next((e["call_index"] for e in log.events if e["trigger"] == trigger), None)
        if fired is None:
            return False
        made = [c["result"]["data"]["run_id"] for c in log.calls[fired:]
                if c["name"] == "schedule_run" and c["result"].get("success")]
        return any(self.runs[r]["status"] == "scheduled" and self.runs[r]["segment"] in segments
                   and self.runs[r].get("mix") for r in made)

    @predicate
    def no_blocked_run(self, segment_id: str) -> bool:
        """No scheduled run of the segment is blocked (a stale run was cancelled)."""
        return all(not self._problem(r) for r, _ in self._live(segment_id))

    @predicate
    def has_run(self, segment_id: str) -> bool:
        """The segment has a scheduled run."""
        return bool(self._live(segment_id))

    @predicate
    def no_run(self, segment_id: str) -> bool:
        """The segment has no scheduled run."""
        return not self._live(segment_id)

    @predicate
    def not_overwatered(self, segment_id: str) -> bool:
        """The scheduled runs of the segment carry no more than its need."""
        return sum(x["volume"] for _, x in self._live(segment_id)) <= self.segments[segment_id]["need_m3"]

    @predicate
    def no_field_flooded(self) -> bool:
        """No field valve was opened by hand (the controller opens them during runs)."""
        return all(x["status"] != "open" for x in self.valves.values() if x["kind"] == "field")

    @operation
    def priority_run(self, run_id: str, segment_id: str, pump_id: str, start: str, flow: int, note: str) -> None:
        """The farm office puts a priority run for the segment's whole need ahead of every other run."""
        nodes, valves = self._path(self.pumps[pump_id]["house"], segment_id)
        volume = self.segments[segment_id]["need_m3"]
        end = format_time(local_time(start) + timedelta(minutes=run_minutes(volume, flow)))
        self.runs[run_id] = {"segment": segment_id, "pump": pump_id, "start": start, "end": end, "flow": flow,
                             "volume": volume, "path": nodes, "valves": valves, "status": "scheduled",
                             "priority": True, "note": note, "created": self.now}

    @operation
    def relock_valve(self, valve_id: str, crew_id: str, note: str) -> None:
        """The crew is recalled before it unlocks the valve: the valve stays locked."""
        self.valves[valve_id].update(status="locked", unlocked_at=None, note=note)
        self.crews[crew_id].update(status="recalled", note=note)
