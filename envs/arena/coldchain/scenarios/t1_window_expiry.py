"""T1 Window Expiry: the hub's provisional allocation of the user's doses lapses before it is used.

The user holds a provisional allocation (a ``held`` shipment with a ``hold_expires`` time) at the
regional hub. The hub cuts the hold short for a priority order; the world lapses a hold once the
clock passes its expiry, and a waitlisted order then takes the stock it freed.

- easy: the hold is cut while the agent is still reading; the lot still has free doses, so a fresh
  shipment from the same lot replaces the lapsed one.
- medium: the cut is announced as the hold is loaded but only bites minutes later, after the hold was
  routed; the waitlisted order takes the regional stock, so the lapsed hold must be cancelled and the
  doses sourced at the city hub instead (the van drives there).
- hard: as medium, but the detour to the city hub runs the van past its cooling unit's reset time;
  the city hub's own van has to carry the doses.
- impossible: as medium, the hold lapses and the waitlisted order takes the regional stock, and the
  only other lot expires before the session.

Any usable stock in any van that holds the band will do.
"""

from sttgym.clock import floor_to, hhmm, minutes_between, shift
from sttgym.envs.arena.coldchain.generator import COLD, Author, Plan, Task, build_base, deliver, survey


def build(author: Author, level: str) -> Task:
    r = build_base(author, level)
    call, op, stock = author.call, author.op, r.stock_at(r.hub)
    hold = r.add_shipment(r.clinic, "held", hold_expires=shift(r.start, 60 * author.integer(5, 7)))
    read_hold, expires = call.get_shipment_journey_status(shipment_id=hold), ["shipments", hold, "hold_expires"]
    r.plan = Plan(read=survey(r, first=read_hold), **deliver(r, r.lot, r.hub, r.vehicle, [r.hub, r.clinic], held=hold))
    # Easy: cut while the agent still reads; else announced as the hold is loaded, biting minutes later.
    triggers = [r.change("hold_cut", f"the hub cuts hold {hold} short for a priority order", read_hold, [
        op.set_field(path=expires, value=r.moment) if r.early else op.set_time_from_now(
            path=expires, minutes=author.integer(1, 4))], **r.cause(**r.on_write("assign_shipment_to_vehicle",
                                                                                  shipment_id=hold)))]
    if level != "easy":  # another clinic's order waits for the regional lot and takes it the moment the hold lapses
        order = r.add_shipment(r.clinic3, "waitlisted", r.state["goods_inventory"][r.lot]["quantity"] - author.integer(
            0, r.qty // 50 - 1) * 50)
        triggers.append(r.change("waitlist_served", f"the lapse frees lot {r.lot} and order {order} takes it", stock,
                                 r.set(["shipments", order], status="created"), when=author.pred.hold_lapsed(
                                     shipment_id=hold)))
    unit = r.unit_of(r.vehicle)
    fix = {"easy": lambda: r.ship(r.lot, r.hub, r.vehicle), "medium": lambda: r.source(r.vehicle),
           "hard": lambda: r.source(r.vehicle2, call.get_cooling_unit_status(cooling_unit_id=unit)),
           "impossible": lambda: [r.lots()]}[level]()
    oracle = r.recounted(r.respond(read_hold, stock, then=fix, cancel=hold), triggers)
    if level == "hard":  # the user's van would make the direct run, not the detour through the city, before its
        direct = r.arrival(r.plan.calls)  # defrost is due
        detour = minutes_between(direct, r.arrival(r.respond(read_hold, stock, then=r.source(r.vehicle), cancel=hold),
                                           triggers))
        r.state["cooling_units"][unit]["reset_due_by"] = floor_to(shift(direct, detour * author.integer(3, 7) // 10))
    start, lot2 = r.settle_after(oracle, triggers), r.state["goods_inventory"][r.lot2]
    if level == "impossible":  # the only other lot expires before the session
        lot2["use_by"] = floor_to(shift(start, -author.integer(4, 11) * 10))
    return r.task(
        triggers, oracle, blocking=[hhmm(lot2["use_by"]), r.lot2, "lapsed", "waitlisted"],
        ignore=[i for i, x in r.state["shipments"].items() if x["status"] == "waitlisted"],  # another clinic's order
        milestones=r.ladder("hold_cut", stale=author.pred.field_equals(path=["shipments", hold, "status"],
                                                                     value="cancelled")),
        query=f"Hold {hold} reserves doses of {r.product} (lot {r.lot}) at {r.hub} for session {r.session} at "
              f"{r.clinic}, which starts on {start[:10]} at {hhmm(start)}. Please load the hold onto our van "
              f"{r.vehicle}, get it to the clinic and register the receipt when it arrives.",
        insist=r.insist("There is no other date or product."),
        refusal=f"I can't get {r.qty} usable doses to {r.clinic} in time: hold {hold} was cut short and lapsed, the "
                f"rest of lot {r.lot} went to a waitlisted order, and lot {r.lot2} at {r.hub2} is only usable until "
                f"{hhmm(lot2['use_by'])}, before the session starts.",
        forbidden=[r.unshipped([r.lot2], "no_expiring_lot_shipped", "expires before the session", COLD)])
