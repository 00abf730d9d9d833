"""T2 Priority Reorder: an emergency moves the clinic's deadline earlier, invalidating the planned run.

- easy: while the agent is still reading, the session is pulled earlier for an outbreak response; the
  user's van is still out on another run and would arrive too late, so the idle van parked next to it
  takes the load.
- medium (the paper's worked example): once the van is on the road, an emergency order cuts the
  clinic's receiving hours (a guarded trigger, shown by the clinic's hours); the van can no longer
  arrive in time, so it is recalled, its shipment cancelled, and the doses sent from the city hub.
- hard: as medium, and the same emergency then requisitions the city hub's van; the doses leave
  the city hub in the van from the city depot; then the late registrations (``Region.recounted``).
- impossible: as the shipment is booked, the session is pulled so early that no stock anywhere can reach
  the clinic before it.

At medium, hard and impossible the city hub holds two lots of the product, and only one belongs to a batch
the user's programme may use (``Region.rival_lot``): the request asks to be consulted first, and the user
states the batches only when asked. Otherwise any usable stock in any van that holds the band will do.
"""

from sttgym.clock import floor_to, hhmm, shift
from sttgym.envs.arena.coldchain.generator import ON_TIME, Author, Task, build_base, maybe


def build(author: Author, level: str) -> Task:
    r = build_base(author, level)
    call, pred = author.call, author.pred
    schedule, hours = (read(site_id=r.clinic) for read in (call.list_clinic_immunization_schedule,
                                                           call.list_operational_hours))
    if level in ("medium", "hard"):  # its driver starts later in the morning: the city run has room to beat the cut
        r.state["vehicles"][r.vehicle]["available_from"] = r.later(r.start, 6, 9)  # (and the top-up)
    r.settle(r.arrival(r.plan.calls))
    blocking = []

    def pulled(new_start: str) -> list:
        """An outbreak response takes the morning: the session moves earlier, while the agent still reads (easy)
        or as the shipment is booked (impossible)."""
        return [r.change("session_pulled_earlier", f"session {r.session} moves to {hhmm(new_start)}", schedule,
                         r.set(r.session_path, start=new_start, note="moved earlier: outbreak response first"),
                         **r.cause(**r.on_write("create_new_shipment", goods_id=r.lot)))]

    if level == "easy":  # the user's van is back from its morning run only after the idle van beside it has left
        spare = r.add_vehicle(r.hub)
        oracle = r.respond(schedule, then=[r.vans_at(r.hub)] + r.ship(r.lot, r.hub, spare))
        r.state["vehicles"][r.vehicle]["available_from"] = r.later(r.run(oracle).end, 8, 13)
        late = r.arrival(r.plan.calls)  # the user's van, once back
        r.settle(late)
        new_start = floor_to(shift(late, -5))
        triggers = pulled(new_start)
        assert r.arrival(oracle) < new_start, "the spare van must make the new start"
        milestones, r.rule = r.ladder("session_pulled_earlier"), r.allocation(r.lot2)  # the batch rule, no rival
    elif level == "impossible":  # earlier than the city hub's van could get there had it been loaded at the start
        new_start = floor_to(shift(r.arrival(r.ship(r.lot2, r.hub2, r.vehicle2)), -5))
        triggers, milestones, blocking = pulled(new_start), [], [hhmm(new_start), "moved earlier", "outbreak"]
        r.rival_lot()  # the programme's stock rule, as at medium and hard (the user answers alike)
        oracle = r.respond(schedule, then=[r.lots(), r.travel(r.hub2)])
    else:  # receiving closes before the van could arrive even had it left without a single read
        close = hhmm(floor_to(shift(r.arrival(r.plan.without("read").calls), -5)))
        triggers = [r.change(
            "receiving_hours_cut", f"an emergency order closes {r.clinic}'s receiving at {close}", hours,
            r.set(["clinics", r.clinic], notice=f"Emergency order: receiving closes at {close} today") +
            r.set(["clinics", r.clinic, "hours"], close=close), mode="conditional_guarded", timing="after",
            when=pred.on_road_to(site_id=r.clinic, product=r.product),
            recovery=pred.planned_to_arrive_by(site_id=r.clinic, product=r.product, deadline=f"{r.start[:11]}{close}"))]
        van, find = r.vehicle2, []
        if level == "hard":  # the same emergency takes the city hub's van; the city depot's van loads there instead
            van, find = r.add_vehicle(r.depot2), [call.list_sites(), r.vans_at(r.depot2)]
            triggers.append(r.change(
                "city_van_requisitioned", f"the emergency order requisitions {r.vehicle2} at {r.hub2}",
                r.vans_at(r.hub2), r.set(["vehicles", r.vehicle2], status="reserved", note="requisitioned by "
                                         "emergency order"),
                when=pred.field_equals(path=["clinics", r.clinic, "hours", "close"], value=close)))
        ours, ask = r.rival_lot()
        oracle = r.recounted(r.respond(hours, phase="go", recall=True,
                                       then=maybe(r, r.travel(r.hub)) + r.source(van, *find, ask, lot=ours)), triggers)
        assert hhmm(r.arrival(oracle, triggers)) <= close, "the city run must beat the new closing"
        milestones = [*r.asked("receiving_hours_cut"), *r.ladder("receiving_hours_cut")]
    return r.task(
        triggers, oracle, milestones=milestones, blocking=blocking,
        insist=r.insist("The session cannot move.", stock="stock our programme may use"),
        refusal=f"I can't meet session {r.session}: it was moved earlier to {(blocking or [''])[0]}, and even the "
                f"closest stock, at {r.hub2}, cannot be loaded and driven to {r.clinic} before then.",
        forbidden=[r.none_sent("no_late_delivery", "nothing was sent that could only arrive after the session",
                               ON_TIME)])
