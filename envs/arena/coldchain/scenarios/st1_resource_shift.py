"""ST1 Resource Shift: a demand peak pulls refrigerated vans across the region to a vaccination drive.

The dispatch centre pools vans for a mass vaccination drive at another clinic: a pooled van is
reserved for the drive and can carry nothing else.

- easy: while the agent is still reading, the user's van is pooled; the van at the depot on the
  regional side takes the load from the hub instead.
- medium: the pooling of the user's van is announced as the shipment is booked and carried out once
  the shipment is loaded and routed, when the van was due to leave; the shipment moves to the depot
  van, which is routed through the hub.
- hard: as medium, and a second wave then takes the depot van too; with no van left near the regional
  hub, the shipment is cancelled and the city hub ships its own stock in its own van.
- impossible: as the shipment is booked, every van that can hold the product's temperature band is
  pooled; only vans of the wrong temperature class remain.

Any van that is not pooled and holds the band will do, with any usable stock.
"""

from sttgym.envs.arena.coldchain.generator import COLD, Author, Task, build_base, maybe

# The vans pooled at once (roles): easy while the agent reads, impossible as the shipment is booked.
POOLED = {"easy": ["vehicle"], "impossible": ["vehicle", "vehicle2", "vehicle3"]}


def build(author: Author, level: str) -> Task:
    r = build_base(author, level)
    call, pred = author.call, author.pred
    drive, due = f"pooled for the mass vaccination drive at {r.clinic3}", r.run(r.plan.upto("route")).end
    note, van_read = f"to be {drive} when it is due to leave", call.get_vehicle_status(vehicle_id=r.vehicle)

    def pool(name: str, vans: list[str], seen=van_read, **when):
        return r.change(name, f"{', '.join(vans)} {drive}", seen, r.set_all("vehicles", vans, status="reserved",
                                                                            note=drive), **when)

    booking = r.on_write("create_new_shipment", goods_id=r.lot)
    if level in POOLED:
        triggers = [pool("vans_pooled", r.roles(*POOLED[level]), **r.cause(**booking))]
    else:  # announced as the shipment is booked, carried out when the van was due to leave
        triggers = [r.change("pooling_announced", f"{r.vehicle} will be {drive}", van_read, r.set(
            ["vehicles", r.vehicle], note=note), **booking),
            pool("vans_pooled", [r.vehicle], when=pred.all_of(preds=[
                pred.field_equals(path=["vehicles", r.vehicle, "note"], value=note),
                pred.any_of(preds=[pred.time_reached(moment=due), pred.calling(
                    tool="update_vehicle_status", arguments={"vehicle_id": r.vehicle})])]))]
    if level == "hard":  # a second wave then takes the depot van
        triggers.append(pool("second_wave", [r.vehicle3], r.vans_at(r.depot1),
                             when=pred.field_equals(path=["vehicles", r.vehicle, "status"], value="reserved")))
    depot_vans = [call.list_sites(), r.vans_at(r.depot1)]
    oracle = {  # easy: the depot van takes the load; medium: the loaded shipment moves to it, routed through the hub
        "easy": lambda: r.respond(van_read, then=[*maybe(r, r.vans_at(r.hub)), *depot_vans]
                                  + r.ship(r.lot, r.hub, r.vehicle3)),
        "medium": lambda: r.plan.upto("route") + [van_read, *depot_vans] + r.ship(r.lot, r.hub, r.vehicle3,
                                                                                  booked=True),
        "hard": lambda: r.respond(van_read, *depot_vans, then=r.source()),
        "impossible": lambda: r.respond(van_read, phase="ship", then=[call.list_sites()] + [
            r.vans_at(s) for s in (r.hub, r.hub2, r.depot1, r.depot2)])}[level]()
    oracle = r.recounted(oracle, triggers)
    return r.task(
        triggers, oracle, blocking=["reserved", "pooled", "vaccination drive"],
        milestones=r.ladder("vans_pooled", unwind=level == "hard"),  # medium: the stale shipment simply moves
        refusal=f"I can't ship the doses safely: every van that holds {r.band[0]} to {r.band[1]} degrees C "
                f"({r.vehicle}, {r.vehicle2}, {r.vehicle3}) is now reserved for the vaccination drive at {r.clinic3}, "
                "and the vans that are left cannot keep that temperature.",
        forbidden=[r.none_sent("no_wrong_temperature_van", "no dose left in a van of the wrong temperature class",
                               COLD)])
