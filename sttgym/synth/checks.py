"""The pipeline's mechanical gates: what can be checked by running the generated code instead of asking a model.

Each gate returns ``(value, reason)``: a JSON-ready record of what it saw, and ``None`` when the
candidate passes or a sentence saying why it is rejected.

- :func:`loaded_world`: the source passes the sandbox's audit and loads as a world with tools;
- :func:`functional`: the generated test configurations run against the world, each call with
  the outcome it declared, no tool raising, every successful read returning data, the state
  staying JSON, every tool exercised;
- :func:`assemble`: the model's pieces make an sttgym :class:`~sttgym.task.Task` that names only
  what the world has, with a trigger caused by a write and plans that fit the tools' schemas (an
  impossible task's refusal the oracle's last message to the user);
- :func:`dual_agent`: the nominal plan, run in the dynamic world, meets the trigger at the intended
  call, which changes exactly the declared fields from their declared old values and disrupts
  the plan, which still reaches the goal without the trigger;
- :func:`rules`: the benchmark's own validity rules (:mod:`sttgym.validation`) on the candidate.
"""

from __future__ import annotations

import ast
import json
from contextlib import contextmanager
from typing import Any, Iterator

import gymnasium as gym
import numpy as np

from sttgym.authoring import Author, tool_specs
from sttgym.clock import Clock
from sttgym.registry import DOMAINS, arena_id
from sttgym.tools import collect_tools, validate_arguments
from sttgym.world import json_copy, named_problems, predicates_of

__all__ = ["loaded_world", "functional", "assemble", "dual_agent", "rules", "domain_rules", "candidate", "run_record",
           "predicate_list", "tool_list"]

_RESULT_CHARS = 600  # of each tool result a check agent or auditor is shown


def loaded_world(source: str, isolate: bool = True) -> tuple[Any, str | None]:
    """The world class of ``source`` through the sandbox, or why it is refused (no sandbox here is no reason to
    refuse a candidate: :class:`~sttgym.synth.sandbox.SandboxUnavailable` stops the run instead)."""
    from sttgym.synth.sandbox import SandboxError, SandboxUnavailable, Unsafe, audit, load_world

    try:
        ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        return None, f"syntax error at line {getattr(exc, 'lineno', 0)}: {getattr(exc, 'msg', exc)}"
    problems = audit(source)
    if problems:
        return None, "unsafe code (audit): " + "; ".join(problems[:5])
    try:
        world = load_world(source, isolate=isolate)
    except Unsafe as exc:
        return None, f"unsafe code: {exc}"
    except SandboxUnavailable:
        raise
    except (SandboxError, SyntaxError) as exc:
        return None, f"the code does not load: {exc}"
    kinds = {spec.mutates for name, spec in tool_specs(world).items() if name != "chat_with_user"}
    if kinds != {True, False}:
        return None, "the world needs both read tools and tools that change it"
    return world, None


def tool_list(world: type) -> list[dict]:
    """The world's tools as a model should read them: name, read or write, cost, description, parameters."""
    return [{"name": n, "kind": "write" if s.mutates else "read", "minutes": s.cost, "description": s.description,
             "parameters": s.parameters["properties"], "required": s.parameters["required"]}
            for n, s in sorted(tool_specs(world).items())]


def predicate_list(world: type) -> list[str]:
    """The world's predicates as signatures, for the checklist prompt."""
    return [f"{name}({', '.join(p for p in sig.parameters if p not in ('self', 'ctx', 'log'))})"
            for name, sig in sorted(predicates_of(world).items())]


def functional(world: type, configs: list) -> tuple[dict, str | None]:
    """Run every test configuration's calls against ``world``; see the module docstring."""
    ran, exercised = [], set()
    for config in configs:
        try:
            live = world(json_copy(config.initial_state), Clock(config.start_time))
        except Exception as exc:  # a config the world cannot even be built from
            return {"ran": ran}, f"test config {config.name!r}: the world cannot start from it: {exc}"
        tools = collect_tools(live)
        for call in config.calls:
            where = f"test config {config.name!r}, {call.name}({json.dumps(call.arguments)[:120]})"
            spec = tools.get(call.name)
            if spec is None:
                return {"ran": ran}, f"{where}: the world has no tool {call.name!r}"
            problem = validate_arguments(spec, call.arguments)
            if problem:  # the engine refuses it before the tool runs, as an episode would
                if call.expect == "success":
                    return {"ran": ran}, f"{where}: a call meant to succeed does not fit the schema: {problem}"
                ran.append({"call": call.name, "outcome": "refused by schema"})
                continue
            try:
                result = spec.func(**call.arguments)
            except Exception as exc:  # the rule every tool must keep: never raise
                return {"ran": ran}, f"{where}: the tool raised {type(exc).__name__}: {exc}"
            live.clock.advance(spec.cost)
            if not isinstance(result, dict) or not isinstance(result.get("success"), bool):
                return {"ran": ran}, f"{where}: the result is not ok(...) or fail(...): {str(result)[:200]}"
            if result["success"] != (call.expect == "success"):
                return {"ran": ran}, (f"{where}: expected {call.expect}, got "
                                      f"{json.dumps(result, default=str)[:200]}")
            if result["success"] and not spec.mutates and result.get("data") is None:  # [] is an answer; None is not
                return {"ran": ran}, f"{where}: a successful read returned no data"
            try:
                json.dumps(live.state)
            except (TypeError, ValueError) as exc:
                return {"ran": ran}, f"{where}: the state is no longer JSON: {exc}"
            if result["success"]:
                exercised.add(call.name)
            ran.append({"call": call.name, "outcome": "success" if result["success"] else "failure"})
    untested = sorted(set(tool_specs(world)) - exercised - {"chat_with_user"})
    if untested:
        return {"ran": ran}, f"tools never run successfully by the tests: {untested}"
    return {"ran": ran, "calls": len(ran)}, None


def assemble(world: type, data: Any, checklist: Any, plan: Any, conflict: str, level: str) -> tuple[dict | None,
                                                                                                     str | None]:
    """The :class:`~sttgym.task.Task` the model's pieces make, as JSON, or why they do not make one."""
    from sttgym.judge import Impossibility
    from sttgym.task import Task
    from sttgym.user import UserProfile

    author = Author(world, np.random.default_rng(0))
    solvable = level != "impossible"
    try:
        trigger = author.check_trigger(_trigger(data.trigger))
        plans = {}
        for which, calls in (("oracle", data.oracle), ("nominal plan", plan.plan)):
            plans[which] = [getattr(author.call, c.name)(save_as=c.save_as, **c.arguments) for c in calls]
        if data.final_reply:
            # The oracle tells the user; the task's final reply stays the protocol's end, which the nominal plan and
            # the probes end with too: a refusal there would be theirs as well, and score for what they never found.
            plans["oracle"].append(author.call.chat_with_user(message=data.final_reply))
        profile = data.profile.model_dump()
        impossibility = None
        if not solvable:
            if checklist.impossibility is None:
                raise ValueError("an impossible task needs the impossibility (blocking facts, forbidden gates)")
            impossibility = Impossibility(changed_by=[trigger.name], **checklist.impossibility.model_dump())
        elif not checklist.checklist:
            raise ValueError("a solvable task needs a checklist")
        task = Task(query=data.query, profile=UserProfile(**profile), start_time=data.start_time,
                    initial_state=data.initial_state, triggers=[trigger],
                    checklist=[c.model_dump() for c in checklist.checklist],
                    static_checklist=[c.model_dump() for c in checklist.static_checklist],
                    nominal_plan=plans["nominal plan"], oracle=plans["oracle"], solvable=solvable,
                    impossibility=impossibility, conflict=conflict, difficulty=level)
        Clock(task.start_time)  # an unreadable start time fails here, not in the first episode
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        return None, f"the pieces do not make a task: {str(exc)[:400]}"
    problems = named_problems(world, *task.named())
    if problems:
        return None, f"the task names what the world lacks: {'; '.join(problems[:4])}"
    for mutation in data.mutations:
        node: Any = task.initial_state
        for key in mutation.path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict) or node.get(mutation.path[-1]) != mutation.old:
            found = node.get(mutation.path[-1]) if isinstance(node, dict) else None
            return None, (f"mutation {'.'.join(mutation.path)}: old value {mutation.old!r} is not the initial "
                          f"state's {found!r}")
    return json.loads(task.model_dump_json()), None


def _trigger(data: Any) -> Any:
    from sttgym.triggers import Trigger

    return Trigger.model_validate(data.model_dump())


@contextmanager
def candidate(name: str, world: type, tasks: list[dict]) -> Iterator[str]:
    """``tasks`` registered alone as domain ``name`` for the duration (the domain's previous entry put back)."""
    from sttgym.synth.bundle import register_tasks

    previous = DOMAINS.get(name)
    register_tasks(name, world, tasks)
    try:
        yield name
    finally:
        if previous is None:
            DOMAINS.pop(name, None)
        else:
            DOMAINS[name] = previous


def run_record(traj: Any) -> list[dict]:
    """A trajectory as a check agent reads it: each call, its result (cut short) and the changes it met."""
    rows = []
    for step in traj.steps:
        action = step["action"]
        row = {"call": action.get("name"), "arguments": action.get("arguments")} if "name" in action else \
            {"reply": action.get("content")}
        row["result"] = step["observation"][:_RESULT_CHARS]
        if step["events"]:
            row["world_changed"] = [{"trigger": e["trigger"], "changes": e["changes"]} for e in step["events"]]
        rows.append(row)
    return rows


def dual_agent(name: str, world: type, task: dict, fires_during: str, mutations: list) -> tuple[dict, str | None]:
    """The dual-agent invariants of one candidate (see the module docstring)."""
    from sttgym.agents import PlanAgent
    from sttgym.rollout import rollout
    from sttgym.task import Task

    parsed = Task.model_validate(task)
    env_id = arena_id(name, parsed.conflict, parsed.difficulty)
    with candidate(name, world, [task]):
        run = rollout(gym.make(env_id), PlanAgent(parsed.nominal_plan), seed=0, options={"task": task})
        static = rollout(gym.make(env_id, dynamics=False), PlanAgent(parsed.nominal_plan), seed=0,
                         options={"task": task})
    trigger = parsed.triggers[0]
    record = {"nominal_score": run.reward, "static_score": static.reward, "run": run_record(run)}
    intended = next((i for i, c in enumerate(parsed.nominal_plan) if c.name == fires_during), None)
    if intended is None:
        return record, f"the nominal plan never calls {fires_during!r}, the write the blueprint says causes the change"
    events = [e for e in run.info.get("trigger_log", []) if e["trigger"] == trigger.name]
    if not events:
        return record, f"the trigger {trigger.name!r} never fires in the nominal plan's run"
    first = events[0]
    record["fired_at"] = first["call_index"] - (1 if trigger.timing == "after" else 0)
    record["intended"] = intended
    if record["fired_at"] != intended:
        return record, (f"the trigger fires at call {record['fired_at']} ({first['during']}), not at call {intended} "
                        f"({fires_during}) as designed")
    declared = {".".join(map(str, m.path)): (m.old, m.new) for m in mutations}
    changed = {c["path"]: (c["old"], c["new"]) for c in first["changes"]}
    record["changes"] = first["changes"]
    if declared != changed:
        extra, missing = sorted(set(changed) - set(declared)), sorted(set(declared) - set(changed))
        wrong = sorted(p for p in set(changed) & set(declared) if changed[p] != declared[p])
        return record, (f"the change differs from the declared mutations: undeclared {extra}, not made {missing}, "
                        f"other values {[(p, changed[p], declared[p]) for p in wrong]}")
    if static.reward != 1.0:
        return record, f"without the trigger the nominal plan scores {static.reward:.2f}, not 1 (unreachable goal)"
    if run.reward >= 1.0:
        return record, "the change does not disrupt the nominal plan (it still scores 1)"
    return record, None


def rules(name: str, world: type, task: dict) -> tuple[dict, str | None]:
    """``sttgym validate``'s rules on one candidate (seed 0, and the probe panel's ceilings over it); the record
    keeps the oracle's run for the consistency auditor."""
    from sttgym.agents import OracleAgent
    from sttgym.rollout import rollout
    from sttgym.task import Task
    from sttgym.validation import validate

    parsed = Task.model_validate(task)
    env_id = arena_id(name, parsed.conflict, parsed.difficulty)
    with candidate(name, world, [task]):
        reports, problems = validate([env_id], [0])
        oracle = rollout(gym.make(env_id), OracleAgent(), seed=0)
    report = reports[0]
    record = {"scores": report.scores, "probes": report.probes, "oracle_calls": report.oracle_calls,
              "prefix_scores": report.prefix_scores, "oracle_run": run_record(oracle)}
    problems = report.problems + problems
    return record, ("; ".join(p.replace(f"{env_id} seed 0: ", "") for p in problems[:3]) if problems else None)


def domain_rules(name: str, world: type, tasks: list[dict]) -> list[str]:
    """``sttgym validate``'s rules over a whole bundle (seed 0): each task's again, and those across its ids (levels
    that grow in effort, probe ceilings over the domain), which no single candidate can be held to."""
    from sttgym.validation import validate

    ids = sorted({arena_id(name, t["conflict"], t["difficulty"]) for t in tasks})
    with candidate(name, world, tasks):
        reports, problems = validate(ids, [0])
    return [p for r in reports for p in r.problems] + problems
