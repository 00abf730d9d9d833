"""The collateral gate: a final state may change only what the task's own solutions change."""

import numpy as np

from sttgym.authoring import Author
from sttgym.clock import Clock
from sttgym.footprint import collateral, footprint
from sttgym.schema import Op, Pred
from sttgym.task import Call, Task
from sttgym.tools import fail, ok, tool
from sttgym.triggers import Observable, Trigger
from sttgym.user import UserProfile
from sttgym.world import World

START = "2024-01-01T08:00"


class Desk(World):
    domain = "Desk"
    inert = {"bookings": {"status": ["cancelled"]}}

    @tool(mutates=True)
    def book(self, room_id: str) -> dict:
        """Book a room.

        Args:
            room_id: The room.
        """
        if not self.rooms.get(room_id, {}).get("free"):
            return fail(f"{room_id} cannot be booked")
        self.rooms[room_id]["free"] = False
        booking = self.next_id("booking", "BK")
        self.bookings[booking] = {"room_id": room_id, "status": "live"}
        return ok({"booking_id": booking})

    @tool(mutates=True)
    def cancel(self, booking_id: str) -> dict:
        """Cancel a booking.

        Args:
            booking_id: The booking.
        """
        booking = self.bookings.get(booking_id)
        if booking is None:
            return fail("no such booking")
        booking["status"] = "cancelled"
        self.rooms[booking["room_id"]]["free"] = True
        return ok()

    @tool(mutates=True)
    def paint(self, room_id: str) -> dict:
        """Repaint a room.

        Args:
            room_id: The room.
        """
        self.rooms[room_id]["colour"] = "blue"
        return ok()


def task(triggers=()) -> Task:
    state = {"rooms": {r: {"free": True, "colour": "white"} for r in ("R1", "R2", "R3")},
             "bookings": {"BK-OTHER": {"room_id": "R3", "status": "live"}}, "counters": {"booking": 0}}
    state["rooms"]["R3"]["free"] = False
    book = Call(name="book", arguments={"room_id": "R1"})
    return Task(query="Book room R1 or R2.", profile=UserProfile(persona="a guest"), start_time=START,
                initial_state=state, triggers=list(triggers), checklist=[], static_checklist=[], nominal_plan=[book],
                oracle=[book], alternatives=[[Call(name="book", arguments={"room_id": "R2"})]])


def final(t: Task, calls: list[Call]):
    run = Author(Desk, np.random.default_rng(0)).dry_run(t.initial_state, START, calls, t.triggers)
    return collateral(footprint(t, Desk), t.initial_state, run.world, run.firing.log.events)


def test_a_solution_or_an_alternative_changes_nothing_outside_the_footprint():
    t = task()
    assert final(t, t.oracle) == [] and final(t, t.alternatives[0]) == []


def test_an_extra_commitment_or_an_unrelated_change_fails_and_a_cancelled_extra_does_not():
    t = task()
    assert final(t, [*t.oracle, Call(name="book", arguments={"room_id": "R2"})])[0].startswith("2 new live bookings")
    assert final(t, [*t.oracle, Call(name="cancel", arguments={"booking_id": "BK-OTHER"})]) == [
        "bookings.BK-OTHER.status was changed", "rooms.R3.free was changed"]
    assert final(t, [*t.oracle, Call(name="paint", arguments={"room_id": "R1"})]) == ["rooms.R1.colour was changed"]
    tried = [Call(name="book", arguments={"room_id": "R2"}), Call(name="cancel", arguments={"booking_id": "BK-1"})]
    assert final(t, [*tried, *t.oracle]) == []  # a booking made and cancelled again commits nothing


def test_what_the_world_changes_is_never_the_agent_s_but_what_the_agent_changes_in_it_is():
    move_in = Trigger(name="guest", description="a walk-in guest takes R2", observable=Observable(tool="book"),
                      when=Pred(name="time_reached", args={"moment": START}), effect=[
                          Op(name="set_field", args={"path": ["rooms", "R2", "free"], "value": False}),
                          Op(name="set_field", args={"path": ["bookings", "BK-WALKIN"],
                                                     "value": {"room_id": "R2", "status": "live"}})])
    t = task([move_in]).model_copy(update={"alternatives": []})
    assert final(t, t.oracle) == []
    assert final(t, [*t.oracle, Call(name="cancel", arguments={"booking_id": "BK-WALKIN"})]) == [
        "bookings.BK-WALKIN.status was changed"]


def test_a_world_may_say_a_commitment_lapsed():
    class Lapsing(Desk):
        def commits(self, container, entity):
            return container != "bookings" or self.clock.minutes < 60 and super().commits(container, entity)

    world = Lapsing({"bookings": {"BK-1": {"status": "live"}}}, Clock(START))
    assert world.commits("bookings", world.state["bookings"]["BK-1"])
    world.clock.advance(60)
    assert not world.commits("bookings", world.state["bookings"]["BK-1"])
