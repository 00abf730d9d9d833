"""Irrigation: tool behaviour on a hand-made farm, the rules of the world, and cheap exploits that must fail."""

from __future__ import annotations

import copy
import json
import re

import gymnasium as gym
import pytest

import sttgym

from tests.arena.harness import WorldHarness, by_level, second_changes, second_changes_with_the_story
from tests.arena.withheld import assert_withheld_story, unasked
from sttgym.agents import NominalAgent, OracleAgent, PlanAgent
from sttgym.agents.probes import BlindWriter
from sttgym.envs.arena.irrigation.generator import CONSULT, MIX_QUERY
from sttgym.envs.arena.irrigation.world import IrrigationWorld
from sttgym.rollout import rollout
from sttgym.clock import Clock
from sttgym.task import Call, resolve
from sttgym.tools import collect_tools

START = "2025-06-03T06:00"
WINDOWS = [{"start": "2025-06-03T05:00", "end": "2025-06-03T10:00"},
           {"start": "2025-06-03T18:00", "end": "2025-06-03T22:00"}]


def farm() -> dict:
    """Two pump houses (20 min apart), a header each, a bypass J-1 - J-2 (closed, 50 m3/h), two blocks on J-1."""
    def valve(a, b, kind, flow, status, length=10, house="PH-1"):
        return {"name": f"{a}-{b}", "a": a, "b": b, "kind": kind, "max_flow": flow, "length": length,
                "status": status, "house": house, "unlocked_at": None, "note": ""}

    def segment(need):
        return {"field": "F-1", "name": "block", "crop": "maize", "moisture": 20, "need_m3": need,
                "windows": copy.deepcopy(WINDOWS), "priority": "normal", "note": ""}

    return {
        "pumphouses": {"PH-1": {"name": "one", "notice": ""}, "PH-2": {"name": "two", "notice": ""}},
        "pumps": {"P-1": {"name": "p1", "house": "PH-1", "capacity": 100, "status": "ready", "note": ""},
                  "P-2": {"name": "p2", "house": "PH-2", "capacity": 100, "status": "ready", "note": ""}},
        "junctions": {"J-1": {"name": "h1"}, "J-2": {"name": "h2"}},
        "fields": {"F-1": {"name": "field", "crop": "maize", "mix": "FM-1", "mix_note": ""}},
        "mixes": {"FM-1": {"name": "NPK 15-5-30 at 1.2 L/m3"}, "FM-2": {"name": "calcium nitrate at 0.8 L/m3"}},
        "segments": {"SG-1": segment(80), "SG-2": segment(60)},
        "valves": {"V-1": valve("PH-1", "J-1", "main", 150, "open"),
                   "V-2": valve("PH-2", "J-2", "main", 150, "open", house="PH-2"),
                   "V-3": valve("J-1", "J-2", "bypass", 50, "closed", 40),
                   "V-11": valve("J-1", "SG-1", "field", 80, "closed", 5),
                   "V-12": valve("J-1", "SG-2", "field", 80, "closed", 5)},
        "tracks": {"TR-1": {"a": "PH-1", "b": "PH-2", "minutes": 20, "open": True}},
        "crews": {"CR-1": {"name": "crew", "location": "PH-2", "available_from": None,
                           "shift_end": "2025-06-03T18:00", "status": "available", "note": ""}},
        "allocation": {"permit": "AL-1", "limit": {}, "default_limit": 500, "used": {}, "notice": ""},
        "runs": {},
        "counters": {"run": 10},
    }


class Harness(WorldHarness):
    world_class, start, default_state = IrrigationWorld, START, staticmethod(farm)


@pytest.fixture
def w() -> Harness:
    return Harness()


def test_a_run_waters_its_block_and_lasts_as_long_as_its_volume_needs(w):
    assert w("get_network_path", pump_id="P-1", segment_id="SG-1")["data"]["valves"][0]["valve_id"] == "V-1"
    run = w("schedule_run", segment_id="SG-1", pump_id="P-1", start="2025-06-03T07:00", flow_m3h=40)
    assert run["success"], run
    assert run["data"]["end"] == "2025-06-03T09:00" and run["data"]["valves"] == ["V-1", "V-11"]
    assert w.holds("watered", segment_id="SG-1") and w.holds("no_field_flooded")
    assert w("get_segment", segment_id="SG-1")["data"]["still_due_m3"] == 0
    assert not w("schedule_run", segment_id="SG-1", pump_id="P-1", start="2025-06-03T18:00", flow_m3h=40)["success"]
    assert w("cancel_run", run_id=run["data"]["run_id"])["success"]
    assert not w.holds("watered", segment_id="SG-1")


@pytest.mark.parametrize("name,args", [
    ("schedule_run", {"segment_id": "SG-9", "pump_id": "P-1", "start": "2025-06-03T07:00", "flow_m3h": 40}),
    ("schedule_run", {"segment_id": "SG-1", "pump_id": "P-1", "start": "2025-06-03T05:00", "flow_m3h": 40}),
    ("schedule_run", {"segment_id": "SG-1", "pump_id": "P-1", "start": "2025-06-03T09:00", "flow_m3h": 40}),
    ("schedule_run", {"segment_id": "SG-1", "pump_id": "P-1", "start": "2025-06-03T07:00", "flow_m3h": 120}),
    ("schedule_run", {"segment_id": "SG-1", "pump_id": "P-2", "start": "2025-06-03T07:00", "flow_m3h": 40}),
    ("schedule_run", {"segment_id": "SG-1", "pump_id": "P-1", "start": "tomorrow", "flow_m3h": 40}),
    ("open_valve", {"valve_id": "V-1"}),
    ("close_valve", {"valve_id": "V-3"}),
    ("cancel_run", {"run_id": "RUN-1"}),
    ("dispatch_crew", {"crew_id": "CR-1", "valve_id": "V-3"}),
    ("schedule_run", {"segment_id": "SG-1", "pump_id": "P-1", "start": "2025-06-03T07:00", "flow_m3h": 40,
                      "mix_id": "FM-9"}),
    ("set_run_mix", {"run_id": "RUN-1", "mix_id": "FM-2"}),
])
def test_a_refused_change_changes_nothing(w, name, args):
    before = copy.deepcopy(w.world.state)
    assert not w(name, **args)["success"]
    assert w.world.state == before


def test_a_pump_and_a_valve_share_their_flow_between_overlapping_runs(w):
    assert w("schedule_run", segment_id="SG-1", pump_id="P-1", start="2025-06-03T07:00", flow_m3h=60)["success"]
    over = w("schedule_run", segment_id="SG-2", pump_id="P-1", start="2025-06-03T07:30", flow_m3h=60)
    assert not over["success"] and "40 of 100" in over["error"]
    assert w("schedule_run", segment_id="SG-2", pump_id="P-1", start="2025-06-03T07:30", flow_m3h=40)["success"]


def test_a_faulty_main_blocks_the_run_and_the_bypass_must_be_opened(w):
    run = w("schedule_run", segment_id="SG-1", pump_id="P-1", start="2025-06-03T07:00", flow_m3h=40)["data"]
    w.world.state["valves"]["V-1"]["status"] = "faulty"
    assert "faulty" in w("get_segment", segment_id="SG-1")["data"]["runs"][0]["status"]
    assert not w.holds("watered", segment_id="SG-1") and not w.holds("no_blocked_run", segment_id="SG-1")
    assert w("get_network_path", pump_id="P-2", segment_id="SG-1")["data"]["path"] == ["PH-2", "J-2", "J-1", "SG-1"]
    assert "left to schedule" in w("schedule_run", segment_id="SG-1", pump_id="P-2", start="2025-06-03T07:30",
                                   flow_m3h=40)["error"]  # the stale run still holds the need
    assert w("cancel_run", run_id=run["run_id"])["success"]
    refused = w("schedule_run", segment_id="SG-1", pump_id="P-2", start="2025-06-03T07:30", flow_m3h=40)
    assert "V-3" in refused["error"] and "closed" in refused["error"]
    assert w("open_valve", valve_id="V-3")["success"]
    assert not w("schedule_run", segment_id="SG-1", pump_id="P-2", start="2025-06-03T07:30", flow_m3h=60)["success"]
    assert w("schedule_run", segment_id="SG-1", pump_id="P-2", start="2025-06-03T07:30", flow_m3h=40)["success"]
    assert w.holds("watered", segment_id="SG-1")


def test_the_quota_counts_by_start_date_and_starts_afresh_at_midnight(w):
    w.world.state["allocation"]["limit"]["2025-06-03"] = 50
    w.world.state["segments"]["SG-1"]["windows"].append({"start": "2025-06-03T22:00", "end": "2025-06-04T04:00"})
    refused = w("schedule_run", segment_id="SG-1", pump_id="P-1", start="2025-06-03T22:30", flow_m3h=40)
    assert "50 m3 left" in refused["error"]
    assert w("get_quota")["data"]["resets_at"] == "2025-06-04T00:00"
    assert w("schedule_run", segment_id="SG-1", pump_id="P-1", start="2025-06-03T22:30", flow_m3h=40,
             volume_m3=50)["success"]
    assert w("schedule_run", segment_id="SG-1", pump_id="P-1", start="2025-06-04T00:00", flow_m3h=40)["success"]
    assert w.holds("watered", segment_id="SG-1")
    w.world.state["allocation"]["limit"]["2025-06-03"] = 0  # a cut after the fact blocks tonight's part
    assert not w.holds("watered", segment_id="SG-1")


def test_a_locked_valve_needs_a_crew_on_site_before_water_passes(w):
    w.world.state["valves"]["V-1"].update(status="locked")
    assert "crew" in w("open_valve", valve_id="V-1")["error"]
    sent = w("dispatch_crew", crew_id="CR-1", valve_id="V-1")
    assert sent["success"] and sent["data"]["unlocked_at"] == "2025-06-03T06:32"  # 2 min on, 20 drive, 10 work
    early = w("schedule_run", segment_id="SG-1", pump_id="P-1", start="2025-06-03T06:15", flow_m3h=40)
    assert "unlocked only at" in early["error"]
    assert w("schedule_run", segment_id="SG-1", pump_id="P-1", start="2025-06-03T06:35", flow_m3h=40)["success"]
    assert not w("dispatch_crew", crew_id="CR-1", valve_id="V-1")["success"]


def test_a_block_is_fertigated_while_every_run_carries_the_mix_its_field_names(w):
    run = w("schedule_run", segment_id="SG-1", pump_id="P-1", start="2025-06-03T07:00", flow_m3h=40, mix_id="FM-1")
    assert run["data"]["mix"] == "FM-1" and w.holds("fertigated", segment_id="SG-1")
    w.world.state["fields"]["F-1"]["mix"] = "FM-2"  # the agronomist switches the field: the run keeps its mix
    assert w("list_runs", segment_id="SG-1")["data"]["runs"][0]["status"] == "scheduled"
    assert not w.holds("fertigated", segment_id="SG-1")
    assert "FM-2" in json.dumps(w("list_fields")["data"])
    assert "no fertigation mix" in w("set_run_mix", run_id=run["data"]["run_id"], mix_id="FM-9")["error"]
    assert w("set_run_mix", run_id=run["data"]["run_id"], mix_id="FM-2")["success"]
    assert w.holds("fertigated", segment_id="SG-1")
    assert w("cancel_run", run_id=run["data"]["run_id"])["success"]
    assert not w("set_run_mix", run_id=run["data"]["run_id"], mix_id="FM-1")["success"]
    assert not w.holds("fertigated", segment_id="SG-1")  # no water, nothing fertigated


def test_opening_a_field_valve_by_hand_floods_the_block_and_breaks_the_gate(w):
    assert w.holds("no_field_flooded")
    assert w("open_valve", valve_id="V-11")["success"]
    assert not w.holds("no_field_flooded")


def test_the_farm_offices_priority_runs_are_not_the_agents_to_cancel(w):
    w.world.state["runs"]["RUN-7"] = {
        "segment": "SG-2", "pump": "P-1", "start": "2025-06-03T07:00", "end": "2025-06-03T08:00", "flow": 60,
        "volume": 60, "path": ["PH-1", "J-1", "SG-2"], "valves": ["V-1", "V-12"], "status": "scheduled",
        "priority": True, "note": "", "created": START}
    before = copy.deepcopy(w.world.state)
    assert "farm office" in w("cancel_run", run_id="RUN-7")["error"]
    assert "farm office" in w("set_run_mix", run_id="RUN-7", mix_id="FM-2")["error"]
    assert w.world.state == before


def test_the_rules_the_checks_enforce_are_told_in_the_description_and_the_tools():
    description, tools = IrrigationWorld.description, collect_tools(IrrigationWorld(farm(), Clock(START)))
    assert "opening one by hand floods its block" in tools["open_valve"].description
    assert "no block may be scheduled more than its need" in description
    assert "priority runs" in tools["cancel_run"].description


def test_a_heat_advisory_that_moves_the_window_blocks_a_run_already_scheduled(w):
    assert w("schedule_run", segment_id="SG-1", pump_id="P-1", start="2025-06-03T07:00", flow_m3h=40)["success"]
    w.world.state["segments"]["SG-1"]["windows"] = [{"start": "2025-06-03T05:00", "end": "2025-06-03T08:00"}]
    assert "outside" in w("list_runs", segment_id="SG-1")["data"]["runs"][0]["status"]
    assert not w.holds("watered", segment_id="SG-1")


# ----------------------------------------------------------------- whole tasks and exploits

CONFLICTS = ["T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3"]


def call(env, name: str, **arguments) -> dict:
    observation, *_ = env.step({"name": name, "arguments": arguments})
    return json.loads(observation)


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_the_blind_writer_meets_every_trigger_and_earns_nothing(conflict):
    env = gym.make(f"STTArena/Irrigation-{conflict}-medium")
    traj = rollout(env, BlindWriter(), seed=3)
    assert {e["trigger"] for e in traj.info["trigger_log"]} >= {env.unwrapped.task.triggers[0].name}
    assert traj.reward == 0.0


def stubborn_policy(env, seed: int) -> tuple[float, bool]:
    """The paper's stale-state failure: the nominal plan, then cancel its own runs and schedule the very same runs
    again (and, where refused, once more at 18:00), never reading what changed. Returns the score and whether the
    request was met (the goal of the static checklist holds at the end)."""
    env.reset(seed=seed)
    task, saved = env.unwrapped.task, {}
    for c in task.nominal_plan:
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    runs = [resolve(c.arguments, saved) for c in task.nominal_plan if c.name == "schedule_run"]
    for made in [r["data"]["run_id"] for r in saved.values() if (r.get("data") or {}).get("run_id")]:
        call(env, "cancel_run", run_id=made)
    for args in runs:
        if not call(env, "schedule_run", **args).get("success"):
            evening = {**args, "start": args["start"][:11] + "18:00"}
            call(env, "schedule_run", **evening)
    met = env.unwrapped.evaluate(task.static_checklist)[0] == 1.0
    *_, info = env.step({"content": "Task Completed"})
    return info["score"], met


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_rescheduling_the_same_runs_earns_only_what_its_outcome_meets(conflict):
    """A refused schedule shows the change (noticing by any route), so the score is the outcome's: where the
    policy's evening fallback happens to be the recovery (T1-easy: the advisory leaves the evening window) the
    block is watered and that is full marks; everywhere else the same runs again meet nothing and earn nothing."""
    env = gym.make(f"STTArena/Irrigation-{conflict}-easy")
    outcomes = [stubborn_policy(env, seed) for seed in range(2)]
    assert all(score == (1.0 if met else 0.0) for score, met in outcomes), outcomes
    assert any(met for _, met in outcomes) == (conflict == "T1"), outcomes


def open_everything_policy(env, seed: int) -> float:
    """Open every valve the farm has, read the block, then run the oracle's own recovery."""
    env.reset(seed=seed)
    task = env.unwrapped.task
    for v in call(env, "list_valves")["data"]["valves"]:
        call(env, "open_valve", valve_id=v["valve_id"])
    saved = {}
    for c in task.oracle:
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    *_, info = env.step({"content": "Task Completed"})
    return info["score"]


@pytest.mark.parametrize("env_id", ["STTArena/Irrigation-S2-medium", "STTArena/Irrigation-S3-hard",
                                    "STTArena/Irrigation-T1-easy"])
def test_opening_every_valve_floods_the_fields_and_earns_nothing(env_id):
    env = gym.make(env_id)
    assert max(open_everything_policy(env, seed) for seed in range(2)) <= 0.25


@pytest.mark.parametrize("conflict", ["T3", "S2", "ST3"])
def test_impossible_tasks_need_the_blocking_fact_and_punish_a_run_left_anyway(conflict):
    env_id = f"STTArena/Irrigation-{conflict}-impossible"
    assert rollout(gym.make(env_id), OracleAgent(), seed=0).reward == 1.0
    assert rollout(gym.make(env_id), NominalAgent(), seed=0).reward == 0.0
    env = gym.make(env_id)
    env.reset(seed=0)
    oracle = env.unwrapped.task.oracle
    vague = [c if c.name != "chat_with_user" else c.model_copy(update={"arguments": {
        "message": "I'm sorry, but I cannot water this block; something changed and it no longer works."}})
        for c in oracle]
    assert rollout(gym.make(env_id), PlanAgent(vague), seed=0).reward == 0.0
    kept = [c for c in oracle if c.name != "cancel_run"]  # refusing but leaving the stale run scheduled
    if len(kept) < len(oracle):
        assert rollout(gym.make(env_id), PlanAgent(kept), seed=0).reward == 0.0


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_the_stale_plan_earns_nothing_even_where_its_refused_write_shows_the_change(level):
    """A refused ``schedule_run`` shows the change, so the nominal plan has noticed it: what it must not earn is
    credit for an outcome it did not reach (a block with no run has no blocked run; a block whose earlier run
    survives the change needed no recovery, so it is a gate)."""
    for conflict in CONFLICTS:
        for seed in (0, 1):
            traj = rollout(gym.make(f"STTArena/Irrigation-{conflict}-{level}"), NominalAgent(), seed=seed)
            assert traj.reward == 0.0, (conflict, seed, [c["name"] for c in traj.info["checklist"] if c["passed"]])


def blanked(text: str) -> str:
    """A reply with its ids, dates, times and numbers blanked, as validation's solvability panel compares them."""
    return re.sub(r"\b[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+\b|\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2})?|\d+(?:[:.]\d+)?", "#", text)


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_the_manager_insists_alike_at_every_level(conflict):
    """Asked to change the plan, the manager states the same hard constraint, worded alike, whether or not the block
    can be watered: the answer never tells which it is."""
    replies = set()
    for level, env, task in by_level(f"STTArena/Irrigation-{conflict}", seed=0):
        reply = call(env, "chat_with_user", message="Could we do it another way instead?")["data"]["reply"]
        replies.add(blanked(reply))
    assert len(replies) == 1, replies


@pytest.mark.parametrize("env_id", [i for i in sttgym.arena_ids("Irrigation") if not i.endswith("impossible")][::2])
def test_every_pump_house_that_can_do_it_is_a_listed_alternative_that_scores_full_marks(env_id):
    """The alternatives feed the recovery's blocks from each pump that can (opening the mains and bypasses on its
    path); each scores 1.0, and together with the oracle they use more than one pump house where one can."""
    for seed in (0, 1):
        env = gym.make(env_id)
        env.reset(seed=seed)
        task = env.unwrapped.task
        for plan in task.alternatives:
            traj = rollout(gym.make(env_id), PlanAgent(plan), seed=seed)
            assert traj.reward == 1.0, (seed, [c["name"] for c in traj.info["checklist"] if not c["passed"]])
        if env_id.endswith(("S1-easy", "S2-hard")):
            fed = {c.arguments["pump_id"] for plan in [task.oracle, *task.alternatives] for c in plan
                   if c.name == "schedule_run" and c not in task.nominal_plan}
            assert len(fed) >= 2, fed


@pytest.mark.parametrize("conflict", ["S2", "ST1", "T3"])
def test_closing_a_main_no_solution_touches_is_a_collateral_change(conflict):
    """After the solution, closing the main of a field the request never named (the one a background run needs)
    changes a record beyond the request: the collateral gate fails."""
    env_id = f"STTArena/Irrigation-{conflict}-medium"
    env = gym.make(env_id)
    env.reset(seed=0)
    task = env.unwrapped.task
    used = {c.arguments.get("valve_id") for plan in [task.oracle, *task.alternatives] for c in plan}
    spare = next(v for v, x in sorted(task.initial_state["valves"].items())
                 if x["kind"] == "main" and x["status"] == "open" and v not in used)
    traj = rollout(gym.make(env_id), PlanAgent([*task.oracle, Call(name="close_valve", arguments={"valve_id": spare})]),
                   seed=0)
    assert json.loads(traj.steps[len(task.oracle)]["observation"])["success"]
    assert traj.reward == 0.0 and [c["name"] for c in traj.info["checklist"] if not c["passed"]] == [
        "no_collateral_change"]


def test_refusing_a_solvable_request_earns_nothing():
    env = gym.make("STTArena/Irrigation-S2-easy")
    env.reset(seed=0)
    *_, info = env.step({"content": "I'm sorry, this block cannot be watered today."})
    assert info["score"] == 0.0


def test_instances_differ_and_a_stored_task_replays():
    env = gym.make("STTArena/Irrigation-ST2-hard")
    env.reset(seed=5)
    first = env.unwrapped.task
    again = gym.make("STTArena/Irrigation-ST2-hard")
    again.reset(options={"task": json.loads(first.model_dump_json())})
    assert again.unwrapped.task.initial_state == first.initial_state
    assert rollout(again, OracleAgent(), seed=5).reward == 1.0
    env.reset(seed=6)
    assert env.unwrapped.task.initial_state != first.initial_state


# ------------------------------------------------------- the pump house only the manager can name

CONSULTED = [f"STTArena/Irrigation-{c}-{level}" for c in ("T2", "ST2") for level in ("medium", "hard")]
SEEDS = range(3)


def feeding(task) -> tuple[str, list[str]]:
    """The pump the oracle feeds the blocks from after asking, and the other pump houses' pumps."""
    source = [c.arguments["pump_id"] for c in task.oracle if c.name == "schedule_run"][-1]
    own = task.initial_state["pumps"][next(c.arguments["pump_id"] for c in task.nominal_plan
                                           if c.name == "schedule_run")]["house"]
    others = [p for p, x in task.initial_state["pumps"].items() if x["house"] != own and p != source]
    return source, others


def from_other_houses(env, seed: int) -> list[list[Call]]:
    """The oracle's recovery without its question, feeding the blocks from each other pump house's pump: in place
    of the oracle's valves, it opens the bypass mains closed on that pump's path (read off the path the recovery
    looks up)."""
    task = env.unwrapped.task
    source, others = feeding(task)
    plans = []
    for pump in others:
        plan = [c for c in unasked(task, {source: pump}) if c.name != "open_valve"]
        looked = rollout(env, PlanAgent(plan), seed=seed).steps
        path = next(json.loads(s["observation"])["data"] for s in looked
                    if s["action"].get("name") == "get_network_path" and s["action"]["arguments"]["pump_id"] == pump)
        opened = [Call(name="open_valve", arguments={"valve_id": v["valve_id"]}) for v in path["valves"]
                  if v["kind"] != "field" and v["status"] == "closed"]
        first = next(i for i, c in enumerate(plan) if c.name == "schedule_run" and c.arguments["pump_id"] == pump)
        plans.append(plan[:first] + opened + plan[first:])
    return plans


@pytest.mark.parametrize("env_id", CONSULTED)
def test_the_manager_names_the_pump_house_only_when_asked_and_another_without_asking_does_not_pass(env_id):
    outcomes = assert_withheld_story(env_id, CONSULT, "asked_source", from_other_houses, seeds=SEEDS)
    for run in outcomes:  # the other pump house does water the blocks (the static goal), from a source not accepted
        watered = {name for name in run.checks if name.startswith("watered_")}
        assert run.static and watered and watered <= run.failed, run.checks


@pytest.mark.parametrize("env_id", CONSULTED)
def test_the_manager_names_a_requirement_the_pump_listing_answers_never_the_pump(env_id):
    """What the manager holds back is the crop's requirement (the water it may get), not the id of the pump that
    meets it: the pump listing shows each house's water, and only the accepted pump's house pumps that water."""
    for seed in SEEDS:
        env = gym.make(env_id)
        env.reset(seed=seed)
        task = env.unwrapped.task
        (fact,) = task.profile.withheld
        assert not re.search(r"\bP-\d+|\bPH-\d+", fact.text), fact.text
        listing = call(env, "list_pumps")["data"]
        water = {h["pumphouse_id"]: h["water"] for h in listing["pumphouses"]}
        source, others = feeding(task)
        pumps = {p["pump_id"]: p["house"] for p in listing["pumps"]}
        assert water[pumps[source]] in fact.text and not any(water[pumps[p]] in fact.text for p in others)


# ------------------------------------------ the mix on the field's record (medium and hard: it switches)

@pytest.mark.parametrize("conflict", CONFLICTS)
def test_every_level_asks_for_the_fields_mix_alike_and_the_manager_answers_alike(conflict):
    # A sentence or an answer only some levels have would tell the agent the level; at easy the field's mix simply
    # holds.
    replies = set()
    for level, env, task in by_level(f"STTArena/Irrigation-{conflict}", seed=1):
        assert task.query.count(MIX_QUERY) == 1, task.query
        assert ("mix_switched" in [t.name for t in task.triggers]) == (level in ("medium", "hard"))
        replies.add(blanked(call(env, "chat_with_user", message="Which fertigation mix should the runs carry?")
                            ["data"]["reply"]))
    assert replies == {"Put the mix from the field's record on each run."}, replies


def without_remix(plan: list[Call]) -> list[Call]:
    """The plan keeping the mix it wrote on its runs (the one it read before the switch)."""
    return [c for c in plan if c.name != "set_run_mix"]


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_at_hard_the_mix_switches_once_the_recovery_carries_one_and_only_the_field_record_shows_it(conflict):
    # The switch waits for the later of the recovery's run and its mix, wherever the recovery runs from, and leaves
    # every write working: the mix read at the start and written on the recovery is stale.
    for env, seed, task, switched in second_changes(f"STTArena/Irrigation-{conflict}-hard", "mix_switched",
                                                    "list_fields"):
        assert switched.activation == ["schedule_run", "set_run_mix"]
        spare = next(op.args["value"] for op in switched.effect if op.args["path"][-1] == "mix")
        traj = rollout(env, PlanAgent(without_remix(task.oracle)), seed=seed)
        fired = next(e["call_index"] for e in traj.info["trigger_log"] if e["trigger"] == "mix_switched")
        for step in [s for s in traj.steps[fired:] if "name" in s["action"]]:  # the tool calls, not the reply
            name, result = step["action"]["name"], json.loads(step["observation"])
            assert result.get("success", True), (seed, step["action"])
            assert (spare in step["observation"]) == (name == "list_fields"), (seed, name)
        passed = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        # the recovered blocks still count; the stale mix fails what it was for
        assert passed["fertigated"] is False and all(passed[n] for n in passed if n.startswith("watered_"))
        assert 0.0 < traj.reward < 1.0, (seed, traj.reward)
        nominal = rollout(env, PlanAgent(task.nominal_plan), seed=seed)
        assert "mix_switched" not in [e["trigger"] for e in nominal.info["trigger_log"]]


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_at_medium_the_mix_switches_in_the_call_of_the_storys_change_and_only_the_field_record_shows_it(conflict):
    # No waiting for the recovery: the field's record holds the spare mix from the very call that brings the story's
    # change, so an agent that re-reads the field once it sees the change schedules with it; one that keeps the mix it
    # read first loses the mix's milestone (and only that), while the oracle re-reads and fixes its runs.
    medium = f"STTArena/Irrigation-{conflict}-medium"
    for env, seed, task, switched in second_changes_with_the_story(medium, "mix_switched", "list_fields"):
        env.reset(seed=seed)
        story = task.triggers[0]
        assert switched.description.startswith(f"with {story.name},"), switched.description
        owner = next(op.args["path"][1] for op in switched.effect if op.args["path"][-1] == "mix")
        spare = next(op.args["value"] for op in switched.effect if op.args["path"][-1] == "mix")
        first = task.initial_state["fields"][owner]["mix"]
        assert spare != first
        saved, log = {}, env.unwrapped.log
        for c in without_remix(task.oracle):
            mix, before = env.unwrapped.world.state["fields"][owner]["mix"], len(log.events)
            saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
            if any(e["trigger"] == story.name for e in log.events):
                break
        assert mix == first and "mix_switched" not in [e["trigger"] for e in log.events[:before]], seed
        came = {e["trigger"]: e for e in log.events[before:]}  # what this one call brought
        assert {story.name, "mix_switched"} <= set(came), (seed, log.events)
        assert came["mix_switched"]["during"] == came[story.name]["during"] == c.name, (seed, log.events)
        assert env.unwrapped.world.state["fields"][owner]["mix"] == spare
        assert spare in json.dumps(call(env, "list_fields"))
        stale = rollout(env, PlanAgent(without_remix(task.oracle)), seed=seed)
        passed = {x["name"]: x["passed"] for x in stale.info["checklist"]}
        assert passed["fertigated"] is False and all(passed[n] for n in passed if n != "fertigated"), (seed, passed)
        assert 0.0 < stale.reward < 1.0, (seed, stale.reward)


@pytest.mark.parametrize("conflict", ["T3", "S2", "ST3"])
def test_a_recovery_that_writes_its_mix_after_scheduling_meets_the_switch_at_that_write(conflict):
    """Scheduling plain water first and writing the mix after, the switch comes at the mix's write: no order of work
    hands the agent the switched mix before it has written one."""
    env = gym.make(f"STTArena/Irrigation-{conflict}-hard")
    for seed in range(2):
        env.reset(seed=seed)
        task = env.unwrapped.task
        story = rollout(env, PlanAgent(task.oracle), seed=seed).info["trigger_log"][0]["call_index"]
        plan = []
        for i, c in enumerate(without_remix(task.oracle)):
            if c.name == "schedule_run" and i >= story:
                plain = c.model_copy(update={"arguments": {**c.arguments, "mix_id": ""}})
                plan += [plain, Call(name="set_run_mix", arguments={"run_id": {"ref": "result", "step": c.save_as,
                                                                                "path": ["data", "run_id"]},
                                                                     "mix_id": c.arguments["mix_id"]})]
            else:
                plan.append(c)
        log = rollout(env, PlanAgent(plan), seed=seed).info["trigger_log"]
        assert log[-1]["trigger"] == "mix_switched" and log[-1]["during"] == "set_run_mix", log
