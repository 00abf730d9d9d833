"""T3 Quota Reset: a hub's cold-dispatch quota resets at a shift change that comes before the van loads.

Hubs release refrigerated loads against a per-shift quota, counted at the time a vehicle loads at the
dock; the next shift's slots are already booked by standing orders, so a load that slips past the
shift change has no slot.

- easy: while the agent is still reading, the regional hub's shift change is brought forward to
  minutes from now; the doses leave from the city hub instead.
- medium: the shift change is brought forward as the shipment is booked and lands after the shipment
  was loaded and routed but before the van leaves; the shipment is cancelled and recreated at the
  city hub.
- hard: as medium, but the city hub's shift also ends soon and its own van is back only after it;
  the user's van cannot reach the city dock in time either, so the van from the city depot loads there.
- impossible: as medium, the regional hub's shift change comes forward, and the city hub has no slot
  left in this shift or the next.

At medium, hard and impossible the city hub holds two lots of the product, and only one belongs to a batch
the user's programme may use (``Region.rival_lot``): the request asks to be consulted first, and the user
states the batches only when asked. Otherwise any usable stock in any van that holds the band will do.
"""

from sttgym.clock import hhmm, shift
from sttgym.envs.arena.coldchain.generator import Author, Plan, Task, build_base, maybe


def build(author: Author, level: str) -> Task:
    r = build_base(author, level)
    call, op, hubs = author.call, author.op, r.state["distribution_hubs"]
    hours = call.list_operational_hours(site_id=r.hub)
    r.plan = Plan(**{**r.plan.phases, "read": r.plan["read"] + [hours]})
    loading = r.run(r.plan.upto("route")).end  # the van is parked at the dock: it loads when dispatched
    hubs[r.hub]["cold_dispatch"] = {"shift_ends": r.later(loading, 12, 24), "remaining": author.integer(1, 2),
                                    "next_shift_remaining": 0}
    hubs[r.hub2]["cold_dispatch"] = {"shift_ends": r.later(loading, 18, 29), "remaining": author.integer(2, 3),
                                     "next_shift_remaining": author.integer(1, 2)}
    ends, new_end = ["distribution_hubs", r.hub, "cold_dispatch", "shift_ends"], shift(r.moment, author.integer(1, 3))
    # Easy: posted while the agent still reads; else as the shipment is booked, landing before the van can leave.
    triggers = [r.change("shift_change_forward", f"{r.hub}'s shift change comes forward", hours, [
        op.set_field(path=ends, value=new_end) if r.early else op.set_time_from_now(path=ends, minutes=author.integer(
            1, 6)), *r.set(["distribution_hubs", r.hub], notice="Staff shortage: shift change brought forward; the "
                           "next shift's cold-dispatch slots are all booked.")],
        **r.cause(**r.on_write("create_new_shipment", origin_site_id=r.hub)))]
    city_hours = maybe(r, call.list_operational_hours(site_id=r.hub2))
    van = r.add_vehicle(r.depot2) if level == "hard" else r.vehicle2  # hard: the city depot's van loads at the hub
    ours, ask = r.lot2, []
    if level != "easy":  # two lots at the city hub: the user says which batches the programme may use
        ours, question = r.rival_lot()
        ask = [question]
    else:  # one: the batch rule decides nothing
        r.rule = r.allocation(ours)
    fix = {"medium": lambda: r.source(None, *city_hours, *ask, lot=ours),
           "hard": lambda: r.source(van, *city_hours, call.list_sites(), r.vans_at(r.depot2), *ask, lot=ours),
           "impossible": lambda: [r.lots(), call.list_operational_hours(site_id=r.hub2)]
           }.get(level, lambda: r.source(None, *city_hours))()
    oracle = r.recounted(r.respond(hours, then=fix), triggers)
    if level == "hard":  # the city shift ends soon after the depot van docks, and the city hub's van is back later
        dock = next(s["planned_arrival"] for s in r.run(oracle, triggers).state["route_stops"].values()
                    if s["vehicle_id"] == van and s["site_id"] == r.hub2)
        hubs[r.hub2]["cold_dispatch"].update(shift_ends=r.later(dock, 3, 6), next_shift_remaining=0)
        r.state["vehicles"][r.vehicle2]["available_from"] = r.later(hubs[r.hub2]["cold_dispatch"]["shift_ends"], 2, 5)
    if level == "impossible":  # and the city hub has no slot left
        hubs[r.hub2]["cold_dispatch"].update(remaining=0, next_shift_remaining=0)
    r.settle_after(oracle, triggers)
    return r.task(
        triggers, oracle, blocking=["shift change", "no cold-dispatch slot", "no slot"],
        milestones=r.asked("shift_change_forward") + r.ladder("shift_change_forward", stale={"origin_site_id": r.hub}),
        insist=r.insist("It has to be today's session.", stock="stock our programme may use"),
        refusal=f"I can't dispatch the doses today: {r.hub} brought its shift change forward and its next shift has "
                f"no cold-dispatch slot, and {r.hub2} has no slot left this shift or the next.")
