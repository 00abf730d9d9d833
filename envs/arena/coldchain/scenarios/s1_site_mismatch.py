"""S1 Site Mismatch: the goods or the reserved van are not where the plan assumes.

- easy: while the agent reads, the records catch up with an overnight rebalancing: the lot now sits in
  the cold room of the depot on the corridor, so the shipment starts there and the van picks it up on
  the way.
- medium: as the shipment is booked, the reserved van is moved to the city depot for an inspection; a
  route from there back to the regional hub arrives hours late, so the shipment is recreated at the
  city hub, next to where the van now is.
- hard: as medium, but the van was moved because its cooling unit is overdue for a defrost reset; the
  city hub's van is out, so the agent books and completes a reset at the city depot first (no load on
  the van keeps the cold chain before it).

Any usable stock in any van that holds the band will do (each such solution is an alternative).
- impossible: as the shipment is booked, the records show the lot transferred to a clinic that is
  closed today, and the city hub holds too few doses.
"""

from sttgym.clock import shift
from sttgym.envs.arena.coldchain.generator import DELIVERED, Author, Task, build_base, maybe

# Easy (while the agent reads), impossible (as the shipment is booked): where the records say the lot went (a role) and
# why; medium, hard: why the van was moved.
LOT_MOVED = {"easy": ("depot1", "transferred by the overnight rebalancing"),
             "impossible": ("clinic3", "transferred to {}")}
VAN_MOVED = {"medium": "a door-seal inspection", "hard": "a defrost reset of its overdue cooling unit"}


def build(author: Author, level: str) -> Task:
    r = build_base(author, level)
    call, unit, van_read = author.call, r.unit_of(r.vehicle), author.call.get_vehicle_status(vehicle_id=r.vehicle)
    booking = r.on_write("create_new_shipment", goods_id=r.lot)
    if level in LOT_MOVED:  # the records catch up
        site, why = r.roles(LOT_MOVED[level][0])[0], LOT_MOVED[level][1]
        triggers = [r.change("lot_relocated", f"the records show lot {r.lot} moved to {site}", r.lots(), r.set(
            ["goods_inventory", r.lot], site_id=site, note=why.format(site)), **r.cause(**booking))]
    else:  # the van is moved as the shipment is booked (hard: its unit is overdue for a reset, too)
        why = VAN_MOVED[level]
        overdue = {"status": "reset_required", "reset_due_by": r.start} if level == "hard" else {}
        triggers = [r.change("van_relocated", f"{r.vehicle} is moved to {r.depot2} for {why}", van_read, r.set(
            ["vehicles", r.vehicle], site_id=r.depot2, note=f"moved to {r.depot2} for {why}") + r.set(
            ["cooling_units", unit], **overdue), **booking)]
    fix = {"easy": lambda: maybe(r, r.stock_at(r.hub)) + r.ship(r.lot, r.depot1, r.vehicle), "medium": lambda: [
        r.lots()], "hard": lambda: [r.lots(), *maybe(r, r.vans_at(r.hub2)), call.get_cooling_unit_status(
            cooling_unit_id=unit), call.list_depot_maintenance_schedule(depot_id=r.depot2)],
           "impossible": lambda: [call.list_operational_hours(site_id=r.clinic3)]}[level]()
    oracle = r.respond(r.lots() if level in LOT_MOVED else van_read, then=fix, phase="ship")
    if level == "hard":  # the city hub's van is out: the relocated van is serviced first, in a window at the depot
        r.state["vehicles"][r.vehicle2]["available_from"] = shift(r.start, 60 * 8)
        window = r.add_reset_window(r.depot2, r.later(r.run(oracle, triggers).end, 1, 3), author.integer(6, 8) * 5)
        oracle += [call.schedule_cooling_unit_reset(cooling_unit_id=unit, reset_window_id=window),
                   call.record_cooling_unit_reset(reset_window_id=window, action="completed")]
    if level in VAN_MOVED:  # the doses are shipped from the city hub, in the relocated van
        oracle = r.recounted(oracle + r.ship(r.lot2, r.hub2, r.vehicle, tag="city"), triggers)
    if level == "impossible":  # moved to a clinic closed today, and the city hub is short
        r.state["clinics"][r.clinic3].update(status="closed", notice="Closed today for refurbishment")
        r.state["goods_inventory"][r.lot2]["quantity"] = r.qty - author.integer(1, r.qty // 50 - 1) * 50
    return r.task(
        triggers, oracle, milestones=r.ladder(triggers[0].name), blocking=[r.clinic3, "closed", "transferred"],
        forbidden=[r.none_sent("no_short_delivery", "no short delivery was sent to the clinic", DELIVERED)],
        vehicle_note=f"{r.vehicle} is reserved for us; another van holding {r.band[0]} to {r.band[1]} degrees C would "
                     "be fine too.",
        refusal=f"I can't ship the {r.qty} doses: lot {r.lot} was transferred to {r.clinic3}, which is closed today, "
                f"and {r.hub2} holds only {r.state['goods_inventory'][r.lot2]['quantity']} doses, short of what you "
                "need.")
