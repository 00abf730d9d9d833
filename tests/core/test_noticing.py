"""Noticing a change is derived by the engine: a call after a trigger showed the change when its result would have
been different without it. Any route counts (a read, a listing, a failed write's error); nothing else does."""

import gymnasium as gym
import pytest

from sttgym.actions import read_result, render_result
from sttgym.agents import PlanAgent
from sttgym.checklist import EpisodeLog
from sttgym.clock import Clock
from sttgym.rollout import rollout
from sttgym.schema import Op, Pred
from sttgym.task import Call
from sttgym.tools import fail, ok, tool
from sttgym.triggers import Firing, Observable, Trigger
from sttgym.world import World


class Rooms(World):
    domain = "Rooms"

    @tool
    def get_room(self, room_id: str) -> dict:
        """Read a room.

        Args:
            room_id: The room.
        """
        return ok({"room_id": room_id, **self.rooms[room_id]}) if room_id in self.rooms else fail("no such room")

    @tool
    def list_free(self) -> dict:
        """The free rooms."""
        return ok({"free": sorted(r for r, room in self.rooms.items() if room["free"])})

    @tool
    def count_rooms(self) -> dict:
        """How many rooms there are (whatever their state)."""
        return ok({"rooms": len(self.rooms)})

    @tool(mutates=True)
    def book(self, room_id: str) -> dict:
        """Book a room.

        Args:
            room_id: The room.
        """
        room = self.rooms.get(room_id)
        if room is None or not room["free"]:
            return fail(f"{room_id} cannot be booked")
        room.update(free=False, booked=True)
        return ok(message="booked")

    @tool(mutates=True)
    def repaint(self, room_id: str) -> dict:
        """Repaint a room (a write that shows nothing of its state).

        Args:
            room_id: The room.
        """
        self.rooms[room_id]["note"] = "repainted"
        return ok(message="repainted")


def closing(name="r1_closed", value=False, at="2024-01-01T00:05"):
    return Trigger(name=name, description="room R1 is taken out of service",
                   when=Pred(name="time_reached", args={"moment": at}),
                   effect=[Op(name="set_field", args={"path": ["rooms", "R1", "free"], "value": value})],
                   observable=Observable(tool="get_room", args={"room_id": "R1"}))


class Episode:
    """The env's call cycle around a world and its triggers, small enough to read in a test."""

    def __init__(self, *triggers):
        self.world = Rooms({"rooms": {"R1": {"free": True, "note": None}, "R2": {"free": True, "note": None}}},
                           Clock("2024-01-01T00:00"))
        self.log = EpisodeLog()
        self.firing = Firing(list(triggers), self.log)

    def call(self, name, **arguments):
        self.firing(self.world, name, arguments, "before")
        tool = getattr(self.world, name, None)
        result = read_result(render_result(tool(**arguments) if tool else ok({"reply": "I don't know."})))
        self.world.clock.advance(5)
        self.log.calls.append({"name": name, "arguments": arguments, "result": result, "at": self.world.clock.iso()})
        self.firing(self.world, name, arguments, "after")
        return result

    @property
    def noticed(self):
        return self.log.noticed("r1_closed")


def test_a_read_of_the_changed_entity_after_the_change_notices_it_and_one_before_does_not():
    e = Episode(closing())
    e.call("get_room", room_id="R1")  # 00:00: nothing has changed yet
    assert not e.noticed
    e.call("get_room", room_id="R2")  # 00:05: the change fires before this call, which does not show it
    assert not e.noticed and e.log.events
    e.call("get_room", room_id="R1")
    assert e.noticed and e.log.revealed == {"r1_closed": 2}


@pytest.mark.parametrize("route, arguments", [("list_free", {}), ("book", {"room_id": "R1"})])
def test_a_listing_or_the_error_of_a_write_the_change_made_fail_notices_it(route, arguments):
    e = Episode(closing(at="2024-01-01T00:00"))
    result = e.call(route, **arguments)
    assert e.noticed, result
    assert e.world.state["rooms"]["R1"] == {"free": False, "note": None}  # the replay changed nothing


def test_results_that_do_not_depend_on_the_change_never_notice_it():
    e = Episode(closing(at="2024-01-01T00:00"))
    for name, arguments in (("count_rooms", {}), ("get_room", {"room_id": "R2"}), ("repaint", {"room_id": "R1"}),
                            ("book", {"room_id": "R2"})):
        e.call(name, **arguments)
    assert not e.noticed and e.world.state["rooms"]["R1"]["note"] == "repainted"


def test_a_field_the_agent_overwrote_before_looking_shows_nothing_of_the_change():
    e = Episode(closing(value="maybe", at="2024-01-01T00:00"))
    e.call("count_rooms")  # the change fires here
    e.world.state["rooms"]["R1"]["free"] = True  # as if the agent had set it back itself
    e.call("get_room", room_id="R1")
    assert not e.noticed


def test_a_later_change_to_the_same_field_still_shows_the_first():
    announced = closing(name="r1_closed", value="closing soon", at="2024-01-01T00:00")
    closed = closing(name="r1_shut", value=False, at="2024-01-01T00:05")
    e = Episode(announced, closed)
    e.call("count_rooms")  # announced
    e.call("count_rooms")  # shut: the field now holds the second trigger's value
    e.call("get_room", room_id="R1")
    assert e.log.revealed == {"r1_closed": 2, "r1_shut": 2}


def test_what_the_user_says_is_not_the_world_showing_the_change():
    e = Episode(closing(at="2024-01-01T00:00"))
    e.call("chat_with_user", message="Is R1 still free?")
    assert e.log.events and not e.noticed


def test_in_the_env_the_failed_write_that_meets_the_change_counts_as_noticing_it(toy_ids):
    """The toy's locker is taken as the agent first reserves it: the refusal names the new status, so an agent that
    then reserves the spare has noticed, without ever reading the locker again."""
    env = gym.make(toy_ids[0])
    env.reset(seed=0)
    task = env.unwrapped.task
    reserve = task.nominal_plan[-1]
    spare = task.oracle[-1]
    plan = [reserve, Call(name="get_locker", arguments={"locker_id": task.oracle[-2].arguments["locker_id"]},
                          save_as="alt"), spare]
    traj = rollout(env, PlanAgent(plan), seed=0)
    assert '"success":false' in traj.steps[0]["observation"].replace(" ", "")
    assert env.unwrapped.log.revealed == {"locker_taken": 0}
    assert traj.reward == 1.0
