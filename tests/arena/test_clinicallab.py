"""ClinicalLab: tool behaviour on a hand-made network, the rules of the world, and cheap exploits that must fail."""

from __future__ import annotations

import copy
import json
import re

import gymnasium as gym
import pytest

from tests.arena.harness import (WorldHarness, assert_alternatives_score_one, second_changes,
                                 second_changes_with_the_story)
from tests.arena.withheld import assert_withheld_story, play, unasked
from sttgym.agents import NominalAgent, OracleAgent, PlanAgent
from sttgym.agents.probes import BlindWriter
from sttgym.envs.arena.clinicallab.generator import CONSULT, CONTACT
from sttgym.envs.arena.clinicallab.world import ClinicalLabWorld
from sttgym.rollout import rollout
from sttgym.task import Call, Ref, resolve
from sttgym.user import RuleUser
from sttgym.validation import panel_answers

START = "2024-05-06T09:00"


def network() -> dict:
    """A ward with two doctors (DOC-1 on call), a hub and two labs: W-H 10 min, H-L1 15, W-L2 30, H-L2 20; a
    refrigerated specimen at W."""
    def lab(limit: int, used: int, close: str = "18:00") -> dict:
        return {"status": "open", "notice": "", "tests": ["TROP"], "intake": {"open": "07:00", "close": close},
                "capacity": {"limit": limit, "used": {"2024-05-06": used}}}

    def courier(where: str, storage: list[str], shift_end: str = "2024-05-06T16:00") -> dict:
        return {"name": where, "vehicle": "van", "storage": storage, "location": where, "available_from": None,
                "shift_end": shift_end, "status": "available", "note": ""}

    def site(kind: str) -> dict:
        return {"name": kind, "kind": kind, "access": "open", "notice": ""}

    return {
        "sites": {"WRD-1": {**site("ward"), "on_call": "DOC-1"}, "HUB-1": site("hub"), "LAB-1": site("lab"),
                  "LAB-2": site("lab")},
        "clinicians": {"DOC-1": {"name": "Dr Varga", "ward": "WRD-1", "bleep": "4417"},
                       "DOC-2": {"name": "Dr Moreau", "ward": "WRD-1", "bleep": "5120"}},
        "roads": {"RD-1": {"a": "WRD-1", "b": "HUB-1", "minutes": 10, "open": True, "note": ""},
                  "RD-2": {"a": "HUB-1", "b": "LAB-1", "minutes": 15, "open": True, "note": ""},
                  "RD-3": {"a": "WRD-1", "b": "LAB-2", "minutes": 30, "open": True, "note": ""},
                  "RD-4": {"a": "HUB-1", "b": "LAB-2", "minutes": 20, "open": True, "note": ""}},
        "labs": {"LAB-1": lab(2, 1), "LAB-2": lab(10, 0)},
        "analysers": {"AN-1": {"lab": "LAB-1", "model": "x", "tests": ["TROP"], "status": "running", "note": ""},
                      "AN-2": {"lab": "LAB-2", "model": "y", "tests": ["TROP"], "status": "running", "note": ""}},
        "tests": {"TROP": {"name": "troponin", "specimen": "blood", "storage": "refrigerated"}},
        "orders": {"ORD-1": {"patient": "MRN-1", "ward": "WRD-1", "test": "TROP", "specimen": "SP-1",
                             "priority": "routine", "status": "open", "note": ""},
                   "ORD-2": {"patient": "MRN-2", "ward": "WRD-1", "test": "TROP", "specimen": "SP-2",
                             "priority": "routine", "status": "open", "note": ""}},
        "specimens": {"SP-1": {"order": "ORD-1", "patient": "MRN-1", "type": "blood", "storage": "refrigerated",
                               "collected_at": "2024-05-06T08:40", "stable_minutes": 180, "site": "WRD-1",
                               "note": ""},
                      "SP-2": {"order": "ORD-2", "patient": "MRN-2", "type": "blood", "storage": "refrigerated",
                               "collected_at": "2024-05-06T08:40", "stable_minutes": 180, "site": "WRD-1",
                               "note": ""}},
        "couriers": {"CR-1": courier("HUB-1", ["ambient", "refrigerated"]),
                     "CR-2": courier("LAB-2", ["ambient"]),
                     "CR-3": courier("LAB-2", ["ambient", "refrigerated"])},
        "accessions": {}, "runs": {},
        "counters": {"accession": 10, "run": 20},
    }


class Harness(WorldHarness):
    world_class, start, default_state = ClinicalLabWorld, START, staticmethod(network)


@pytest.fixture
def w() -> Harness:
    return Harness()


def test_accession_and_pickup_route_the_specimen_with_continuous_custody(w):
    acc = w("accession_specimen", specimen_id="SP-1", lab_id="LAB-1")
    assert acc["success"] and acc["data"]["accession_id"] == "ACC-11"
    run = w("book_pickup", specimen_id="SP-1", courier_id="CR-1", accession_id="ACC-11")
    assert run["success"], run
    # CR-1 free 09:03, at the ward 09:13, leaves 09:18, over the hub to LAB-1: 25 minutes
    assert run["data"]["legs"][0]["departs"] == "2024-05-06T09:18"
    assert run["data"]["arrives"] == "2024-05-06T09:43"
    assert w.holds("routed", order_id="ORD-1") and w.holds("nothing_stale", order_id="ORD-1")
    chain = w("get_custody", specimen_id="SP-1")["data"]["chain"]
    assert [c["holder"] for c in chain] == ["WRD-1", "CR-1", "LAB-1"]
    assert w.world.couriers["CR-1"]["status"] == "busy"
    assert w("cancel_run", run_id="RUN-21")["success"]
    assert w.world.couriers["CR-1"]["status"] == "available" and w.world.couriers["CR-1"]["location"] == "HUB-1"
    assert not w.holds("routed", order_id="ORD-1")


BAD = [
    ("accession_specimen", {"specimen_id": "SP-9", "lab_id": "LAB-1"}),
    ("accession_specimen", {"specimen_id": "SP-1", "lab_id": "WRD-1"}),
    ("accession_specimen", {"specimen_id": "SP-1", "lab_id": "LAB-1", "intake_date": "2024-05-09"}),
    ("cancel_accession", {"accession_id": "ACC-99"}),
    ("set_result_contact", {"accession_id": "ACC-99", "bleep": "4417"}),
    ("book_pickup", {"specimen_id": "SP-1", "courier_id": "CR-1", "accession_id": "ACC-99"}),
    ("schedule_handoff", {"specimen_id": "SP-1", "courier_id": "CR-1", "hub_id": "HUB-1",
                          "relay_courier_id": "CR-1", "accession_id": "ACC-99"}),
    ("cancel_run", {"run_id": "RUN-1"}),
    ("request_recollection", {"order_id": "ORD-9", "reason": "x"}),
    ("request_recollection", {"order_id": "ORD-1", "reason": "  "}),
]


@pytest.mark.parametrize("name,args", BAD)
def test_a_refused_change_changes_nothing(w, name, args):
    before = copy.deepcopy(w.world.state)
    assert not w(name, **args)["success"]
    assert w.world.state == before


def test_storage_capacity_and_one_live_accession_per_specimen(w):
    assert w("accession_specimen", specimen_id="SP-1", lab_id="LAB-1")["success"]
    again = w("accession_specimen", specimen_id="SP-1", lab_id="LAB-2")
    assert not again["success"] and "cancel it first" in again["error"]
    full = w("accession_specimen", specimen_id="SP-2", lab_id="LAB-1")  # limit 2, 1 used outside, 1 here
    assert not full["success"] and "no capacity" in full["error"]
    before = copy.deepcopy(w.world.state)
    warm = w("book_pickup", specimen_id="SP-1", courier_id="CR-2", accession_id="ACC-11")
    assert not warm["success"] and "refrigerated" in warm["error"] and w.world.state == before
    lab = w("get_lab", lab_id="LAB-1")["data"]
    assert lab["capacity_left"]["2024-05-06"] == 0 and lab["capacity_left"]["2024-05-07"] == 2


def test_intake_window_and_stability_limit_are_enforced(w):
    w.world.labs["LAB-1"]["intake"]["close"] = "09:30"
    assert w("accession_specimen", specimen_id="SP-1", lab_id="LAB-1")["success"]
    late = w("book_pickup", specimen_id="SP-1", courier_id="CR-1", accession_id="ACC-11")
    assert not late["success"] and "intake closes" in late["error"]
    w.world.labs["LAB-1"]["intake"]["close"] = "18:00"
    w.world.specimens["SP-1"]["stable_minutes"] = 60  # until 09:40, the run would arrive 09:4x
    spoiled = w("book_pickup", specimen_id="SP-1", courier_id="CR-1", accession_id="ACC-11")
    assert not spoiled["success"] and "stability" in spoiled["error"]
    assert w("get_specimen", specimen_id="SP-1")["data"]["stable_until"] == "2024-05-06T09:40"


def test_the_bleep_goes_on_a_pending_accession_and_counts_while_the_wards_record_names_its_doctor(w):
    assert w("get_site", site_id="WRD-1")["data"]["on_call"] == "DOC-1"
    assert w("get_clinician", clinician_id="DOC-1")["data"]["bleep"] == "4417"
    assert not w("get_clinician", clinician_id="WRD-1")["success"]
    assert w("accession_specimen", specimen_id="SP-1", lab_id="LAB-1")["success"]
    before = copy.deepcopy(w.world.state)
    worded = w("set_result_contact", accession_id="ACC-11", bleep="bleep 4417")
    assert not worded["success"] and "four digits" in worded["error"] and w.world.state == before
    assert w("set_result_contact", accession_id="ACC-11", bleep=" 4417 ")["success"]
    assert not w.holds("contact_current", order_id="ORD-1")  # no run yet: the result goes nowhere
    assert not w.holds("contact_recorded", order_id="ORD-1")
    assert w("book_pickup", specimen_id="SP-1", courier_id="CR-1", accession_id="ACC-11")["success"]
    assert w.holds("contact_current", order_id="ORD-1") and w.holds("contact_recorded", order_id="ORD-1")
    w.world.sites["WRD-1"]["on_call"] = "DOC-2"  # a handover: nothing the agent made or read but the ward shows it
    assert w("get_clinician", clinician_id="DOC-1")["data"]["bleep"] == "4417"
    assert not w.holds("contact_current", order_id="ORD-1") and w.holds("routed", order_id="ORD-1")
    assert w("set_result_contact", accession_id="ACC-11", bleep="5120")["success"]  # a booked run does not stop it
    assert w.holds("contact_current", order_id="ORD-1")
    assert w("cancel_run", run_id="RUN-21")["success"] and w("cancel_accession", accession_id="ACC-11")["success"]
    assert not w("set_result_contact", accession_id="ACC-11", bleep="5120")["success"]


def test_an_analyser_fault_or_an_outage_blocks_the_lab(w):
    w.world.analysers["AN-2"]["status"] = "fault"
    refused = w("accession_specimen", specimen_id="SP-1", lab_id="LAB-2")
    assert not refused["success"] and "analyser" in refused["error"]
    w.world.labs["LAB-1"]["status"] = "outage"
    assert not w("accession_specimen", specimen_id="SP-1", lab_id="LAB-1")["success"]


def test_a_handoff_needs_both_couriers_at_the_hub_within_twenty_minutes(w):
    assert w("accession_specimen", specimen_id="SP-1", lab_id="LAB-1")["success"]
    w.world.couriers["CR-3"]["location"] = "HUB-1"
    w.world.couriers["CR-3"]["available_from"] = "2024-05-06T11:00"  # far too late for the relay
    missed = w("schedule_handoff", specimen_id="SP-1", courier_id="CR-1", hub_id="HUB-1",
               relay_courier_id="CR-3", accession_id="ACC-11")
    assert not missed["success"] and "handoff missed" in missed["error"]
    w.world.couriers["CR-3"]["available_from"] = "2024-05-06T09:25"
    relay = w("schedule_handoff", specimen_id="SP-1", courier_id="CR-1", hub_id="HUB-1",
              relay_courier_id="CR-3", accession_id="ACC-11")
    assert relay["success"], relay
    chain = [c["holder"] for c in w("get_custody", specimen_id="SP-1")["data"]["chain"]]
    assert chain == ["WRD-1", "CR-1", "CR-3", "LAB-1"]


def test_operations_halt_or_retime_what_they_break(w):
    assert w("accession_specimen", specimen_id="SP-1", lab_id="LAB-1")["success"]
    assert w("book_pickup", specimen_id="SP-1", courier_id="CR-1", accession_id="ACC-11")["success"]
    w.world.roads["RD-2"]["open"] = False  # HUB-LAB-1 closed: the detour W-L2-H-L1 does not exist, H-L2 no L1
    w.world.retime_runs(note="works")
    assert w.world.runs["RUN-21"]["status"] == "halted"
    assert not w.holds("no_stale_run", order_id="ORD-1")
    refused = w("request_recollection", order_id="ORD-1", reason="spoiled")
    assert refused["success"]  # a halted run is no live run; the order is closed for new accessions
    assert not w("accession_specimen", specimen_id="SP-1", lab_id="LAB-2")["success"]


def test_a_detoured_run_keeps_its_courier_busy_until_the_new_arrival_and_cancelling_frees_it(w):
    """Found by a playtest (ClinicalLab-S3-hard): after a detour, cancelling the run left its courier busy."""
    assert w("accession_specimen", specimen_id="SP-1", lab_id="LAB-1")["success"]
    assert w("book_pickup", specimen_id="SP-1", courier_id="CR-1", accession_id="ACC-11")["success"]
    w.world.roads["RD-1"]["open"] = False  # WRD-1 to HUB-1 closed: the detour goes by LAB-2
    w.world.retime_runs(note="works")
    run = w.world.runs["RUN-21"]
    assert run["status"] == "booked" and run["arrives"] > "2024-05-06T09:43"
    assert w.world.couriers["CR-1"]["available_from"] == run["legs"][-1]["arrives"]
    assert w("cancel_run", run_id="RUN-21")["success"]
    assert w.world.couriers["CR-1"]["status"] == "available"


def test_a_pulled_courier_halts_its_run_and_cancelling_frees_the_accession(w):
    assert w("accession_specimen", specimen_id="SP-1", lab_id="LAB-2")["success"]
    assert w("book_pickup", specimen_id="SP-1", courier_id="CR-1", accession_id="ACC-11")["success"]
    held = w("cancel_accession", accession_id="ACC-11")
    assert not held["success"] and "cancel the run first" in held["error"]
    w.world.pull_courier(courier_id="CR-1", note="incident")
    assert w.world.runs["RUN-21"]["status"] == "halted" and not w.holds("routed", order_id="ORD-1")
    assert w("cancel_run", run_id="RUN-21")["success"]
    again = w("book_pickup", specimen_id="SP-1", courier_id="CR-3", accession_id="ACC-11")
    assert again["success"], again
    assert w.holds("routed", order_id="ORD-1") and w.holds("no_stale_run", order_id="ORD-1")


# ------------------------------------------------------------------ scenarios


def start(env_id: str, seed: int):
    env = gym.make(env_id)
    env.reset(seed=seed)
    return env, env.unwrapped


def call(env, name: str, **arguments) -> dict:
    observation, *_ = env.step({"name": name, "arguments": arguments})
    return json.loads(observation)


CONFLICTS = ["T1", "T2", "T3", "S1", "S2", "S3", "ST1", "ST2", "ST3"]


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_the_blind_writer_meets_every_trigger_and_earns_nothing(conflict):
    env = gym.make(f"STTArena/ClinicalLab-{conflict}-medium")
    traj = rollout(env, BlindWriter(), seed=3)
    assert {e["trigger"] for e in traj.info["trigger_log"]} == {t.name for t in env.unwrapped.task.triggers}
    assert traj.reward == 0.0


@pytest.mark.parametrize("conflict", ["T1", "S2", "ST3"])
def test_impossible_tasks_need_the_fact_the_recollection_and_no_shipment(conflict):
    env_id = f"STTArena/ClinicalLab-{conflict}-impossible"
    assert rollout(gym.make(env_id), OracleAgent(), seed=0).reward == 1.0
    assert rollout(gym.make(env_id), NominalAgent(), seed=0).reward == 0.0
    _, arena = start(env_id, seed=0)
    oracle = arena.task.oracle
    vague = [c if c.name != "chat_with_user" else c.model_copy(update={"arguments": {
        "message": "I'm sorry, but I cannot get this specimen tested; something changed and it no longer works."}})
        for c in oracle]
    assert rollout(gym.make(env_id), PlanAgent(vague), seed=0).reward == 0.0
    silent = [c for c in oracle if c.name != "request_recollection"]  # tells the ward but never asks to redraw
    assert rollout(gym.make(env_id), PlanAgent(silent), seed=0).reward == 0.0


def original_run_policy(env, seed: int) -> dict:
    """The cheapest recovery: the nominal plan, then cancel and rebook the very same courier (or relay) to the very
    same lab under the same accession, never reading what changed; the final step's info."""
    env.reset(seed=seed)
    task, saved = env.unwrapped.task, {}
    for c in task.nominal_plan:
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    book = next(c for c in task.nominal_plan if c.name in ("book_pickup", "schedule_handoff"))
    args = resolve(book.arguments, saved)
    run = saved.get(book.save_as or "", {}).get("data", {}).get("run_id")
    if run:
        call(env, "cancel_run", run_id=run)
    call(env, book.name, **args)
    *_, info = env.step({"content": "Task Completed"})
    return info


def passed(info: dict) -> set[str]:
    return {c["name"] for c in info["checklist"] if c["passed"]}


@pytest.mark.parametrize("env_id", ["STTArena/ClinicalLab-T1-easy", "STTArena/ClinicalLab-T2-easy",
                                    "STTArena/ClinicalLab-S3-easy", "STTArena/ClinicalLab-ST3-easy"])
def test_sending_it_on_the_original_run_again_does_not_get_it_tested(env_id):
    # The rebooking fails, and its error shows the change (the agent met it): cancelling the stale run is the one
    # milestone it earns; the specimen is routed nowhere, so the request is not met.
    env = gym.make(env_id)
    for seed in range(3):
        info = original_run_policy(env, seed)
        assert "rerouted" not in passed(info) and info["score"] <= 0.5, (seed, info["checklist"])


def nearest_lab_policy(env, seed: int, look: bool) -> dict:
    """After the nominal plan, redirect to the lab nearest the ward by driving time with the same courier
    (``look``: reading the home lab first, so the change is noticed)."""
    env.reset(seed=seed)
    task, saved = env.unwrapped.task, {}
    for c in task.nominal_plan:
        saved[c.save_as or ""] = call(env, c.name, **resolve(c.arguments, saved))
    acc = next(c for c in task.nominal_plan if c.name == "accession_specimen").arguments
    book = resolve(next(c for c in task.nominal_plan if c.name == "book_pickup").arguments, saved)
    if look:
        call(env, "get_lab", lab_id=acc["lab_id"])
    run = saved[next(c for c in task.nominal_plan if c.name == "book_pickup").save_as]["data"]["run_id"]
    call(env, "cancel_run", run_id=run)
    call(env, "cancel_accession", accession_id=book["accession_id"])
    ward = env.unwrapped.world.state["specimens"][acc["specimen_id"]]["site"]
    labs = [x for x in env.unwrapped.world.state["labs"] if x != acc["lab_id"]]
    near = min(labs, key=lambda x: call(env, "get_travel_time", origin_id=ward, destination_id=x)["data"]["minutes"]
               or 999)
    new = call(env, "accession_specimen", specimen_id=acc["specimen_id"], lab_id=near)
    if new.get("success"):
        call(env, "book_pickup", specimen_id=acc["specimen_id"], courier_id=book["courier_id"],
             accession_id=new["data"]["accession_id"])
    *_, info = env.step({"content": "Task Completed"})
    return info


@pytest.mark.parametrize("conflict", ["T1", "T3", "S2", "ST2"])
def test_redirecting_to_the_nearest_lab_does_not_pass_the_hard_levels(conflict):
    # The nearest lab is full today: the specimen is routed nowhere, whether or not the change was read first (a
    # refused accession may show it all the same), so at most the unwinding counts.
    env = gym.make(f"STTArena/ClinicalLab-{conflict}-hard")
    for seed in range(2):
        for look in (False, True):
            info = nearest_lab_policy(env, seed, look)
            assert "rerouted" not in passed(info) and info["score"] <= 0.5, (seed, look, info["checklist"])


def test_refusing_a_solvable_order_earns_nothing():
    env = gym.make("STTArena/ClinicalLab-S2-easy")
    env.reset(seed=0)
    *_, info = env.step({"content": "I'm sorry, this specimen cannot be tested in time."})
    assert info["score"] == 0.0


def booked(plan: list[Call]) -> tuple[str, str]:
    """The (accession lab or kept accession, courier) of a plan's last booking."""
    book = [c for c in plan if c.name in ("book_pickup", "schedule_handoff")][-1]
    labs = [c.arguments["lab_id"] for c in plan if c.name == "accession_specimen"]
    return labs[-1] if labs else "", book.arguments["courier_id"]


@pytest.mark.parametrize("conflict", ["T1", "T2", "S1", "S3", "ST3"])
def test_every_other_route_that_fits_is_an_alternative_solution_scoring_one(conflict):
    # Another courier, or another lab that takes the specimen in time, is as good a recovery as the oracle's: the
    # task lists each, so the collateral gate counts its courier as the recovery's own.
    assert sum(assert_alternatives_score_one(f"STTArena/ClinicalLab-{conflict}-{level}", key=booked)
               for level in ("easy", "medium", "hard"))


def test_an_unrelated_write_after_the_recovery_fails_the_collateral_gate():
    env_id = "STTArena/ClinicalLab-T2-easy"
    _, arena = start(env_id, seed=0)
    task = arena.task
    order = focus(task)
    lab = next(c.arguments["lab_id"] for c in task.oracle if c.name == "accession_specimen")
    other = next(o for o, x in task.initial_state["orders"].items()
                 if o != order and x["test"] in task.initial_state["labs"][lab]["tests"])  # one the lab can take
    spec = task.initial_state["orders"][other]["specimen"]
    for extra in (Call(name="request_recollection", arguments={"order_id": other, "reason": "just in case"}),
                  Call(name="accession_specimen", arguments={"specimen_id": spec, "lab_id": lab})):
        traj = rollout(gym.make(env_id), PlanAgent([*task.oracle[:-1], extra]), seed=0)
        assert json.loads(traj.steps[len(task.oracle) - 1]["observation"])["success"], extra
        gate = next(c for c in traj.info["checklist"] if c["name"] == "no_collateral_change")
        assert not gate["passed"] and traj.reward == 0.0, extra


@pytest.mark.parametrize("conflict", ["T1", "T2", "S3", "ST1", "ST3"])
def test_any_read_that_shows_the_change_counts_as_meeting_it(conflict):
    # The story's read (the lab, the courier, the drive) swapped for the stale run's own record: it shows the run
    # off track or halted, so the recovery that follows scores as the oracle's does.
    env_id = f"STTArena/ClinicalLab-{conflict}-easy"
    for seed in range(2):
        _, arena = start(env_id, seed)
        task = arena.task
        seen = task.triggers[0].observable
        run_read = Call(name="get_run", arguments={"run_id": Ref(step="r0", path=("data", "run_id"))})
        plan = [run_read if c.name == seen.tool and c.arguments == seen.args else c for c in task.oracle]
        assert plan != task.oracle
        assert rollout(gym.make(env_id), PlanAgent(plan), seed=seed).reward == 1.0, (env_id, seed)


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_the_ward_answers_alike_whether_or_not_the_specimen_can_be_tested(conflict):
    # The ward's hard constraints answer every proposed change of plan on every level, and its other answers are
    # the same too: nothing it says tells the impossible level from the others.
    answers = {level: panel_answers(f"STTArena/ClinicalLab-{conflict}-{level}", 0)
               for level in ("easy", "medium", "hard", "impossible")}
    assert len(set(answers.values())) == 1, answers
    assert "accessioned before it goes off" in answers["impossible"][0]


def test_a_refusal_naming_the_change_in_words_is_judged_informed():
    env_id = "STTArena/ClinicalLab-T1-impossible"
    _, arena = start(env_id, seed=0)
    task = arena.task
    said = ("I'm sorry, but the specimen cannot be tested in time: the lab's bench is short-staffed and no other "
            "lab runs this test, so I have asked the ward to recollect it.")
    plan = [c if c.name != "chat_with_user" else c.model_copy(update={"arguments": {"message": said}})
            for c in task.oracle]
    assert rollout(gym.make(env_id), PlanAgent(plan), seed=0).reward == 1.0


def test_instances_differ_and_a_stored_task_replays():
    _, first = start("STTArena/ClinicalLab-ST2-hard", seed=5)
    stored = json.loads(first.task.model_dump_json())
    again = gym.make("STTArena/ClinicalLab-ST2-hard")
    again.reset(options={"task": stored})
    assert again.unwrapped.task.initial_state == first.task.initial_state
    assert rollout(again, OracleAgent(), seed=5).reward == 1.0
    _, other = start("STTArena/ClinicalLab-ST2-hard", seed=6)
    assert other.task.initial_state != first.task.initial_state


# ------------------------------------------------------- the lab only the ward can name

CONSULTED = [f"STTArena/ClinicalLab-{c}-{level}" for c in ("T3", "S2") for level in ("medium", "hard")]
SEEDS = range(3)


def focus(task) -> str:
    """The order the ward asks about."""
    return next(c.arguments["order_id"] for c in task.nominal_plan if c.name == "get_order")


def choice(task) -> tuple[str, list[str]]:
    """The lab the oracle sends the specimen to after asking, and the other labs that run the test (but home)."""
    labs = [c.arguments["lab_id"] for c in task.oracle if c.name == "accession_specimen"]
    test = task.initial_state["orders"][focus(task)]["test"]
    others = [x for x, lab in task.initial_state["labs"].items() if test in lab["tests"] and x not in labs]
    return labs[-1], others


def other_labs(env, seed: int) -> list[list[Call]]:
    """The oracle's recovery without its question to each other lab that takes the specimen in time: with the
    oracle's courier, or else the first other available courier that keeps the specimen."""
    task = env.unwrapped.task
    chosen, others = choice(task)
    state = task.initial_state
    storage = state["specimens"][state["orders"][focus(task)]["specimen"]]["storage"]
    couriers = [c for c, x in sorted(state["couriers"].items())
                if x["status"] == "available" and storage in x["storage"]]

    def tries(lab: str):
        plan = unasked(task, {chosen: lab})
        yield plan
        book = max(i for i, c in enumerate(plan) if c.name == "book_pickup")
        for courier in couriers:
            arguments = {**plan[book].arguments, "courier_id": courier}
            yield plan[:book] + [plan[book].model_copy(update={"arguments": arguments})] + plan[book + 1:]

    found = (next((plan for plan in tries(lab) if play(env, seed, plan).static), None) for lab in others)
    return [plan for plan in found if plan]


@pytest.mark.parametrize("env_id", CONSULTED)
def test_the_ward_names_the_lab_only_when_asked_and_another_lab_without_asking_does_not_pass(env_id):
    outcomes = assert_withheld_story(env_id, CONSULT, "asked_lab", other_labs, seeds=SEEDS)
    assert all("rerouted" in run.failed for run in outcomes)  # the other lab takes it in time, not at the ward's


@pytest.mark.parametrize("env_id", CONSULTED)
def test_the_wards_requirement_is_an_analyser_model_and_only_its_lab_runs_the_test_on_one(env_id):
    # The ward tells a requirement, not a lab: the patient's baseline was run on the home lab's analyser model, and
    # of the labs that take the specimen in time only the one the checks want has that model (get_lab shows it).
    for seed in SEEDS:
        _, arena = start(env_id, seed)
        task = arena.task
        (fact,) = task.profile.withheld
        chosen, others = choice(task)
        home = next(c.arguments["lab_id"] for c in task.nominal_plan if c.name == "accession_specimen")
        assert chosen not in fact.text and home not in fact.text

        def models(lab: str) -> set[str]:
            return {x["model"] for x in task.initial_state["analysers"].values() if x["lab"] == lab}

        assert models(chosen) == models(home) and all(m in fact.text for m in models(home))
        assert others and all(not models(x) & models(home) for x in others)


# ------------------------------------------------------- the bleep on the ward's record

LEVELS = ("easy", "medium", "hard", "impossible")


def template(task) -> str:
    """The query with the instance's drawn names, ids and test blanked, and the consulting sentence (medium, hard
    and impossible of T3 and S2) dropped."""
    text = task.query.replace(CONSULT, "")
    for name in sorted({x["name"] for x in task.initial_state["sites"].values()}, key=len, reverse=True):
        text = text.replace(name, "<name>")
    return re.sub(r"\b[A-Z]+-\d+\b", "<id>", text).replace(task.initial_state["orders"][focus(task)]["test"], "<test>")


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_every_level_asks_for_the_bleep_in_the_same_words_and_the_ward_answers_alike(conflict):
    # A sentence only the hard query had would tell the level; the ward points to its record, on every level.
    questions = ("Which bleep should I record for the result?", "Who is your on-call doctor?")
    queries, replies = set(), set()
    for level in LEVELS:
        for seed in range(2):
            _, arena = start(f"STTArena/ClinicalLab-{conflict}-{level}", seed)
            task = arena.task
            assert CONTACT in task.query and "on_call_handover" not in {t.name for t in task.triggers[:-1]}
            assert (task.triggers[-1].name == "on_call_handover") == (level in ("medium", "hard"))
            queries.add(template(task))
            replies |= {RuleUser(task.profile).reply(q) for q in questions}
    assert len(queries) == 1, queries
    assert replies == {"Our ward's site record names our on-call doctor, and their clinician record has the bleep."}
    # words saying the value may move send a careful agent back to the record before it finishes (arena-v12's
    # "whoever is on call": 4 of 4 hard episodes re-read it), which would tell nothing of the level apart
    said = f"{CONTACT} {replies.pop()}".lower()
    assert not [word for word in ("whoever", "now", "current", "always", "latest") if re.search(rf"\b{word}\b", said)]


@pytest.mark.parametrize("conflict", ["T2", "S1", "ST3"])
def test_a_recovery_that_never_records_the_bleep_does_not_pass_at_any_level(conflict):
    # The request asks for the bleep at every level, so the checklist wants it at every level: the route alone is
    # partial credit.
    for level in ("easy", "medium"):
        env_id = f"STTArena/ClinicalLab-{conflict}-{level}"
        _, arena = start(env_id, seed=0)
        plan = [c for c in arena.task.oracle if c.name != "set_result_contact"]
        traj = rollout(gym.make(env_id), PlanAgent(plan), seed=0)
        checks = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        assert checks["rerouted"] and not checks["contact_current"] and 0.0 < traj.reward < 1.0, (env_id, checks)


def looks(task, ward: str) -> list[Call]:
    """Reads of what the recovery made and used, of the doctor the agent knows, and of the other sites; none of them
    is the ward's record."""
    state, order = task.initial_state, focus(task)
    spec = state["orders"][order]["specimen"]
    booked = [c.arguments for c in task.oracle if c.name == "book_pickup"][-1]
    hub = next(s for s, x in sorted(state["sites"].items()) if x["kind"] == "hub")
    return [Call(name="get_order", arguments={"order_id": order}),
            Call(name="get_specimen", arguments={"specimen_id": spec}),
            Call(name="get_custody", arguments={"specimen_id": spec}),
            Call(name="get_run", arguments={"run_id": Ref(step="r1", path=("data", "run_id"))}),
            Call(name="get_courier", arguments={"courier_id": booked["courier_id"]}),
            Call(name="get_clinician", arguments={"clinician_id": state["sites"][ward]["on_call"]}),
            Call(name="list_orders", arguments={"ward_id": ward}), Call(name="list_labs", arguments={}),
            Call(name="list_sites", arguments={"kind": "lab"}), Call(name="get_site", arguments={"site_id": hub})]


def bleep_late(plan: list[Call], bleep: str) -> tuple[list[Call], int]:
    """``plan`` recording no bleep until its last booking is made, then ``bleep`` on that booking's accession; the
    plan and the index of that write."""
    book = max(i for i, c in enumerate(plan) if c.name in ("book_pickup", "schedule_handoff"))
    late = Call(name="set_result_contact", arguments={"accession_id": plan[book].arguments["accession_id"],
                                                       "bleep": bleep})
    before = [c for c in plan[:book] if c.name != "set_result_contact"]
    return [*before, plan[book], late, *plan[book + 1:]], len(before) + 1


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_at_medium_the_on_call_hands_over_with_the_story_s_change(conflict):
    # Medium's handover comes in the call that brings the story's change: the ward's record read after it names the
    # next doctor, and the bleep read before it and kept on the accession is stale, as at hard.
    for env, seed, task, moved in second_changes_with_the_story(f"STTArena/ClinicalLab-{conflict}-medium",
                                                                "on_call_handover", "get_site"):
        ward = moved.observable.args["site_id"]
        planned = task.initial_state["clinicians"][task.initial_state["sites"][ward]["on_call"]]["bleep"]
        stale = [c.model_copy(update={"arguments": {**c.arguments, "bleep": planned}})
                 if c.name == "set_result_contact" else c for c in task.oracle]
        traj = rollout(env, PlanAgent(stale), seed=seed)
        checks = {c["name"]: c["passed"] for c in traj.info["checklist"]}
        assert checks["rerouted"] and not checks["contact_current"] and 0.0 < traj.reward < 1.0, checks


@pytest.mark.parametrize("conflict", CONFLICTS)
def test_at_hard_the_on_call_hands_over_once_the_recovery_is_booked_and_only_the_wards_record_shows_it(conflict):
    # The second change waits for the later of the first run booked after the story's change (whichever lab and
    # courier the recovery took) and a bleep on its accession, and leaves every write working: the bleep recorded
    # is stale, and no read of the run, the order, the labs, the couriers or the doctor it came from says so.
    hard = f"STTArena/ClinicalLab-{conflict}-hard"
    for env, seed, task, moved in second_changes(hard, "on_call_handover", "get_site"):
        ward = moved.observable.args["site_id"]
        first = task.initial_state["sites"][ward]["on_call"]
        planned = task.initial_state["clinicians"][first]["bleep"]
        reread = max(i for i, c in enumerate(task.oracle) if c.name == "get_site")
        plan = [*task.oracle[:reread], *looks(task, ward), *task.oracle[reread:]]
        traj = rollout(env, PlanAgent(plan), seed=seed)
        log = env.unwrapped.log
        assert traj.reward == 1.0 and traj.info["trigger_log"][-1]["during"] == "book_pickup", traj.info["checklist"]
        shown = log.calls[log.revealed["on_call_handover"]]
        assert (shown["name"], shown["arguments"]) == ("get_site", {"site_id": ward})
        known = next(s for s in traj.steps[reread:] if s["action"].get("arguments") == {"clinician_id": first})
        assert json.loads(known["observation"])["data"]["bleep"] == planned  # the doctor it knows is as they were
        successor = task.initial_state["clinicians"][env.unwrapped.world.state["sites"][ward]["on_call"]]
        assert successor["ward"] == ward and successor["bleep"] != planned
        # the bleep written after the booking is as stale: the handover waits for it
        late, at = bleep_late(task.oracle, planned)
        traj = rollout(env, PlanAgent(late), seed=seed)
        handover = traj.info["trigger_log"][-1]
        assert traj.reward == 1.0 and handover["trigger"] == "on_call_handover" and handover["during"] == \
            "set_result_contact" and handover["call_index"] == at + 1  # the calls after that write see it
        unrecorded = [c for c in task.oracle if c.name != "set_result_contact"]
        assert "on_call_handover" not in [e["trigger"] for e in rollout(env, PlanAgent(unrecorded), seed=seed)
                                          .info["trigger_log"]]
        for stale in ([c.model_copy(update={"arguments": {**c.arguments, "bleep": planned}})
                       if c.name == "set_result_contact" else c for c in task.oracle], late[:at + 1]):
            traj = rollout(env, PlanAgent(stale), seed=seed)
            checks = {c["name"]: c["passed"] for c in traj.info["checklist"]}
            # the recovered run still counts; the stale bleep fails what it was for
            assert checks["rerouted"] and not checks["contact_current"] and 0.0 < traj.reward < 1.0, checks
        nominal = rollout(env, PlanAgent(task.nominal_plan), seed=seed)
        assert "on_call_handover" not in [e["trigger"] for e in nominal.info["trigger_log"]]
