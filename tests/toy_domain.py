"""A two-tool domain used to test the engine without any real domain."""

from __future__ import annotations

from sttgym.authoring import Author, Plan
from sttgym.checklist import Check
from sttgym.judge import Impossibility
from sttgym.task import Ref, Task
from sttgym.tools import fail, ok, tool
from sttgym.triggers import Observable, Trigger
from sttgym.user import Answer, UserProfile
from sttgym.world import World, predicate


class LockerWorld(World):
    domain = "Toy"
    description = ("Parcel lockers at pickup sites. A locker someone else took is replaced by the spare it names; "
                   "never reserve a broken locker.")

    @tool
    def get_locker(self, locker_id: str) -> dict:
        """Read a locker.

        Args:
            locker_id: The locker's id.
        """
        if locker_id not in self.lockers:
            return fail(f"no locker {locker_id!r}")
        return ok({"locker_id": locker_id, **self.lockers[locker_id]})

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

    @predicate
    def holds_parcel(self, locker_id: str, parcel_id: str) -> bool:
        return self.lockers[locker_id]["parcel"] == parcel_id


def toy_scenario(author: Author, solvable: bool = True) -> Task:
    a, b = f"L{author.serial(100, 500)}", f"L{author.serial(500, 999)}"
    parcel = f"P{author.serial()}"
    call, pred, op = author.call, author.pred, author.op
    state = {"lockers": {a: {"status": "free", "parcel": None, "spare": b},
                         b: {"status": "free" if solvable else "broken", "parcel": None, "spare": None}}}
    # Another customer takes the locker the moment anyone starts reserving: a write, never a read, causes it.
    grabbed = author.check_trigger(Trigger(
        name="locker_taken", description=f"{a} is taken by another customer",
        activation=["reserve_locker"], when=pred.time_reached(moment="2024-05-01T09:00"),
        effect=[op.set_field(path=["lockers", a, "status"], value="taken")],
        observable=Observable(tool="get_locker", args={"locker_id": a})))
    nominal = Plan(read=[call.get_locker(locker_id=a)], commit=[call.reserve_locker(locker_id=a, parcel_id=parcel)])
    # The alternative is the spare the requested locker names; the oracle reads it and reserves what it read.
    recovery = [call.get_locker(locker_id=a), call.get_locker(locker_id=b, save_as="alt")]
    in_b = Check(name="parcel_in_b", description="the parcel holds the alternative locker",
                 holds=pred.holds_parcel(locker_id=b, parcel_id=parcel), stated="replaced by the spare it names")
    in_a = Check(name="parcel_in_a", description="the parcel holds the requested locker",
                 holds=pred.holds_parcel(locker_id=a, parcel_id=parcel), stated=f"reserve locker {a} for parcel {parcel}")
    untouched = Check(name="no_broken_reservation", description="nothing reserved a broken locker",
                      holds=pred.field_equals(path=["lockers", b, "parcel"], value=None),
                      stated="never reserve a broken locker")
    if solvable:
        oracle = nominal.then(fix=recovery + [call.reserve_locker(
            locker_id=Ref(step="alt", path=("data", "locker_id")), parcel_id=parcel)])
    else:
        oracle = nominal.then(fix=recovery + [call.chat_with_user(
            message=f"Sorry, I cannot reserve a locker for you: {a} is now taken and {b} is broken.")])
    return Task(
        query=f"Please reserve locker {a} for parcel {parcel}.",
        profile=UserProfile(persona="a customer", clarifications=[Answer(keywords=["parcel"], text=parcel)],
                            insist=None if solvable else "It has to be a working locker today."),
        start_time="2024-05-01T09:00",
        initial_state=state,
        triggers=[grabbed],
        checklist=[in_b] if solvable else [],
        static_checklist=[in_a],
        nominal_plan=nominal.calls,
        oracle=oracle.calls,
        solvable=solvable,
        impossibility=None if solvable else Impossibility(changed_by=["locker_taken"], blocking_facts=["taken"],
                                                          forbidden=[untouched]),
    )
