"""A seeded ColdChain base world, and the plan and check pieces every scenario shares.

The base world is a region around one delivery: a far regional hub (``hub``, with the user's lot and
van) and a city hub (``hub2``) close to the target clinic, a depot on each side, three clinics and
a road graph whose shape is fixed (so conflicts have somewhere to go: a corridor into the city with
a slower detour, a city hub a few minutes from the clinic) while every id, travel time, quantity
and clock time is drawn from the generator. Scenarios specialise it: they move times, add lots and
vehicles, and derive deadlines from the travel times the world will really compute.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Callable

import numpy as np

from sttgym.envs.arena.coldchain.world import DWELL_MINUTES, ColdChainWorld, cooling_covers, open_at
from sttgym.checklist import Check
from sttgym.clock import format_time, parse_time
from sttgym.env import UserChannel
from sttgym.geo import shortest_route
from sttgym.judge import Impossibility
from sttgym.task import Call, Ref, Task
from sttgym.triggers import Trigger
from sttgym.user import Answer, UserProfile

__all__ = ["Base", "build_base", "at", "plus", "hhmm", "elapsed", "deliver", "survey", "delivery_checks",
           "no_dangling", "delivered", "profile", "ceil5", "floor5", "minutes_between", "load_and_go", "shipment",
           "make_task", "left_alone", "none_sent"]

HUB_NAMES = ["NORTH", "SOUTH", "EAST", "WEST", "RIVERSIDE", "HARBOR", "CENTRAL", "VALLEY", "SUMMIT", "MIDLAND"]
CLINIC_NAMES = ["DOWNTOWN", "MAPLE", "ELMWOOD", "OAKRIDGE", "BAYVIEW", "CEDAR", "HILLCREST", "MEADOW", "PARKSIDE",
                "WILLOW", "BRIDGEPORT", "STATION"]
DISTRICTS = ["Northgate", "Riverbend", "Eastfield", "Lakeside", "Southmoor", "Westbrook", "Highland", "Fairview"]
# (product, lot code, lowest and highest storage temperature in degrees C)
PRODUCTS = [("insulin", "INS", 2, 8), ("measles-rubella vaccine", "MR", 2, 8), ("hepatitis B vaccine", "HEPB", 2, 8),
            ("rotavirus vaccine", "ROTA", 2, 8), ("rabies immunoglobulin", "RIG", 2, 8), ("HPV vaccine", "HPV", 2, 8),
            ("varicella vaccine", "VAR", -25, -15), ("mRNA COVID-19 vaccine", "MRNA", -25, -15)]
CHILLED, FROZEN = (0, 10), (-30, -12)  # bands the two kinds of cooling unit hold
# (one end, other end, fewest and most minutes): the region's road graph by role.
ROADS = [("hub", "depot1", 45, 55), ("depot1", "clinic", 50, 60), ("depot1", "clinic3", 50, 60),
         ("hub", "clinic3", 100, 115), ("clinic3", "clinic2", 20, 25), ("clinic2", "clinic", 20, 25),
         ("clinic", "hub2", 10, 18), ("hub2", "clinic2", 12, 20), ("hub2", "depot2", 10, 15),
         ("depot2", "clinic3", 15, 25)]
_COSTS = {name: getattr(cls, name).__sttgym_tool__["cost"]
          for cls in (ColdChainWorld, UserChannel) for name in dir(cls)
          if hasattr(getattr(cls, name), "__sttgym_tool__")}


def plus(moment: str, minutes: int) -> str:
    """``moment`` (ISO) shifted by ``minutes``."""
    return format_time(parse_time(moment) + timedelta(minutes=int(minutes)))


def hhmm(moment: str) -> str:
    return moment[11:16]


def minutes_between(a: str, b: str) -> int:
    return int((parse_time(b) - parse_time(a)).total_seconds() // 60)


def ceil5(moment: str) -> str:
    """``moment`` rounded up to a multiple of five minutes."""
    return plus(moment, -int(moment[-2:]) % 5)


def floor5(moment: str) -> str:
    """``moment`` rounded down to a multiple of five minutes."""
    return plus(moment, -(int(moment[-2:]) % 5))


def elapsed(calls: list[Call]) -> int:
    """Simulated minutes ``calls`` take (each call costs its tool's minutes)."""
    return sum(_COSTS[c.name] for c in calls)


def _numbers(rng: np.random.Generator, n: int, lo: int, hi: int) -> list[int]:
    return [int(x) for x in rng.choice(np.arange(lo, hi), size=n, replace=False)]


@dataclass
class Base:
    """The base world of one instance and the roles its entities play."""

    rng: np.random.Generator
    state: dict
    start: str
    district: str
    product: str
    band: tuple[int, int]
    qty: int
    hub: str
    hub2: str
    depot1: str
    depot2: str
    clinic: str
    clinic2: str
    clinic3: str
    lot: str
    lot2: str
    vehicle: str  # the user's van, at hub
    vehicle2: str  # a compatible van at hub2
    vehicle3: str  # a compatible van at depot1
    session: str  # the target session at clinic
    roads: dict[str, str] = field(default_factory=dict)  # "role-role" -> road id
    _serial: list[int] = field(default_factory=list)

    # ---------------------------------------------------------------- space and time

    def minutes(self, a: str, b: str, closed: frozenset[str] = frozenset()) -> int:
        """Driving minutes between two sites on the open roads, treating ``closed`` roads as shut too."""
        roads = {rid: r for rid, r in self.state["roads"].items() if rid not in closed}
        found = shortest_route(roads, a, b)
        if found is None:
            raise ValueError(f"{a} and {b} are not connected")
        return found[0]

    def eta(self, plan: list[Call], closed: frozenset[str] = frozenset(), ready: str | None = None,
            parked: str | None = None) -> str:
        """When the vehicle of ``plan``'s last dispatch reaches its last stop, as the world will time it.

        The vehicle leaves when the dispatch call runs (or when it is free, if later: ``ready`` overrides
        what the initial state says), from the site it is parked at, along the stops of the last route
        ``plan`` gave it (``parked`` overrides where it starts); ``closed`` roads are avoided.
        """
        i = max(k for k, c in enumerate(plan) if c.name == "update_vehicle_status" and c.arguments["status"] == "in_transit")
        vehicle_id = plan[i].arguments["vehicle_id"]
        route = next(c.arguments for c in reversed(plan[:i])
                     if c.name == "add_or_update_route_plan" and c.arguments["vehicle_id"] == vehicle_id)
        stops = route["route_plan"]
        vehicle = self.state["vehicles"][vehicle_id]
        clock = max(at(self, plan[:i]), ready or vehicle["available_from"] or self.start,
                    route.get("departure_time") or self.start)
        here = parked or vehicle["site_id"]
        for k, site in enumerate(stops):
            clock = plus(clock, (DWELL_MINUTES if k else 0) + self.minutes(here, site, closed))
            here = site
        return clock

    # ------------------------------------------------------------- entity builders

    def serial(self, lo: int = 1000, hi: int = 9999) -> int:
        """A number no other id of this instance uses."""
        while True:
            n = int(self.rng.integers(lo, hi))
            if n not in self._serial:
                self._serial.append(n)
                return n

    def add_lot(self, site: str, quantity: int, product: str | None = None, **extra) -> str:
        """A lot of ``product`` (default: the mission's) stored at ``site``."""
        name = product or self.product
        code, lo, hi = next((c, a, b) for p, c, a, b in PRODUCTS if p == name)
        lot_id = f"LOT-{code}-{self.serial()}"
        self.state["goods_inventory"][lot_id] = {
            "product": name, "batch": f"B{self.serial(10000, 99999)}", "site_id": site, "quantity": int(quantity),
            "temp_min_c": lo, "temp_max_c": hi, "use_by": plus(self.start, 60 * 24 * int(self.rng.integers(20, 200))),
            "status": "available", **extra}
        return lot_id

    def add_vehicle(self, site: str, fits: bool = True, kind: str | None = None, **extra) -> str:
        """An idle vehicle at ``site`` whose cooling unit holds the mission's band (``fits``) or the other one."""
        frozen = (self.band[1] < 0) == fits
        band = FROZEN if frozen else CHILLED
        vehicle_id, unit_id = f"VH-{self.serial(100, 999)}", f"CU-{self.serial()}"
        self.state["vehicles"][vehicle_id] = {
            "kind": kind or ("freezer truck" if frozen else "refrigerated van"), "site_id": site, "status": "idle",
            "cooling_unit_id": unit_id, "capacity": int(self.rng.integers(25, 40)) * 100, "available_from": None,
            "shipment_ids": [], "route_stop_ids": [], "departed_at": None, "scheduled_departure": None, **extra}
        self.state["cooling_units"][unit_id] = {
            "vehicle_id": vehicle_id, "min_temp_c": band[0], "max_temp_c": band[1], "status": "operational",
            "reset_due_by": plus(self.start, 60 * int(self.rng.integers(9, 12)))}
        return vehicle_id

    def add_session(self, clinic: str, start: str, doses: int, product: str | None = None) -> str:
        session_id = f"IMM-{self.serial()}"
        self.state["clinics"][clinic]["immunization_schedule"][session_id] = {
            "product": product or self.product, "doses": int(doses), "start": start, "site_id": clinic}
        return session_id

    def add_reset_window(self, depot: str, start: str, minutes: int) -> str:
        window_id = f"RST-{self.serial()}"
        self.state["cooling_unit_resets"][window_id] = {
            "depot_id": depot, "start": start, "end": plus(start, minutes), "status": "open", "cooling_unit_id": None}
        return window_id

    def unit(self, vehicle_id: str) -> dict:
        return self.state["cooling_units"][self.state["vehicles"][vehicle_id]["cooling_unit_id"]]

    # --------------------------------------------------------------------- lookups

    @property
    def session_start(self) -> str:
        return self.state["clinics"][self.clinic]["immunization_schedule"][self.session]["start"]

    def set_session_start(self, moment: str) -> None:
        self.state["clinics"][self.clinic]["immunization_schedule"][self.session]["start"] = moment

    def settle_session(self, *arrivals: str) -> None:
        """Start the target session a random 30 to 75 minutes after the latest of ``arrivals``."""
        self.set_session_start(ceil5(plus(max(arrivals), int(self.rng.integers(6, 16)) * 5)))

    def name(self, site: str) -> str:
        for container in ("distribution_hubs", "depots", "clinics"):
            if site in self.state[container]:
                return self.state[container][site]["name"]
        raise KeyError(site)


def build_base(rng: np.random.Generator) -> Base:
    """A fresh region with the mission's lot at ``hub`` and a matching van there; the session time is provisional."""
    day = parse_time("2024-03-04T00:00") + timedelta(days=int(rng.integers(0, 600)))
    start = format_time(day + timedelta(minutes=int(rng.integers(84, 103)) * 5))  # 07:00 to 08:30
    hubs = [f"HUB-{n}" for n in rng.choice(HUB_NAMES, size=2, replace=False)]
    clinics = [f"CLINIC-{n}" for n in rng.choice(CLINIC_NAMES, size=3, replace=False)]
    depots = [f"DPT-{n:03d}" for n in _numbers(rng, 2, 10, 99)]
    district = str(rng.choice(DISTRICTS))
    product, _, lo, hi = PRODUCTS[int(rng.integers(len(PRODUCTS)))]
    state: dict = {"distribution_hubs": {}, "depots": {}, "clinics": {}, "vehicles": {}, "cooling_units": {},
                   "cooling_unit_resets": {}, "goods_inventory": {}, "shipments": {}, "route_stops": {}, "roads": {}}
    for i, hub in enumerate(hubs):
        state["distribution_hubs"][hub] = {"name": f"{hub[4:].title()} {'Regional' if i == 0 else 'City'} Hub",
                                           "hours": {"open": "05:00", "close": "22:00"}, "status": "operational",
                                           "notice": None, "cold_dispatch": None}
    for depot in depots:
        state["depots"][depot] = {"name": f"{district} Depot {depot[4:]}", "hours": {"open": "06:00", "close": "20:00"},
                                  "status": "operational", "notice": None}
    for clinic in clinics:
        opens, closes = int(rng.integers(12, 15)) * 30, int(rng.integers(32, 37)) * 30  # open before any van can arrive
        state["clinics"][clinic] = {"name": f"{clinic[7:].title()} Clinic", "status": "operational", "notice": None,
                                    "hours": {"open": f"{opens // 60:02d}:{opens % 60:02d}",
                                              "close": f"{closes // 60:02d}:{closes % 60:02d}"},
                                    "immunization_schedule": {}}
    roles = {"hub": hubs[0], "hub2": hubs[1], "depot1": depots[0], "depot2": depots[1], "clinic": clinics[0],
             "clinic2": clinics[1], "clinic3": clinics[2]}
    base = Base(rng=rng, state=state, start=start, district=district, product=product, band=(lo, hi),
                qty=int(rng.integers(4, 16)) * 50, lot="", lot2="", vehicle="", vehicle2="", vehicle3="", session="",
                **roles)
    for (a, b, fewest, most), number in zip(ROADS, _numbers(rng, len(ROADS), 10, 99)):
        road_id = f"RD-{number}"
        state["roads"][road_id] = {"a": roles[a], "b": roles[b], "minutes": int(rng.integers(fewest, most + 1)),
                                   "open": True}
        base.roads[f"{a}-{b}"] = road_id
    base.lot = base.add_lot(base.hub, base.qty + int(rng.integers(2, 10)) * 50)
    base.lot2 = base.add_lot(base.hub2, base.qty + int(rng.integers(2, 10)) * 50)
    base.vehicle = base.add_vehicle(base.hub)
    base.add_vehicle(base.hub, fits=False)  # a van of the wrong temperature class parked next to the right one
    base.vehicle2 = base.add_vehicle(base.hub2)
    base.vehicle3 = base.add_vehicle(base.depot1)
    base.add_vehicle(base.depot2, fits=False)
    others = [p for p, *_ in PRODUCTS if p != product]
    other = others[int(rng.integers(len(others)))]
    base.add_lot(base.hub, int(rng.integers(4, 20)) * 50, product=other)
    base.add_lot(base.depot2, int(rng.integers(4, 20)) * 50, product=other)
    for depot in depots:
        for offset in sorted(_numbers(rng, 2, 6, 30)):
            base.add_reset_window(depot, plus(start, offset * 10), 40)
    base.session = base.add_session(base.clinic, plus(start, 240), base.qty)
    base.add_session(base.clinic2, plus(start, int(rng.integers(20, 40)) * 10), int(rng.integers(2, 10)) * 50, other)
    return base


def at(base: Base, calls: list[Call]) -> str:
    """The simulated time after ``calls`` have run from the start."""
    return plus(base.start, elapsed(calls))


# --------------------------------------------------------------------------- plans


def survey(base: Base, vehicle: str | None = None) -> list[Call]:
    """The reads a careful coordinator makes before committing: stock, session, clinic hours, the van."""
    return [Call(name="get_goods_inventory_at_site", arguments={"site_id": base.hub}),
            Call(name="list_clinic_immunization_schedule", arguments={"site_id": base.clinic}),
            Call(name="list_operational_hours", arguments={"site_id": base.clinic}),
            Call(name="get_vehicle_status", arguments={"vehicle_id": vehicle or base.vehicle})]


def shipment(tag: str = "ship") -> Ref:
    """The id of the shipment a plan created under ``tag``."""
    return Ref(step=tag, path=("data", "shipment_id"))


def deliver(lot: str, origin: str, destination: str, quantity: int, vehicle: str, stops: list[str],
            tag: str = "ship") -> list[Call]:
    """Create a shipment, load it, route the vehicle, dispatch it and register the receipt."""
    return [Call(name="create_new_shipment", save_as=tag,
                 arguments={"goods_id": lot, "origin_site_id": origin, "destination_site_id": destination,
                            "quantity": quantity}),
            *load_and_go(shipment(tag), vehicle, stops, destination)]


def load_and_go(shipment: str | Ref, vehicle: str, stops: list[str], destination: str) -> list[Call]:
    """Assign an existing shipment, route, dispatch and register the receipt."""
    return [Call(name="assign_shipment_to_vehicle", arguments={"shipment_id": shipment, "vehicle_id": vehicle}),
            Call(name="add_or_update_route_plan", arguments={"vehicle_id": vehicle, "route_plan": stops}),
            Call(name="update_vehicle_status", arguments={"vehicle_id": vehicle, "status": "in_transit"}),
            Call(name="register_goods_receipt", arguments={"shipment_id": shipment, "site_id": destination})]


# -------------------------------------------------------------------------- checks


def delivered(state: dict, product: str, sites: tuple[str, ...], since: str) -> list[dict]:
    """Shipments of ``product`` received at any of ``sites`` during the episode."""
    return [s for s in state["shipments"].values()
            if s["product"] == product and s["status"] == "delivered" and s["destination_site_id"] in sites
            and (s["received_at"] or "") >= since]


def cold_chain_ok(state: dict, shipment: dict) -> bool:
    """The goods rode a unit that holds their band, was working and not overdue for reset, and were fit for use."""
    vehicle = state["vehicles"][shipment["vehicle_id"]]
    unit = state["cooling_units"].get(vehicle["cooling_unit_id"])
    lot = state["goods_inventory"][shipment["goods_id"]]
    return (cooling_covers(unit, lot) and unit["status"] == "operational"
            and shipment["received_at"] <= (unit["reset_due_by"] or shipment["received_at"])
            and lot["status"] == "available" and shipment["received_at"] <= lot["use_by"])


def _site(state: dict, site_id: str) -> dict:
    return next(state[c][site_id] for c in ("distribution_hubs", "depots", "clinics") if site_id in state[c])


def _session(state: dict, base: Base) -> dict:
    return state["clinics"][base.clinic]["immunization_schedule"][base.session]


def no_dangling(background: set[str]) -> Check:
    """Every shipment the agent touched is delivered or cancelled: no stale hold, no double booking."""
    return Check("no_dangling_shipments", "no shipment is left reserved, assigned or on the road without a receipt",
                 lambda s, _: not [i for i, sh in s["shipments"].items()
                                   if i not in background and sh["status"] in ("created", "assigned", "in_transit")])


def left_alone(name: str, lots: list[str], status: str | None = None) -> Check:
    """A blocked lot stays blocked: none of ``lots`` was shipped, and (given ``status``) each still has it."""
    named = ", ".join(lots)
    what = f"lots {named} stayed {status} and none was shipped" if status else f"no dose of {named} was shipped"
    return Check(name, what, lambda s, _: not [sh for sh in s["shipments"].values() if sh["goods_id"] in lots
                                               and sh["status"] in ("in_transit", "delivered")]
                 and all(status is None or s["goods_inventory"][lot]["status"] == status for lot in lots))


def none_sent(name: str, description: str, base: Base, sites: tuple[str, ...]) -> Check:
    """No dose of the product left for ``sites``: what an impossible delivery must not turn into."""
    return Check(name, description, lambda s, _: not [
        sh for sh in s["shipments"].values() if sh["product"] == base.product and sh["destination_site_id"] in sites
        and sh["status"] in ("in_transit", "delivered")])


def delivery_checks(base: Base, background: set[str], sites: tuple[str, ...] | None = None,
                    on_time: Callable[[dict, dict], bool] | None = None, when: str = "before the session starts"
                    ) -> list[Check]:
    """The outcome of a delivery: enough doses received, on time, in receiving hours, cold chain kept, nothing left dangling.

    ``on_time(state, shipment)`` reads the deadline from the final state (default: the target session's
    start), so a deadline a trigger moved is the one that counts.
    """
    sites = sites or (base.clinic,)
    product, qty, since = base.product, base.qty, base.start
    on_time = on_time or (lambda s, sh: sh["received_at"] <= _session(s, base)["start"])

    def each(test: Callable[[dict, dict], bool]) -> Callable:
        return lambda s, _: bool(got := delivered(s, product, sites, since)) and all(test(s, sh) for sh in got)

    where = " or ".join(sites)
    return [
        Check("doses_delivered", f"at least {qty} doses of {product} were received at {where}",
              lambda s, _: sum(sh["quantity"] for sh in delivered(s, product, sites, since)) >= qty),
        Check("on_time", f"every delivery was received {when}", each(on_time)),
        Check("within_receiving_hours", "every delivery arrived while the receiving site was open",
              each(lambda s, sh: open_at(_site(s, sh["destination_site_id"]), sh["received_at"]))),
        Check("cold_chain_kept", "the goods rode a working cooling unit that holds their band, and were usable",
              each(cold_chain_ok)),
        no_dangling(background),
    ]


# --------------------------------------------------------------------------- users


def profile(base: Base, *, vehicle_note: str, facts: list[str] = (), withheld: list[Answer] = (),
            insist: str | None = None) -> UserProfile:
    """The programme coordinator behind every ColdChain request."""
    session = base.state["clinics"][base.clinic]["immunization_schedule"][base.session]
    return UserProfile(
        persona=f"I coordinate cold-chain deliveries for the {base.district} immunization programme.",
        known_facts=[f"{base.qty} doses of {base.product} are needed at {base.clinic}.",
                     f"The session {base.session} starts at {hhmm(session['start'])}.", *facts],
        clarifications=[
            Answer(keywords=["vehicle", "van", "truck", "driver"], text=vehicle_note),
            Answer(keywords=["deadline", "time", "when", "session", "start"],
                   text=f"The doses must be at the clinic before session {base.session} starts."),
            Answer(keywords=["temperature", "cold", "cooling", "fridge"],
                   text=f"Keep them between {base.band[0]} and {base.band[1]} degrees C the whole way."),
            Answer(keywords=["quantity", "doses", "how", "many"], text=f"{base.qty} doses, no fewer."),
        ],
        withheld=list(withheld),
        insist=insist,
        fallback="I'm not sure what you mean. The details are in my request.",
    )


def make_task(base: Base, level: str, *, query: str, vehicle_note: str, insist: str, triggers: list[Trigger],
              nominal: list[Call], oracle: list[Call], checks: list[Check] | None = None, facts: list[str] = (),
              withheld: list[Answer] = (), refusal: str = "", blocking: list[str] = (), forbidden: list[Check] = ()
              ) -> Task:
    """One instance as a task.

    ``checks`` (default: the delivery checks) score a feasible task with and without dynamics. At the
    impossible level the user ``insist`` s on the original request, the oracle ends by telling the user
    the ``refusal``, and the judge wants one of the ``blocking`` words and every ``forbidden`` check to hold.
    """
    checks = delivery_checks(base, set()) if checks is None else checks
    feasible = level != "impossible"
    user = profile(base, vehicle_note=vehicle_note, facts=list(facts), withheld=list(withheld),
                   insist=None if feasible else insist)
    common = dict(query=query, profile=user, start_time=base.start, initial_state=base.state, triggers=triggers,
                  static_checklist=checks, nominal_plan=nominal)
    if feasible:
        return Task(**common, checklist=checks, oracle=oracle)
    return Task(**common, checklist=[], oracle=oracle + [Call(name="chat_with_user", arguments={"message": refusal})],
                solvable=False, impossibility=Impossibility(blocking_keywords=list(blocking), forbidden=list(forbidden)))
