"""Import of the STT-Arena paper's artifact shapes: an environment class, blueprints and check functions.

The paper's pipeline leaves, per environment, a plain Python class built from an ``init_config``
dict (``self.vehicles = init_config.get("vehicles", {})``) whose methods return
``{"success": ...}`` dicts, blueprints (user goal, normal flow, conflict design with field-level
mutations) with their concrete data (user query, init config, concrete mutations, user profile),
and check functions ``check_x(env) -> (bool, message)``. :func:`import_paper` rewrites them into
sttgym's conventions and writes a bundle, through the same audit, sandbox and gates as the pipeline:

- the class becomes a :class:`~sttgym.world.World`: ``__init__`` goes (the state *is* the init
  config, every container it named present), methods in a section whose comment says state change
  (or named otherwise than ``get_``/``list_``/``search_``/...) become writes, the others reads;
- each check function becomes a predicate of the same name; ``getattr(env, "c", d)`` reads the
  state (``env.state.get("c", d)``), since generated code may not call ``getattr``;
- each blueprint becomes a task: the concrete mutations are a trigger's ``set_field`` effect,
  fired by the blueprint's ``fires_during`` write (default: the normal flow's first write; the
  paper activates on a read, which sttgym refuses: reading reveals a change, never causes one),
  observed through ``observable_via``; the checklist is the check functions, which score the outcome
  (noticing the change is the engine's to work out), each quoting in ``stated`` where the agent is
  told its rule; ``test_plan`` (the plan agent's format) is the nominal plan and ``solution`` the oracle.

A blueprint whose task fails a gate (dual-agent invariants, ``sttgym validate``'s rules) is left
out of the bundle and reported with the reason.
"""

from __future__ import annotations

import ast
import json
import re
import time
from pathlib import Path
from sttgym.synth import checks
from sttgym.synth.prompts import Mutation

__all__ = ["import_paper", "world_source"]

_READ_PREFIXES = ("get_", "list_", "search_", "find_", "check_", "view_", "query_", "lookup_", "show_", "read_",
                  "count_", "is_", "has_")
_WRITE_SECTION = re.compile(r"#.*(STATE[- ]CHANGE|ADMINISTRATIVE|MODIFICATION|WRITE)", re.IGNORECASE)
_PASSED = '''

def passed(result):
    """A paper check's verdict: (bool, message), {"passed": bool, ...} or a bool."""
    if isinstance(result, tuple):
        return bool(result[0])
    if isinstance(result, dict):
        return bool(result.get("passed"))
    return bool(result)
'''


class _EnvAccess(ast.NodeTransformer):
    """``getattr(x, "name", default)`` -> ``x.state.get("name", default)``."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) in (2, 3) \
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            state = ast.Attribute(value=node.args[0], attr="state", ctx=ast.Load())
            getter = ast.Attribute(value=state, attr="get", ctx=ast.Load())
            return ast.Call(func=getter, args=node.args[1:], keywords=[])
        return node


def _decorator(name: str, mutates: bool) -> ast.expr:
    if not mutates:
        return ast.Name(id=name, ctx=ast.Load())
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=[],
                    keywords=[ast.keyword(arg="mutates", value=ast.Constant(True)),
                              ast.keyword(arg="cost", value=ast.Constant(2))])


def world_source(env_source: str, checks_source: str, domain: str | None = None) -> tuple[str, str, dict]:
    """The World module for a paper-style class and its check functions: ``(source, domain, containers)`` where
    ``domain`` defaults to ``Synth<class name>`` and ``containers`` maps each state container ``__init__`` named to
    its default value."""
    tree, lines = ast.parse(env_source), env_source.splitlines()
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    if len(classes) != 1:
        raise ValueError(f"env.py must define exactly one class, not {len(classes)}")
    cls = classes[0]
    write_from = next((i + 1 for i, line in enumerate(lines) if _WRITE_SECTION.search(line)), None)
    containers, body = {}, []
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            containers = _containers(node)
        elif isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            mutates = node.lineno > write_from if write_from else not node.name.startswith(_READ_PREFIXES)
            node.decorator_list = [_decorator("tool", mutates)]
            body.append(node)
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            body.append(node)  # helpers the tools call
    check_tree = _EnvAccess().visit(ast.parse(checks_source))
    check_names = [n.name for n in check_tree.body if isinstance(n, ast.FunctionDef)]
    for node in check_tree.body:
        if isinstance(node, ast.FunctionDef):
            node.name = f"paper_{node.name}"
    for name in check_names:
        predicate = ast.parse(f"@predicate\ndef {name}(self) -> bool:\n    return passed(paper_{name}(self))\n").body[0]
        body.append(predicate)
    domain = domain or f"Synth{re.sub(r'(Env|Environment)$', '', cls.name)}"
    doc = ast.get_docstring(cls) or f"The {cls.name} environment."
    cls.bases, cls.keywords, cls.decorator_list = [ast.Name(id="World", ctx=ast.Load())], [], []
    cls.body = [*ast.parse(f"domain = {domain!r}\ndescription = {doc.splitlines()[0]!r}").body, *body]
    module = ast.Module(body=[*ast.parse("from sttgym.tools import fail, ok, tool\n"
                                         "from sttgym.world import World, predicate\n").body,
                              *[n for n in tree.body if n is not cls
                                and not isinstance(n, (ast.Import, ast.ImportFrom))],
                              *check_tree.body, cls], type_ignores=[])
    return ast.unparse(ast.fix_missing_locations(module)) + "\n" + _PASSED, domain, containers


def _containers(init: ast.FunctionDef) -> dict:
    """``self.c = init_config.get("c", default)`` statements of ``__init__``: container name -> default."""
    found = {}
    for statement in init.body:
        if isinstance(statement, ast.Expr):
            continue  # a docstring
        target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
        value = statement.value if isinstance(statement, ast.Assign) else None
        if isinstance(target, ast.Attribute) and target.attr.startswith("_"):
            continue  # the paper's trigger bookkeeping: here triggers are data
        if not (isinstance(target, ast.Attribute) and isinstance(value, ast.Call)
                and isinstance(value.func, ast.Attribute) and value.func.attr == "get" and value.args
                and isinstance(value.args[0], ast.Constant)):
            raise ValueError(f"__init__ line {statement.lineno}: only `self.c = init_config.get(\"c\", default)` "
                             "can be imported (a world's state is its init config)")
        found[value.args[0].value] = ast.literal_eval(value.args[1]) if len(value.args) > 1 else None
    return found


def _calls(steps: list[dict]) -> list[dict]:
    return [{"name": s["method"], "arguments": s.get("arguments", {}), "save_as": s.get("save_as")} for s in steps]


def _profile(item: dict) -> dict:
    paper = item.get("user_profile", {})
    clarifications = [{"keywords": [w.lower() for w in re.findall(r"[A-Za-z]{4,}", question)][:4] or [question],
                       "text": answer} for question, answer in paper.get("clarification_responses", {}).items()]
    return {"persona": paper.get("persona") or paper.get("persona_name") or "A user of the system.",
            "task_goal": paper.get("task_goal", item.get("user_goal", "")), "context": paper.get("context", ""),
            "tone": paper.get("tone") or paper.get("communication_style") or "Brief and polite.",
            "known_facts": paper.get("known_facts", []), "clarifications": clarifications,
            "insist": paper.get("decline_cancel_response") if item["difficulty"] == "impossible" else None,
            **{k: paper[k] for k in ("frustration_threshold", "flexibility") if k in paper}}


def _task(item: dict, world: type, containers: dict) -> tuple[dict, str, list]:
    """The task of one blueprint item, the write that should cause its change, and its declared mutations."""
    from sttgym.synth.prompts import Checklist, NominalPlan, TaskData

    tools = {t["name"]: t["kind"] for t in checks.tool_list(world)}
    design = item.get("conflict_design", {})
    writes = [s["operation"] for s in item.get("normal_flow", []) if tools.get(s["operation"]) == "write"]
    fires_during = design.get("fires_during") or (writes[0] if writes else None)
    if fires_during is None:
        raise ValueError("the normal flow has no write to cause the change (set conflict_design.fires_during)")
    mutations = [Mutation(path=[m["state_container"], m["entity_id"], *str(m["field"]).split(".")],
                          old=m["old_value"], new=m["new_value"]) for m in item["concrete_mutations"]]
    name = re.sub(r"\W+", "_", f"{item['conflict_type']}_{item['difficulty']}_change").lower()
    initial = {**containers, **item["init_config"]}
    data = TaskData.model_validate({
        "query": item["user_query"], "start_time": item["start_time"], "initial_state": initial,
        "profile": _profile(item), "mutations": [m.model_dump() for m in mutations],
        "oracle": _calls(item["solution"]), "final_reply": item.get("final_reply"),
        "trigger": {"name": name, "description": design.get("trigger_condition", "the world changes"),
                    "when": {"name": "all_of", "args": {"preds": []}}, "activation": [fires_during],
                    "effect": [{"name": "set_field", "args": {"path": m.path, "value": m.new}} for m in mutations],
                    "timing": item.get("timing", "before"),
                    "observable": {"tool": design.get("observable_via") or item["observable_via"], "args": {}}}})
    impossible = item["difficulty"] == "impossible"
    named = {} if impossible else item.get("checks", {})
    static = item.get("static_checks", item.get("checks", {}))
    stated = item.get("stated", {})
    unstated = sorted((set(named) | set(static)) - set(stated))
    if unstated:
        raise ValueError(f"checks {unstated} need \"stated\": a quote of where the agent is told the rule they check")

    def check(name: str, text: str) -> dict:
        return {"name": name, "description": text, "holds": {"name": name, "args": {}}, "stated": stated[name]}

    checklist = Checklist.model_validate({
        "checklist": [check(n, text) for n, text in named.items()],
        "static_checklist": [check(n, text) for n, text in static.items()],
        "impossibility": item.get("impossibility")})
    task, reason = checks.assemble(world, data, checklist, NominalPlan(plan=_calls(item["test_plan"])),
                                   item["conflict_type"], item["difficulty"])
    if reason:
        raise ValueError(reason)
    return task, fires_during, mutations


def import_paper(source: str | Path, out: str | Path, name: str | None = None,
                 isolate: bool = True) -> tuple[Path, dict[str, str]]:
    """Write the bundle of a directory of paper-shaped artifacts (``env.py``, ``blueprint.json``, ``checks.py``).

    Returns the bundle's path and, per blueprint left out, why. Raises ``ValueError`` when the
    environment itself cannot be imported or no blueprint survives.
    """
    from sttgym.synth.bundle import write_bundle

    source, out = Path(source), Path(out)
    try:
        env_source = (source / "env.py").read_text(encoding="utf-8")
        checks_source = (source / "checks.py").read_text(encoding="utf-8") if (source / "checks.py").exists() else ""
        items = json.loads((source / "blueprint.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{source}: needs env.py, blueprint.json (and checks.py): {exc}") from exc
    items = items if isinstance(items, list) else [items]
    try:
        module, domain, containers = world_source(env_source, checks_source, name)
    except SyntaxError as exc:
        raise ValueError(f"{source / 'env.py'} or checks.py does not parse: {exc}") from exc
    world, reason = checks.loaded_world(module, isolate)
    if world is None:
        raise ValueError(f"the imported environment is refused: {reason}")
    accepted, verdicts, rejected = [], {}, {}
    for number, item in enumerate(items):
        label = item.get("scenario_id") or f"blueprint {number}"
        try:
            task, fires_during, mutations = _task(item, world, containers)
            for gate, (_, why) in (("dual_agent", checks.dual_agent(domain, world, task, fires_during, mutations)),
                                   ("rules", checks.rules(domain, world, task))):
                if why:
                    raise ValueError(f"{gate}: {why}")
        except (KeyError, TypeError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
            rejected[label] = f"{type(exc).__name__}: {exc}" if isinstance(exc, KeyError) else str(exc)[:600]
            verdicts[label] = rejected[label]
            continue
        accepted.append(task)
        verdicts[label] = "passed"
    if not accepted:
        raise ValueError(f"no blueprint of {source} made a valid task: {rejected}")
    provenance = {"imported_from": str(source), "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    return write_bundle(out, domain, module, world.__name__, accepted, provenance, verdicts,
                        checks.domain_rules(domain, world, accepted)), rejected
