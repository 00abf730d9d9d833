"""ST1 Resource Shift: fleet control pulls trucks into a peak-demand zone, taking the one booked at the dock.

The stock is reserved and a dock slot booked for the warehouse's truck. Demand peaks in another
zone and fleet control reallocates trucks there (visible in ``get_truck``: status reallocated,
its slot freed). Easy: only the booked truck goes; another truck at the warehouse takes the slot
time after it. Medium: every truck at the warehouse goes; one from the sister warehouse drives over
for a later slot. Hard: the peak takes every truck in the region, and the two left elsewhere are
small: the reservation is split and each drives over for its own slot. Impossible: every truck is
reallocated but one, whose driver's shift ends before it could reach the store. Where a truck is to be
replaced there are three that could take its load, and the user asked to be consulted before a switch:
their store is a secure site that admits only the drivers on its gate list, one of the three (drawn, and
shown by no tool), which they name when asked. The user has the gate list, and asks to be consulted, on
every level alike (on the impossible one the list names the last truck's driver).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sttgym.clock import format_time
from sttgym.envs.arena.warehouse.generator import Answer, Author, Task, base, make_task, settle_due

CHOICES = 3  # trucks that could replace the lost one; the user's gate list admits one
CONSULT = "If it comes to another truck, ask me first: our store has a requirement about who delivers."


def build(author: Author, level: str) -> Task:
    net, order, home, truck, slot = base(author)
    pred, q = author.pred, order.quantity
    others = net.nearest(home, [w for w in net.warehouses + [net.hub] if w != home])
    sister, far = others[0], others[1:]
    plan = order.nominal(home, truck, slot)
    zone = net.state["warehouses"][sister]["region"]
    note = f"reallocated to the {zone} peak-demand zone by fleet control"
    pulled = [truck]

    def pull(*trucks: str) -> list:
        return [op for t in trucks for op in [author.op.drop_truck_slots(truck_id=t)]
                + net.sets("trucks", t, status="reallocated", note=note)]

    if level != "impossible":  # drivers the user can tell apart, none the booked truck's
        booked = net.state["trucks"][truck]["name"].split("'s ")[0]
        drivers = [d for d in net.drivers(CHOICES + 2) if d != booked][:CHOICES + 1]
    if level == "easy":
        spares = [net.add_truck(home, q + 10 * author.integer(0, 5), driver=d) for d in drivers[:CHOICES]]
    elif level == "medium":
        pulled.append(net.add_truck(home, q + 10 * author.integer(0, 5)))
        back = format_time(net.start + timedelta(minutes=5 * author.integer(8, 16)))  # from a morning run first
        spares = [net.add_truck(sister, q + 10 * author.integer(0, 5), available_from=back, driver=d)
                  for d in drivers[:CHOICES]]
    elif level == "hard":
        pulled.append(net.add_truck(sister, q + 10 * author.integer(0, 5)))
        small = 10 * author.integer(q // 20 + 1, q // 10 - 2)
        fixed = net.add_truck(far[0], small, 7.5, driver=drivers[CHOICES])
        spares = [net.add_truck(far[-1], q - small + 10 * author.integer(0, 3), driver=d) for d in drivers[:CHOICES]]
    else:
        pulled.append(net.add_truck(home, q + 10 * author.integer(0, 5)))
        last = net.add_truck(sister, q + 10 * author.integer(0, 5))
    triggers = [net.on_write("fleet_reallocation", f"fleet control reallocates {', '.join(pulled)} to the {zone} "
                             "peak", "book_dock_slot", pull(*pulled), ("get_truck", {"truck_id": truck}),
                             when=pred.slot_booked_for(truck_id=truck, warehouse_id=home))]
    stale = plan.upto("book")
    seen = [order.truck(truck), order.trucks()]

    def gate_list(allowed: list[str]) -> Answer:
        """The store's gate list: the drivers of ``allowed`` besides the booked truck's."""
        names = [net.state["trucks"][t]["name"].split("'s ")[0] for t in allowed]
        return Answer(keywords=["driver", "drivers", "truck", "trucks", "gate", "security", "requirement", "require",
                                "prefer", "preference"],
                      text=f"Our store is a secure site: only drivers on our gate list get in, and besides the driver "
                           f"of {truck} that is {' and '.join(names)}.")

    def recovery(spare: str, asked: list) -> list:
        """The oracle's recovery with ``spare`` for the lost truck, after the question ``asked``."""
        look = seen + asked + [order.slots(home)]
        if level in ("easy", "medium"):
            at = net.time_after(stale + look, triggers)
            if level == "medium":
                look += [order.truck(spare), author.call.get_route(origin_id=sister, destination_id=home,
                                                                   truck_id=spare)]
                at = max(at, datetime.fromisoformat(back)) + timedelta(minutes=net.minutes(sister, home, 18))
            later = net.slot(home, at)
            return stale + look + [order.book(later, spare), order.dispatch(spare, later)]
        look.append(order.split(small, "r0", "r1"))
        fix, used = [], []
        for helper, step in zip((fixed, spare), ("r1", "r0")):
            site = net.state["trucks"][helper]["location"]
            fix.append(order.route(site, helper))
            ready = net.time_after(stale + look + fix, triggers) + timedelta(minutes=net.minutes(
                site, home, net.state["trucks"][helper]["tonnes"]))
            pick = net.slot(home, ready)
            while pick in used:
                pick = net.slot(home, net.state["dock_slots"][pick]["end"])
            used.append(pick)
            fix += [order.book(pick, helper), order.dispatch(helper, pick, step)]
        return stale + look + fix

    if level == "impossible":
        # The one truck left could load at the earliest slot it reaches, but its driver would pass the shift end.
        ready = net.start + timedelta(minutes=30 + net.minutes(sister, home))
        trip = net.minutes(home, order.store)
        earliest = max(ready, net.start + timedelta(minutes=20))
        net.state["trucks"][last]["shift_end"] = format_time(earliest + timedelta(minutes=trip // 2))
        oracle = stale + seen + [order.truck(last), order.route(home)] + order.refuse(
            f"I can't ship {order.oid}: fleet control has reallocated {', '.join(pulled)} to the {zone} peak, and "
            f"the only truck left, {last}, has a driver whose shift ends at "
            f"{net.state['trucks'][last]['shift_end'][11:]}, before it could reach {order.store}.",
            ["fleet_reallocation"], ["reallocated", last, net.state["trucks"][last]["shift_end"],
                                     net.state["trucks"][last]["shift_end"][11:], "shift ends"])
        settle_due(order, [], triggers, plan.calls)
        order.require(gate_list([last]))
    else:
        want = spares[author.integer(0, CHOICES - 1)]
        gate = [fixed, want] if level == "hard" else [want]
        asked = [order.ask(
            f"Fleet control has reallocated truck {truck} to the {zone} peak. Trucks {', '.join(spares)} could take "
            "the load: what is your requirement about the driver?", gate_list(gate),
            author.pred.ships_only(order_id=order.oid, key="truck", among=gate),
            f"on {' and '.join(gate)}, whose drivers are on the store's gate list")]
        oracle = recovery(want, asked)
        settle_due(order, oracle, triggers, plan.calls,
                   alternatives=[recovery(t, asked) for t in spares if t != want])
    query = (f"Hi, {order.record['customer']} transport desk. Please ship {order.what}, from {net.name(home)} "
             f"({home}): reserve it, book a dock slot for truck {truck} and dispatch. {CONSULT}")
    return make_task(order, query, triggers, plan, oracle, "arranging a weekly delivery", {
        ("fleet", "vehicle", "peak"): "Any vehicle is fine as long as everything arrives on time and its driver meets "
                                      "my requirement."},
        insist=f"All {q} units must be at {order.store} by {order.record['due_by']}, brought by a driver who meets my "
               "requirement: ask me about it.", consult=CONSULT, level=level)
