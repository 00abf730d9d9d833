"""S2 Dependency Block: a safety lockdown at the hub halts every dispatch that depends on it.

The user's home depot has no car of the class, so one is to be driven over from the hub and
booked there. A safety inspection locks the hub down (visible in ``get_depot_info``): nothing
may leave it. Easy: the lockdown starts as the car is dispatched; a car comes from the sister
depot instead. Medium: it starts after the car has left and the car is recalled to the hub,
which shows only when the booking is confirmed; another car must be driven over and put on
the booking. Hard: the lockdown widens to the sister depot too, so a car comes, refuelled,
from across town. Impossible: the hub holds the only free car of the class.
"""

from __future__ import annotations

from sttgym.authoring import Author, Plan
from sttgym.envs.arena.carrental.generator import Request, car, make_task, new_city, one
from sttgym.task import Task

NOTICE = "Safety inspection: no vehicle may leave or be handed out"


def build(author: Author, level: str) -> Task:
    city = new_city(author)
    s, call, pred, op = city.state, author.call, author.pred, author.op
    depot = one(author, city.depots_in("residential"))
    hub, sister = (city.depots_in("business")[int(i)] for i in author.rng.permutation(2))
    far = one(author, city.depots_in("airport"))
    pickup, ret = city.trip()
    first = city.add_vehicle(hub, city.focus)
    city.afford(depot, city.focus, pickup, ret)
    req = Request(city, depot, pickup, ret)
    plan = Plan(look=[req.search(hub), req.route(hub)], move=[req.move(first)],
                book=[req.hold(first)] + ([req.quote()] if level == "medium" else []), confirm=[req.confirm()])

    def lockdown(site: str) -> list:
        return [op.set_field(path=["depots", site, "status"], value="locked_down"),
                op.set_field(path=["depots", site, "notice"], value=NOTICE)]

    info = call.get_depot_info(depot_id=hub)
    if level == "medium":  # the car is caught on the road and recalled
        triggers = [city.trigger(
            "hub_lockdown", f"a safety inspection locks down {hub} and recalls {first} from the road",
            pred.all_of(preds=[pred.in_transit(vehicle_id=first),
                               pred.has_live_booking(customer=city.user, vehicle_id=first)]),
            lockdown(hub) + [op.set_field(path=["vehicles", first, "depot"], value=hub),
                             op.set_field(path=["vehicles", first, "available_from"], value=None)],
            "get_vehicle_status", {"vehicle_id": first}, activation=["hold_vehicle"], timing="after")]
    else:
        triggers = [city.trigger(
            "hub_lockdown", f"a safety inspection locks down {hub} as {first} is dispatched",
            pred.all_of(preds=[pred.call_argument(name="vehicle_id", value=first),
                               pred.field_equals(path=["vehicles", first, "depot"], value=hub)]),
            lockdown(hub), "get_depot_info", {"depot_id": hub}, activation=["transfer_vehicle"])]

    impossible = None
    if level == "easy":
        spare = city.add_vehicle(sister, city.focus)
        oracle = plan.upto("move") + [info, req.depots(), req.search(sister), req.move(spare), req.hold(spare),
                                      req.confirm()]
    elif level == "medium":
        spare = city.add_vehicle(sister, city.focus)
        oracle = plan.upto("book") + [req.status(first), info, req.depots(), req.search(sister), req.move(spare),
                                      req.swap(spare), req.confirm()]
    elif level == "hard":
        city.add_vehicle(sister, city.focus)
        spare = city.add_vehicle(far, city.focus, fuel=author.integer(8, 20))
        triggers.append(city.trigger(
            "lockdown_widens", f"the inspection widens to {sister}", pred.field_equals(
                path=["depots", hub, "status"], value="locked_down"), lockdown(sister),
            "get_depot_info", {"depot_id": sister}))
        oracle = plan.upto("move") + [info, req.depots(), req.search(sister), call.get_depot_info(depot_id=sister),
                                      req.search(far), req.route(far), call.refuel_vehicle(vehicle_id=spare),
                                      req.move(spare), req.hold(spare), req.confirm()]
    else:
        city.add_vehicle(sister, city.focus, status="maintenance")
        oracle = plan.upto("move") + [info, req.depots(), req.search(sister), req.tell(
            f"I'm sorry, I can't get {car(city.focus)} to {depot} for you: the hub {hub}, which has the only free "
            f"one, is now locked_down for a safety inspection and no vehicle may leave it.")]
        impossible = req.refusal(["hub_lockdown"], ["locked_down"])

    name = s["customers"][city.user]["name"]
    query = (f"Hello, {name} (customer {city.user}). My local depot {city.name(depot)} ({depot}) has no "
             f"{city.focus} on site, and they told me one can be driven over from the {city.name(hub)} hub ({hub}). "
             f"Please have {car(city.focus)} brought over and book it for me, pickup at {depot} {pickup}, return "
             f"there {ret}.")
    answers = {("hub", "depot", "another", "other", "elsewhere", "different"):
               f"Any depot can send the car, as long as I collect it at {depot}.",
               ("car", "vehicle"): f"Any {city.focus} will do."}
    return make_task(req, query, triggers, plan.calls, oracle, "a customer of a suburban depot", answers, impossible,
                     insist=f"I can only collect at {depot} at {pickup}; please don't change that.")
