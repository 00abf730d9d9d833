"""A two-tool domain used to test the engine without any real domain."""

from __future__ import annotations

from sttgym.checklist import Check
from sttgym.judge import Impossibility
from sttgym.task import Call, Ref, Task
from sttgym.tools import fail, ok, tool
from sttgym.triggers import Mutation, Trigger
from sttgym.user import Answer, UserProfile
from sttgym.world import World


class LockerWorld(World):
    domain = "Toy"
    description = "Parcel lockers at pickup sites."

    @tool
    def get_locker(self, locker_id: str) -> dict:
        """Read a locker.

        Args:
            locker_id: The locker's id.
        """
        if locker_id not in self.lockers:
            return fail(f"no locker {locker_id!r}")
        return ok(self.lockers[locker_id])

    @tool(mutates=True, cost=5)
    def reserve_locker(self, locker_id: str, parcel_id: str) -> dict:
        """Reserve a locker for a parcel.

        Args:
            locker_id: The locker to reserve.
            parcel_id: The parcel that will go in it.
        """
        locker = self.lockers.get(locker_id)
        if locker is None:
            return fail(f"no locker {locker_id!r}")
        if locker["status"] != "free":
            return fail(f"locker {locker_id} is {locker['status']}")
        locker.update(status="reserved", parcel=parcel_id)
        return ok({"reservation": f"R-{locker_id}"}, message="reserved")


def toy_scenario(rng, solvable: bool = True) -> Task:
    a, b = f"L{int(rng.integers(100, 500))}", f"L{int(rng.integers(500, 999))}"
    parcel = f"P{int(rng.integers(1000, 9999))}"
    state = {"lockers": {a: {"status": "free", "parcel": None}, b: {"status": "free" if solvable else "broken",
                                                                      "parcel": None}}}
    grabbed = Trigger(
        name="locker_taken", description=f"{a} is taken by another customer",
        activation=["get_locker"], condition=lambda s, ctx: ctx.arguments.get("locker_id") == a,
        mutations=[Mutation(("lockers", a, "status"), "free", "taken")], observable_via="get_locker", timing="after")
    in_b = Check("parcel_in_b", "the parcel holds the alternative locker",
                 lambda s, _: s["lockers"][b]["parcel"] == parcel)
    in_a = Check("parcel_in_a", "the parcel holds the requested locker",
                 lambda s, _: s["lockers"][a]["parcel"] == parcel)
    untouched = Check("no_broken_reservation", "nothing reserved a broken locker",
                      lambda s, _: s["lockers"][b]["parcel"] is None)
    return Task(
        query=f"Please reserve locker {a} for parcel {parcel}.",
        profile=UserProfile(persona="a customer", clarifications=[Answer(keywords=["parcel"], text=parcel)],
                            insist=None if solvable else f"It has to be a working locker today."),
        start_time="2024-05-01T09:00",
        initial_state=state,
        triggers=[grabbed],
        checklist=[in_b] if solvable else [],
        static_checklist=[in_a],
        nominal_plan=[Call(name="get_locker", arguments={"locker_id": a}),
                      Call(name="reserve_locker", arguments={"locker_id": a, "parcel_id": parcel})],
        oracle=[Call(name="get_locker", arguments={"locker_id": a}),
                Call(name="get_locker", arguments={"locker_id": b}, save_as="alt"),
                Call(name="reserve_locker", arguments={"locker_id": b, "parcel_id": parcel})] if solvable else
               [Call(name="get_locker", arguments={"locker_id": a}),
                Call(name="get_locker", arguments={"locker_id": b}),
                Call(name="chat_with_user", arguments={"message": f"Sorry, I cannot reserve: {a} was taken and {b} is broken."})],
        solvable=solvable,
        impossibility=None if solvable else Impossibility(blocking_keywords=["taken", "broken"], forbidden=[untouched]),
    )
