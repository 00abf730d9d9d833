"""The synthesis pipeline: user requests in, bundles of validated environments and tasks out.

Five stages, each a command over one work directory (``sttgym synth <stage> --work DIR``):

- ``filter``: the statefulness and spatio-temporal sensitivity filters on each request;
- ``environment``: environment information, entity attributes, tools and the class code, which must
  pass the sandbox's audit and load;
- ``validate``: generated test configurations run against the world (functional validation);
- ``inject``: conflict assignment, a blueprint per conflict type and level, the dynamic world (the
  predicates and operations triggers and checks name), then each task's query, profile, initial
  state, trigger and oracle;
- ``assess``: checklist, plan agent, the dual-agent invariants run in the world, the check agent,
  ``sttgym validate``'s rules and the consistency auditor; the accepted tasks of each environment
  become a bundle.

Every step of every item leaves an artifact, ``requests/<id>/<step>[/<conflict>-<level>].json``
holding ``ok``, ``reason`` and the value (generated code also as a ``.py`` file beside it). A step
whose artifact exists is never run again, so an interrupted stage resumes, and deleting an
artifact re-runs just that step. Every prompt and response goes to ``log.jsonl``.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from sttgym.registry import CONFLICTS, LEVELS
from sttgym.synth import checks
from sttgym.synth.prompts import (LEVEL_GUIDE, PROMPTS, PROMPTS_HASH, TAXONOMY, Blueprint, Checklist, NominalPlan,
                                  TaskData, Template, TestConfigs)

__all__ = ["STAGES", "Pipeline", "read_requests"]

STAGES = ("filter", "environment", "validate", "inject", "assess")
# Each step of an item, in order, and the stage it belongs to (what a rejection is listed under).
UNIT_STEPS = (("filter", "filter_stateful"), ("filter", "filter_sensitive"), ("environment", "env_info"),
              ("environment", "entities"), ("environment", "tools"), ("environment", "class_code"),
              ("environment", "static_world"), ("validate", "test_configs"), ("validate", "functional"),
              ("inject", "conflict_assignment"), ("inject", "dynamic"), ("inject", "dynamic_world"))
SCENARIO_STEPS = (("inject", "blueprint"), ("inject", "task_data"), ("assess", "checklist"),
                  ("assess", "plan_agent"), ("assess", "assembled"), ("assess", "dual_agent"),
                  ("assess", "check_agent"), ("assess", "rules"), ("assess", "auditor"))


def read_requests(path: Path) -> list[dict]:
    """Requests from a file: JSONL rows ``{"id", "request"}``, or plain text, one request per line."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            try:
                row = json.loads(line)
                rows.append({"id": str(row.get("id") or f"r{number}"), "request": str(row["request"])})
            except (json.JSONDecodeError, KeyError) as exc:
                raise ValueError(f"{path}:{number}: a JSON row needs a \"request\" ({exc})") from exc
        else:
            rows.append({"id": f"r{number}", "request": line.strip()})
    bad = [r["id"] for r in rows if not r["id"].replace("-", "").replace("_", "").isalnum()]
    if bad:
        raise ValueError(f"{path}: request ids must be letters, digits, - and _: {bad}")
    return rows


@dataclass
class Artifact:
    ok: bool
    value: Any = None
    reason: str | None = None
    at: str = ""  # when the step ran (UTC)


@dataclass
class Pipeline:
    """The stages over ``work``; ``asker`` (a :class:`~sttgym.synth.llm.Asker`) is needed by the model's steps.

    ``provenance`` (model, endpoint) goes into every bundle's manifest; ``say`` receives progress
    lines; ``isolate=False`` runs generated worlds in this process (tests of reviewed code only);
    ``conflicts`` and ``levels`` (empty: all) choose which of the assigned scenarios are built.
    """

    work: Path
    asker: Any = None
    provenance: dict = field(default_factory=dict)
    say: Callable[[str], None] = print
    isolate: bool = True
    conflicts: tuple[str, ...] = ()
    levels: tuple[str, ...] = ()
    _worlds: dict = field(default_factory=dict, repr=False)
    _walls: dict = field(default_factory=dict, repr=False)  # stage -> seconds this run, not yet in usage.json
    unanswered: list = field(default_factory=list)  # (item, template, the endpoint's error) of this run

    def __post_init__(self) -> None:
        self.work = Path(self.work)
        unknown = sorted(set(self.conflicts) - set(CONFLICTS)) + sorted(set(self.levels) - set(LEVELS))
        if unknown:
            raise ValueError(f"unknown conflict types or levels {unknown}: conflicts {', '.join(CONFLICTS)}; "
                             f"levels {', '.join(LEVELS)}")

    # ------------------------------------------------------------------ the work directory

    def add_requests(self, path: Path) -> int:
        """Copy requests into the work directory (ids already there are kept as they were); how many were new."""
        stored = {r["id"]: r for r in self.requests()}
        new = [r for r in read_requests(Path(path)) if r["id"] not in stored]
        self.work.mkdir(parents=True, exist_ok=True)
        with (self.work / "requests.jsonl").open("a", encoding="utf-8") as handle:
            for row in new:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        return len(new)

    def requests(self) -> list[dict]:
        path = self.work / "requests.jsonl"
        return read_requests(path) if path.exists() else []

    def _path(self, rid: str, step: str, key: str = "") -> Path:
        return self.work / "requests" / rid / (f"{step}/{key}.json" if key else f"{step}.json")

    def artifact(self, rid: str, step: str, key: str = "") -> Artifact | None:
        path = self._path(rid, step, key)
        if not path.exists():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        return Artifact(data["ok"], data.get("value"), data.get("reason"), data.get("at", ""))

    def _write(self, rid: str, step: str, key: str, value: Any, reason: str | None) -> None:
        path = self._path(rid, step, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        if hasattr(value, "model_dump"):
            value = value.model_dump()
        if isinstance(value, str) and step in ("class_code", "dynamic"):
            path.with_suffix(".py").write_text(value, encoding="utf-8")  # for review, and for a diff of the two
        record = {"ok": reason is None, "reason": reason, "value": value,
                  "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        partial = path.with_suffix(".partial")
        partial.write_text(json.dumps(record, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
        os.replace(partial, path)

    def value(self, rid: str, step: str, key: str = "", contract: Any = None) -> Any:
        """The value of a passed step (read back through its contract when given), else None."""
        found = self.artifact(rid, step, key)
        if found is None or not found.ok:
            return None
        return contract.model_validate(found.value) if contract is not None else found.value

    def alive(self, rid: str, upto: str) -> bool:
        """Whether every step of request ``rid`` through ``upto`` has passed."""
        for _, step in UNIT_STEPS:
            found = self.artifact(rid, step)
            if found is None or not found.ok:
                return False
            if step == upto:
                return True
        return True

    def scenarios(self, rid: str, upto: str = "") -> list[str]:
        """The scenario keys (``T1-easy``) of ``rid`` the conflict assignment asked for (those chosen), alive through
        ``upto``."""
        assignment = self.value(rid, "conflict_assignment")
        matched = assignment["matched"] if assignment else []
        keys = [f"{m['conflict']}-{level}" for m in matched for level in m["levels"]
                if (not self.conflicts or m["conflict"] in self.conflicts) and (not self.levels or level in self.levels)]
        if not upto:
            return keys
        steps = [s for _, s in SCENARIO_STEPS]
        needed = steps[:steps.index(upto) + 1]
        return [k for k in keys if all((a := self.artifact(rid, s, k)) is not None and a.ok for s in needed)]

    # ------------------------------------------------------------------ running steps

    def _ask(self, stage: str, template: Template, todo: dict[tuple[str, str], dict],
             accept: Callable[[str, str, Any], str | None] | None = None) -> None:
        """Ask ``template`` for every (request, scenario key) of ``todo`` without an artifact yet; ``accept``
        may still refuse a well-formed answer (a filter's no, a design that names a missing tool)."""
        todo = {k: fields for k, fields in todo.items() if self.artifact(k[0], template.name, k[1]) is None}
        if not todo:
            return
        if self.asker is None:
            raise ValueError(f"the {stage} stage needs a model (--base-url and --model)")
        self.say(f"{stage}: {template.name} for {len(todo)} item(s)")
        items = {(f"{rid}/{key}" if key else rid): (rid, key) for rid, key in todo}
        answers = self.asker.ask(stage, template, {item: todo[k] for item, k in items.items()})
        for item, (rid, key) in items.items():
            answer = answers[item]
            if answer.error:  # no artifact: the next run asks again
                self.unanswered.append({"item": item, "template": template.name, "error": answer.error})
                continue
            reason = answer.reason or (accept(rid, key, answer.value) if accept else None)
            self._write(rid, template.name, key, answer.value, reason)
        failed = [u for u in self.unanswered if u["template"] == template.name]
        if failed:
            self.say(f"{stage}: the endpoint gave no answer for {len(failed)} item(s) ({failed[0]['error'][:200]}); "
                     "run the stage again to retry them")

    def _check(self, stage: str, step: str, todo: list[tuple[str, str]],
               gate: Callable[[str, str], tuple[Any, str | None]]) -> None:
        """Run a mechanical gate for every (request, scenario key) of ``todo`` without an artifact yet."""
        todo = [k for k in todo if self.artifact(k[0], step, k[1]) is None]
        if todo:
            self.say(f"{stage}: {step} for {len(todo)} item(s)")
        for rid, key in todo:
            try:
                value, reason = gate(rid, key)
            except Exception as exc:  # a generated world failing in a way no gate foresaw rejects only its item
                value, reason = None, f"the check failed: {type(exc).__name__}: {exc}"
            self._write(rid, step, key, value, reason)

    def world(self, rid: str, step: str) -> Any:
        """The loaded world of ``rid``'s ``class_code`` or ``dynamic`` source (loaded once per run)."""
        if (rid, step) not in self._worlds:
            self._worlds[(rid, step)], _ = checks.loaded_world(self.value(rid, step), self.isolate)
        return self._worlds[(rid, step)]

    def _loaded(self, source_step: str) -> Callable[[str, str], tuple[Any, str | None]]:
        def gate(rid: str, key: str) -> tuple[Any, str | None]:
            world, reason = checks.loaded_world(self.value(rid, source_step), self.isolate)
            if world is None:
                return None, reason
            self._worlds[(rid, source_step)] = world
            return {"tools": checks.tool_list(world), "predicates": checks.predicate_list(world)}, None
        return gate

    # ------------------------------------------------------------------ stages

    def run(self, stages: tuple[str, ...] = STAGES) -> dict:
        """Run ``stages`` in order, then summarise the work directory."""
        for stage in stages:
            self.run_stage(stage)
        return self.summary()

    def run_stage(self, stage: str) -> None:
        """Run one stage, timing it (the wall time, model and gates together, goes into the usage figures)."""
        if stage not in STAGES:
            raise ValueError(f"no stage {stage!r}; stages: {', '.join(STAGES)}")
        began = time.perf_counter()
        getattr(self, stage)()
        self._walls[stage] = self._walls.get(stage, 0.0) + time.perf_counter() - began

    def filter(self) -> None:
        requests = {r["id"]: r["request"] for r in self.requests()}
        if not requests:
            raise ValueError(f"{self.work} holds no requests: pass --requests FILE")
        self._ask("filter", PROMPTS["filter_stateful"],
                  {(rid, ""): {"request": text} for rid, text in requests.items()},
                  lambda rid, key, v: None if v.stateful else f"not stateful: {v.analysis[:300]}")
        self._ask("filter", PROMPTS["filter_sensitive"],
                  {(rid, ""): {"request": text} for rid, text in requests.items()
                   if self.alive(rid, "filter_stateful")},
                  lambda rid, key, v: None if v.keep and v.conflicts else
                  f"no spatio-temporal conflict fits: {v.analysis[:300]}")

    def environment(self) -> None:
        requests = {r["id"]: r["request"] for r in self.requests()}

        def ready(step: str) -> list[str]:
            return [rid for rid in requests if self.alive(rid, step)]

        self._ask("environment", PROMPTS["env_info"], {(rid, ""): {"request": requests[rid]}
                                                        for rid in ready("filter_sensitive")})
        self._ask("environment", PROMPTS["entities"], {(rid, ""): {**self._info(rid), "request": requests[rid]}
                                                        for rid in ready("env_info")})
        self._ask("environment", PROMPTS["tools"], {(rid, ""): {**self._info(rid), **self._state(rid),
                                                                "request": requests[rid]} for rid in ready("entities")})
        self._ask("environment", PROMPTS["class_code"],
                  {(rid, ""): {**self._info(rid), **self._state(rid), "tools": self.value(rid, "tools")["tools"]}
                   for rid in ready("tools")})
        self._check("environment", "static_world", [(rid, "") for rid in ready("class_code")],
                    self._static_world)

    def _info(self, rid: str) -> dict:
        info = self.value(rid, "env_info")
        return {"name": info["name"], "summary": info["summary"], "introduction": info["introduction"]}

    def _state(self, rid: str) -> dict:
        entities = self.value(rid, "entities")
        return {"entities": entities["entities"], "rules": entities["rules"]}

    def _static_world(self, rid: str, key: str) -> tuple[Any, str | None]:
        value, reason = self._loaded("class_code")(rid, key)
        if reason:
            return value, reason
        planned = {t["name"] for t in self.value(rid, "tools")["tools"]}
        missing = sorted(planned - {t["name"] for t in value["tools"]})
        return value, (f"the class lacks the planned tools {missing}" if missing else None)

    def validate(self) -> None:
        ready = [r["id"] for r in self.requests() if self.alive(r["id"], "static_world")]
        self._ask("validate", PROMPTS["test_configs"], {(rid, ""): {"code": self.value(rid, "class_code")}
                                                        for rid in ready})
        self._check("validate", "functional", [(rid, "") for rid in ready if self.alive(rid, "test_configs")],
                    lambda rid, key: checks.functional(self.world(rid, "class_code"),
                                                       self.value(rid, "test_configs", contract=TestConfigs).configs))

    def inject(self) -> None:
        ready = [r["id"] for r in self.requests() if self.alive(r["id"], "functional")]
        self._ask("inject", PROMPTS["conflict_assignment"],
                  {(rid, ""): {**self._info(rid), "tools": self.value(rid, "static_world")["tools"]} for rid in ready},
                  self._assignment_fits)
        assigned = [rid for rid in ready if self.alive(rid, "conflict_assignment")]
        todo = {}
        for rid in assigned:
            matches = {m["conflict"]: m for m in self.value(rid, "conflict_assignment")["matched"]}
            for key in self.scenarios(rid):
                conflict, level = key.split("-")
                todo[(rid, key)] = {**self._info(rid), "tools": self.value(rid, "static_world")["tools"],
                                    "conflict": conflict, "taxonomy": TAXONOMY[conflict],
                                    "rationale": matches[conflict]["rationale"], "level": level,
                                    "level_guide": LEVEL_GUIDE[level]}
        self._ask("inject", PROMPTS["blueprint"], todo, self._blueprint_fits)
        self._ask("inject", PROMPTS["dynamic"], {
            (rid, ""): {"code": self.value(rid, "class_code"),
                        "blueprints": {k: self.value(rid, "blueprint", k) for k in self.scenarios(rid, "blueprint")}}
            for rid in assigned if self.scenarios(rid, "blueprint")})
        self._check("inject", "dynamic_world", [(rid, "") for rid in assigned if self.alive(rid, "dynamic")],
                    self._dynamic_world)
        dynamic = [rid for rid in assigned if self.alive(rid, "dynamic_world")]
        self._ask("inject", PROMPTS["task_data"], {
            (rid, key): {"code": self.value(rid, "dynamic"), "conflict": key.split("-")[0], "level": key.split("-")[1],
                         "blueprint": self.value(rid, "blueprint", key, Blueprint).model_dump()}
            for rid in dynamic for key in self.scenarios(rid, "blueprint")})

    def _assignment_fits(self, rid: str, key: str, value: Any) -> str | None:
        tools = {t["name"]: t["kind"] for t in self.value(rid, "static_world")["tools"]}
        for match in value.matched:
            wrong = [t for t in match.activation if tools.get(t) != "write"] + \
                [t for t in match.observation if tools.get(t) != "read"]
            if wrong:
                return f"{match.conflict}: {wrong} are not writes (activation) or reads (observation) of the world"
        return None

    def _blueprint_fits(self, rid: str, key: str, value: Any) -> str | None:
        tools = {t["name"]: t["kind"] for t in self.value(rid, "static_world")["tools"]}
        unknown = sorted({s.tool for s in value.normal_flow + value.recovery_path} - set(tools))
        if unknown:
            return f"the flows name tools the world lacks: {unknown}"
        if tools.get(value.trigger.fires_during) != "write":
            return f"the change must be caused by a write; {value.trigger.fires_during!r} is not one"
        if value.trigger.fires_during not in {s.tool for s in value.normal_flow}:
            return f"the normal flow never calls {value.trigger.fires_during!r}, which causes the change"
        if tools.get(value.trigger.observable_via) != "read":
            return f"the change must show in a read; {value.trigger.observable_via!r} is not one"
        if (key.endswith("impossible")) != (value.impossible_rationale is not None) or \
                (not key.endswith("impossible") and not value.recovery_path):
            return "a solvable level needs a recovery path, the impossible level a rationale and no recovery"
        return None

    def _dynamic_world(self, rid: str, key: str) -> tuple[Any, str | None]:
        value, reason = self._loaded("dynamic")(rid, key)
        if reason:
            return value, reason
        before = {t["name"]: t for t in self.value(rid, "static_world")["tools"]}
        changed = sorted(n for n, t in before.items() if {x["name"]: x for x in value["tools"]}.get(n) != t)
        return value, (f"the dynamic world changed or dropped the validated tools {changed}" if changed else None)

    def assess(self) -> None:
        ready = [r["id"] for r in self.requests() if self.alive(r["id"], "dynamic_world")]
        todo = [(rid, key) for rid in ready for key in self.scenarios(rid, "task_data")]
        self._ask("assess", PROMPTS["checklist"], {(rid, key): {
            "predicates": self.value(rid, "dynamic_world")["predicates"],
            "tools": self.value(rid, "dynamic_world")["tools"], "level": key.split("-")[1],
            "level_guide": LEVEL_GUIDE[key.split("-")[1]],
            **{k: self.value(rid, "task_data", key)[k] for k in ("query", "trigger", "mutations", "oracle")}}
            for rid, key in todo})
        self._ask("assess", PROMPTS["plan_agent"], {(rid, key): {
            "query": self.value(rid, "task_data", key)["query"],
            "story": self._story(rid, key), "initial_state": self.value(rid, "task_data", key)["initial_state"],
            "tools": self.value(rid, "dynamic_world")["tools"]} for rid, key in todo})

        def pieces(rid: str, key: str) -> tuple:
            return (self.world(rid, "dynamic"), self.value(rid, "task_data", key, TaskData),
                    self.value(rid, "checklist", key, Checklist), self.value(rid, "plan_agent", key, NominalPlan),
                    *key.split("-"))

        self._check("assess", "assembled", [k for k in todo if self._passed(*k, "checklist", "plan_agent")],
                    lambda rid, key: checks.assemble(*pieces(rid, key)))
        self._check("assess", "dual_agent", [k for k in todo if self._passed(*k, "assembled")],
                    lambda rid, key: checks.dual_agent(
                        self.domain(rid), self.world(rid, "dynamic"), self.value(rid, "assembled", key),
                        self.value(rid, "blueprint", key, Blueprint).trigger.fires_during,
                        self.value(rid, "task_data", key, TaskData).mutations))
        self._ask("assess", PROMPTS["check_agent"], {(rid, key): {
            "story": self._story(rid, key), "trigger": self.value(rid, "task_data", key)["trigger"],
            "run": self.value(rid, "dual_agent", key)["run"]}
            for rid, key in todo if self._passed(rid, key, "dual_agent")},
            lambda rid, key, v: f"the check agent failed it: {v.reason}" if v.result == "fail" else None)
        self._check("assess", "rules", [k for k in todo if self._passed(*k, "check_agent")],
                    lambda rid, key: checks.rules(self.domain(rid), self.world(rid, "dynamic"),
                                                  self.value(rid, "assembled", key)))
        self._ask("assess", PROMPTS["auditor"], {(rid, key): {
            "conflict": key.split("-")[0], "taxonomy": TAXONOMY[key.split("-")[0]], "level": key.split("-")[1],
            "blueprint": self.value(rid, "blueprint", key), "task": self._audited(rid, key),
            "run": self.value(rid, "rules", key)["oracle_run"]} for rid, key in todo if self._passed(rid, key, "rules")},
            lambda rid, key, v: None if v.verdict == "pass" else f"the auditor found fatal issues: {v.fatal_issues}")
        for rid in ready:
            self.bundle(rid)

    def _passed(self, rid: str, key: str, *steps: str) -> bool:
        return all((a := self.artifact(rid, s, key)) is not None and a.ok for s in steps)

    def _story(self, rid: str, key: str) -> dict:
        blueprint = self.value(rid, "blueprint", key)
        return {k: blueprint[k] for k in ("user_goal", "normal_flow")}

    def _audited(self, rid: str, key: str) -> dict:
        task = self.value(rid, "assembled", key)
        return {**{k: task[k] for k in ("query", "initial_state", "triggers", "checklist", "static_checklist",
                                        "impossibility")},
                "mutations": self.value(rid, "task_data", key)["mutations"]}

    def domain(self, rid: str) -> str:
        """The domain name of ``rid``'s bundle: ``Synth<Name>``, plus the request id when an earlier request took it."""
        name = "Synth" + self.value(rid, "env_info")["name"]
        for request in self.requests():
            if request["id"] == rid:
                return name
            info = self.value(request["id"], "env_info")
            if info is not None and f"Synth{info['name']}" == name:
                return name + "".join(c for c in rid if c.isalnum())
        return name

    # ------------------------------------------------------------------ output

    def bundle(self, rid: str) -> Path | None:
        """Write ``rid``'s accepted tasks as a bundle (None when none was accepted)."""
        from sttgym.synth.bundle import write_bundle

        accepted = self.scenarios(rid, "auditor")
        if not accepted:
            return None
        name = self.domain(rid)
        tasks = [self.value(rid, "assembled", key) for key in accepted]
        verdicts = {key: {step: (a.reason or "passed") if (a := self.artifact(rid, step, key)) else "not run"
                          for _, step in SCENARIO_STEPS} for key in self.scenarios(rid)}
        path = self.work / "bundles" / name
        if _unchanged(path, tasks, verdicts):
            return path
        provenance = {**self.provenance, "prompts_hash": PROMPTS_HASH, "request_id": rid,
                      "request": next(r["request"] for r in self.requests() if r["id"] == rid),
                      "environment": self.value(rid, "env_info")["summary"],
                      "started": self.artifact(rid, "filter_stateful").at,
                      "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                      "artifacts": str(self.work / "requests" / rid)}
        world = self.world(rid, "dynamic")
        problems = checks.domain_rules(name, world, tasks)
        write_bundle(path, name, self.value(rid, "dynamic"), world.__name__, tasks, provenance, verdicts, problems)
        self.say(f"bundle {name}: {len(tasks)} task(s) -> {path}")
        for problem in problems:
            self.say(f"  sttgym validate over the bundle: {problem}")
        return path

    def rejected(self) -> list[dict]:
        """Every rejected candidate: the request or scenario, the stage and step, and why."""
        out = []
        for request in self.requests():
            rid = request["id"]
            for stage, step in UNIT_STEPS:
                found = self.artifact(rid, step)
                if found is not None and not found.ok:
                    out.append({"item": rid, "stage": stage, "step": step, "reason": found.reason})
                    break
            for key in self.scenarios(rid):
                for stage, step in SCENARIO_STEPS:
                    found = self.artifact(rid, step, key)
                    if found is not None and not found.ok:
                        out.append({"item": f"{rid}/{key}", "stage": stage, "step": step, "reason": found.reason})
                        break
        return out

    def summary(self) -> dict:
        """Bundles written, candidates rejected, and the model's usage per stage; saved as ``summary.json``."""
        bundles = sorted(str(p.parent) for p in (self.work / "bundles").glob("*/manifest.json"))
        usage_path = self.work / "usage.json"
        usage = json.loads(usage_path.read_text()) if usage_path.exists() else {}
        fresh = {stage: dict(totals) for stage, totals in (self.asker.usage if self.asker else {}).items()}
        for stage, seconds in self._walls.items():
            fresh.setdefault(stage, {})["wall_seconds"] = seconds
        for stage, totals in fresh.items():
            mine = usage.setdefault(stage, {k: 0 for k in ("calls", "prompt_tokens", "completion_tokens", "seconds",
                                                           "wall_seconds")})
            for k, v in totals.items():
                mine[k] = round(mine.get(k, 0) + v, 3)
        if fresh:
            usage_path.parent.mkdir(parents=True, exist_ok=True)
            usage_path.write_text(json.dumps(usage, indent=1))
        if self.asker is not None:
            self.asker.usage.clear()  # counted once, however often the summary is asked for
        self._walls.clear()
        scenarios = [(r["id"], k) for r in self.requests() for k in self.scenarios(r["id"])]
        out = {"requests": len(self.requests()), "scenarios": len(scenarios), "unanswered": self.unanswered,
               "accepted": sum(1 for rid, k in scenarios if self._passed(rid, k, "auditor")),
               "bundles": bundles, "rejected": self.rejected(), "usage": usage}
        (self.work / "summary.json").write_text(json.dumps(out, indent=1, ensure_ascii=False))
        (self.work / "rejected.json").write_text(json.dumps(out["rejected"], indent=1, ensure_ascii=False))
        return out


def _unchanged(path: Path, tasks: list[dict], verdicts: dict) -> bool:
    """Whether the bundle at ``path`` already holds ``tasks`` with ``verdicts`` (a resumed run rewrites nothing)."""
    from sttgym.synth.bundle import MANIFEST, TASKS

    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        return manifest["verdicts"] == verdicts and json.loads((path / TASKS).read_text(encoding="utf-8")) == tasks
    except (OSError, KeyError, ValueError):
        return False
