"""Every prompt the synthesis pipeline sends, as data, each with the contract its answer must meet.

A :class:`Template` is a system message (what the model is asked to be and do), a user message
with ``{fields}`` the stage fills in, and a contract: a pydantic model the answer's JSON must
validate against, or ``CODE`` for an answer that is one fenced Python block. The stages never
build prompt text themselves, so the whole conversation with the model is reviewable here, and
:data:`PROMPTS_HASH` (stored in every bundle's manifest) says which version of it made a bundle.

The templates follow the STT-Arena paper's pipeline (its two filters, environment information,
entity attributes, tool list, class code, test configurations, conflict assignment, blueprint,
dynamic construction, query/profile/initial state, checklist, plan agent, check agent and
consistency auditor), reworded for sttgym's conventions: triggers and checks are data naming
the world's predicates and operations, so the model writes those instead of editing tool code.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sttgym.registry import CONFLICTS, LEVELS
from sttgym.footprint import RULE
from sttgym.schema import Op, Pred
from sttgym.task import Call
from sttgym.synth.audit import ALLOWED_IMPORTS

__all__ = ["Template", "PROMPTS", "PROMPTS_HASH", "CODE", "TAXONOMY", "LEVEL_GUIDE", "render"]

CODE = "python"  # the contract of an answer that is one fenced Python block

# The nine conflict types, described for a model that has never seen the benchmark.
TAXONOMY: dict[str, str] = {
    "T1": "Window Expiry: something the plan relies on is valid only until a time (a hold, a booking window, "
          "opening hours) and lapses, or is cut short, while the agent works.",
    "T2": "Priority Reorder: a time the plan was built around moves (an earlier departure, an urgent job that "
          "must go first), so the order or timing of the steps is no longer valid.",
    "T3": "Quota Reset: a limited allowance (a quota, a promotion, a capacity for the day) runs out or is reset "
          "at a moment during the task.",
    "S1": "Site Mismatch: the resource the plan uses is moved to, or bound to, a different place than the plan "
          "assumes.",
    "S2": "Dependency Block: a place or facility the plan depends on (a branch, a warehouse, a gate) is locked, "
          "closed or put under a rule that blocks what happens there.",
    "S3": "Route Restriction: a path the plan uses (a road, a lane, a connection) is closed or restricted, so "
          "the plan needs another route or another way to get there.",
    "ST1": "Resource Shift: an event at some moment changes where resources are, or how many there are at a "
           "place.",
    "ST2": "Failure Cascade: a failure at one time and place spreads to what depends on it elsewhere.",
    "ST3": "Handoff Failure: a handoff that must meet in both time and place (a pickup, a transfer, a shuttle) "
           "stops being possible as planned.",
}

LEVEL_GUIDE: dict[str, str] = {
    "easy": "one corrective action after the change, and the change shows in the first read that follows it",
    "medium": "two or three replanning steps, and the change takes effect a little after the call that causes it",
    "hard": "a cascade: the change invalidates several steps already taken, and the whole plan must be rebuilt",
    "impossible": "after the change no valid completion exists: every alternative is blocked by a stated, "
                  "discoverable constraint, and the right answer is to tell the user so, naming the blocking fact",
}


# --------------------------------------------------------------------------- contracts


class Contract(BaseModel):
    """Base of the answers' shapes: unknown keys are ignored, missing or mistyped ones rejected."""

    model_config = ConfigDict(extra="ignore")


class Stateful(Contract):
    analysis: str
    stateful: bool


class Sensitive(Contract):
    analysis: str
    dependency: Literal["temporal", "spatial", "joint", "sequential", "none"]
    conflicts: list[str]
    keep: bool

    @field_validator("conflicts")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        unknown = [c for c in value if c not in CONFLICTS]
        if unknown:
            raise ValueError(f"unknown conflict codes {unknown}; known: {', '.join(CONFLICTS)}")
        return value


class EnvInfo(Contract):
    analysis: str
    name: str = Field(pattern=r"^[A-Z][A-Za-z0-9]{2,30}$")  # becomes the domain name: Synth<name>
    summary: str
    introduction: str
    usefulness: int = Field(ge=1, le=10)
    modelability: int = Field(ge=1, le=10)


class Entity(Contract):
    entity: str
    container: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    attributes: list[str] = Field(min_length=1)
    description: str


class Entities(Contract):
    analysis: str
    entities: list[Entity] = Field(min_length=1)
    rules: list[str]


class ToolIdea(Contract):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: Literal["read", "write"]
    description: str


class Tools(Contract):
    analysis: str
    tools: list[ToolIdea] = Field(min_length=2)


class TestCall(Contract):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    expect: Literal["success", "failure"]


class TestConfig(Contract):
    name: str
    start_time: str
    initial_state: dict[str, Any]
    calls: list[TestCall] = Field(min_length=1)


class TestConfigs(Contract):
    analysis: str
    configs: list[TestConfig] = Field(min_length=1)


class ConflictMatch(Contract):
    conflict: str
    rationale: str
    activation: list[str] = Field(min_length=1)
    observation: list[str] = Field(min_length=1)
    levels: list[str] = Field(min_length=1)

    @field_validator("conflict")
    @classmethod
    def _conflict(cls, value: str) -> str:
        if value not in CONFLICTS:
            raise ValueError(f"unknown conflict {value!r}")
        return value

    @field_validator("levels")
    @classmethod
    def _levels(cls, value: list[str]) -> list[str]:
        if not set(value) <= set(LEVELS):
            raise ValueError(f"levels must be among {LEVELS}")
        return value


class Conflicts(Contract):
    analysis: str
    matched: list[ConflictMatch] = Field(min_length=1)


class Step(Contract):
    tool: str
    purpose: str


class MutationIdea(Contract):
    state: str  # container.id.field
    change: str  # old -> new, in words


class TriggerDesign(Contract):
    condition: str
    mechanism: Literal["always_once", "conditional_guarded"]
    fires_during: str  # the write whose call causes the change
    recovery_guard: str | None = None
    mutations: list[MutationIdea] = Field(min_length=1)
    observable_via: str


class Blueprint(Contract):
    user_goal: str
    user_profile: str
    normal_flow: list[Step] = Field(min_length=2)
    trigger: TriggerDesign
    expected_post_trigger_state: str
    recovery_path: list[Step] = Field(default_factory=list)
    impossible_rationale: str | None = None


class Clarification(Contract):
    keywords: list[str] = Field(min_length=1)
    text: str


class Profile(Contract):
    persona: str
    task_goal: str
    context: str = ""
    tone: str = "Brief and polite."
    known_facts: list[str] = Field(default_factory=list)
    clarifications: list[Clarification] = Field(default_factory=list)
    insist: str | None = None
    frustration_threshold: Literal["low", "medium", "high"] = "medium"
    flexibility: Literal["low", "medium", "high"] = "medium"


class Observe(Contract):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class TriggerData(Contract):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str
    when: Pred
    effect: list[Op] = Field(min_length=1)
    activation: list[str] = Field(min_length=1)
    timing: Literal["before", "after"] = "before"
    mode: Literal["always_once", "conditional_guarded"] = "always_once"
    recovery: Pred | None = None
    observable: Observe


class Mutation(Contract):
    path: list[str] = Field(min_length=1)
    old: Any
    new: Any


class TaskData(Contract):
    query: str
    start_time: str
    initial_state: dict[str, Any]
    profile: Profile
    trigger: TriggerData
    mutations: list[Mutation] = Field(min_length=1)
    oracle: list[Call] = Field(min_length=1)
    final_reply: str | None = None  # impossible tasks: the oracle's refusal, naming the blocking fact


class CheckSpec(Contract):
    name: str
    description: str
    holds: Pred
    gate: bool = False
    # Where the agent is told the rule the check enforces, quoted word for word (sttgym validate finds it in what the
    # agent reads): a check may hold an agent only to what it was told.
    stated: str = Field(min_length=1)


class ImpossibilitySpec(Contract):
    blocking_facts: list[str] = Field(min_length=1)
    forbidden: list[CheckSpec] = Field(default_factory=list)


class Checklist(Contract):
    checklist: list[CheckSpec] = Field(default_factory=list)
    static_checklist: list[CheckSpec] = Field(min_length=1)
    impossibility: ImpossibilitySpec | None = None


class NominalPlan(Contract):
    plan: list[Call] = Field(min_length=1)


class Verdict(Contract):
    analysis: str
    result: Literal["pass", "warning", "fail"]
    reason: str


class Dimension(Contract):
    passed: bool
    reason: str


class Audit(Contract):
    verdict: Literal["pass", "fail"]
    checks: dict[str, Dimension]
    fatal_issues: list[str] = Field(default_factory=list)
    minor_issues: list[str] = Field(default_factory=list)

    @field_validator("checks")
    @classmethod
    def _every_dimension(cls, value: dict) -> dict:
        missing = [d for d in AUDIT_DIMENSIONS if d not in value]
        if missing:
            raise ValueError(f"checks lack {missing}")
        return value


AUDIT_DIMENSIONS = ("query_config_coherence", "story_query_alignment", "conflict_mutation_alignment",
                    "checklist_coverage", "difficulty_consistency", "narrative_consistency")


# --------------------------------------------------------------------------- templates


@dataclass(frozen=True)
class Template:
    name: str
    system: str
    user: str  # str.format template over the stage's fields
    contract: Any  # a Contract subclass, or CODE

    def messages(self, item: str, **fields: Any) -> list[dict]:
        """The conversation for one item (``item`` names it in the log and for a reviewer)."""
        body = self.user.format(**{k: render(v) for k, v in fields.items()})
        return [{"role": "system", "content": self.system}, {"role": "user", "content": f"Item: {item}\n\n{body}"}]


def render(value: Any) -> str:
    """A prompt field: text as it is, anything else as indented JSON."""
    return value if isinstance(value, str) else json.dumps(value, indent=1, ensure_ascii=False, default=str)


_JSON = "Answer with one JSON object and nothing else (a ```json fence around it is fine)."

_WORLD_RULES = """\
The code is one Python module for the sttgym engine:
- `from sttgym.tools import fail, ok, tool` and `from sttgym.world import World, operation, predicate`; other \
imports only as `from <module> import <name>` of: """ + ", ".join(m for m in ALLOWED_IMPORTS if m not in (
    "__future__", "sttgym.world", "sttgym.tools")) + """ (and `import math`).
- One class subclassing `World`, with class attributes `domain = "<Name>"` and `description = "<one line>"`.
- State is one JSON dict of containers: `self.state["books"]`, readable as `self.books`; name no container \
like a member of World (state, clock, now, holds, apply, next_id, all_of, any_of, none_of, noticed). No other \
instance attributes, no `__init__`: the engine builds the world from its initial state.
- Every tool is a method decorated `@tool` (a read, 1 simulated minute) or `@tool(mutates=True, cost=N)` (a change \
taking N minutes), with type hints (str, int, float, bool, list[str], dict) and a Google docstring whose `Args:` \
section documents each parameter: the agent's JSON schema comes from them.
- Tools never raise: check that every id exists and every value makes sense, change nothing before a failure, \
and return `ok(data)` for a read, `ok(message="...")` for a change, `fail("reason")` otherwise.
- The simulated time is `self.now` (ISO text) and `self.clock.minutes`; never read the wall clock, never draw \
random numbers, never touch files, the network or the interpreter (no dunder attributes, no exec, eval, open, \
getattr, type, globals, str.format: use f-strings), no attribute assignment, no `with`, `yield` or `global`."""

FILTER_STATEFUL = Template("filter_stateful", f"""\
You screen user requests for a benchmark of tool-using agents. Keep a request only when every point holds:
1. It is about a persistent, domain-specific system (bookings, inventory, logistics, scheduling, records) \
whose live state can be both read and changed.
2. Doing it needs that state: reading current records and/or changing them. General knowledge is not enough.
3. It asks for a concrete, actionable operation on that system, not a hypothetical.
Reject open-domain questions, chit-chat, content writing, and calculations that need no stored state. Be strict: \
if any point fails, the request is not stateful.
{_JSON} Keys: "analysis" (your reasoning), "stateful" (true or false).""",
                           "Request:\n{request}", Stateful)

FILTER_SENSITIVE = Template("filter_sensitive", f"""\
You judge whether a stateful request can host a spatio-temporal conflict: a change of the world, while a \
competent agent carries the request out step by step, that invalidates its plan. The conflict types:
{chr(10).join(f"- {code}: {text}" for code, text in TAXONOMY.items())}
Keep the request only if at least one type arises naturally on the normal path of doing it, and the request \
needs enough dependent steps for the change to matter and to be observable. Prefer rejecting simple \
create/read/update requests and requests whose time or place words are decoration.
{_JSON} Keys: "analysis", "dependency" (temporal, spatial, joint, sequential or none), "conflicts" (the \
codes that fit, may be empty), "keep" (true or false).""",
                            "Request:\n{request}", Sensitive)

ENV_INFO = Template("env_info", f"""\
You are a systems analyst. Given a user request, name the stateful system in which it would naturally be \
done: broad enough to host many similar requests, narrow enough to be modelled as one Python class with \
state and operations. If several systems fit, choose one.
{_JSON} Keys: "analysis", "name" (a CamelCase name of 3 to 31 letters and digits, e.g. CityLibrary), \
"summary" (a short label), "introduction" (about three sentences on the system itself, its state and \
operations, not on this request), "usefulness" and "modelability" (1 to 10).""",
                    "Request:\n{request}", EnvInfo)

ENTITIES = Template("entities", f"""\
You design the state of a simulated system. Given its summary, introduction and an example request, list \
the entities it keeps: each is one container of the state (a dict from id to record), with its attributes \
and role. Cover the example and similar requests, not every feature of a real system. Include the places \
and times that matter (sites, opening hours, windows, travel links) so that time and space can change. Then \
list the system's rules (capacities, time windows, permissions, dependencies).
{_JSON} Keys: "analysis", "entities" (a list of {{"entity", "container" (snake_case), "attributes" \
(a list), "description"}}), "rules" (a list of sentences).""",
                    "System: {summary}\n{introduction}\n\nExample request:\n{request}", Entities)

TOOLS = Template("tools", f"""\
You design the operations an agent can call on a simulated system. Given its description, state and rules \
and an example request, list the operations needed for that request and similar ones: reads that show the \
current state (include listing operations, so every id an agent needs can be discovered) and writes that \
change it. Every write must be checkable against the rules.
{_JSON} Keys: "analysis", "tools" (a list of {{"name" (snake_case), "kind" ("read" or "write"), \
"description"}}).""",
                 "System: {summary}\n{introduction}\n\nState:\n{entities}\n\nRules:\n{rules}\n\n"
                 "Example request:\n{request}", Tools)

CLASS_CODE = Template("class_code", f"""\
You implement a simulated system as Python code. Write the whole class: every operation listed, working \
on the state described, respecting its rules.
{_WORLD_RULES}
Answer with the module in one ```python fence and nothing else.""",
                      "System {name}: {summary}\n{introduction}\n\nState:\n{entities}\n\nRules:\n{rules}\n\n"
                      "Operations:\n{tools}", CODE)

TEST_CONFIGS = Template("test_configs", f"""\
You test a simulated system before it is used. Given its code, write test configurations: each is an \
initial state (every container, 2 to 4 realistic records each, all references consistent, ISO times), a \
start time, and a sequence of tool calls with the outcome each must have: "success" for valid calls, \
"failure" for calls the tool must refuse (unknown ids, values the rules forbid, a second booking of the \
same thing). Cover every tool at least once with a valid call, and each write with at least one refusal.
{_JSON} Keys: "analysis", "configs" (a list of {{"name", "start_time", "initial_state", "calls" (a list \
of {{"name", "arguments", "expect"}})}}).""",
                        "Code:\n```python\n{code}\n```", TestConfigs)

CONFLICT_ASSIGNMENT = Template("conflict_assignment", f"""\
You design benchmark scenarios for tool-using agents. Given a simulated system, choose the conflict types \
its state and tools can support: a write of the normal workflow can cause the change, the change is a \
field-level update of the state, and a read shows it afterwards. The types:
{chr(10).join(f"- {code}: {text}" for code, text in TAXONOMY.items())}
For each type you keep, give the levels to build. Levels:
{chr(10).join(f"- {level}: {text}" for level, text in LEVEL_GUIDE.items())}
{_JSON} Keys: "analysis", "matched" (a list of {{"conflict", "rationale", "activation" (writes that can \
cause it), "observation" (reads that show it), "levels"}}).""",
                               "System {name}: {summary}\nTools:\n{tools}", Conflicts)

BLUEPRINT = Template("blueprint", f"""\
You write the blueprint of one benchmark scenario: the contract every later artifact must agree with. Be \
concrete: exact tool names, exact state containers and fields.
Rules:
- The normal flow is the plan that reaches the user's goal when nothing changes, using only the system's tools.
- The change is caused by one of the normal flow's writes (`fires_during`), by the time it happens or by the \
state; reading never causes a change, so an agent that skips every read still meets it.
- Mutations are field-level: container.id.field and its old and new value in words.
- `observable_via` is a read that shows the changed fields.
- The mechanism is always_once (fires once) or conditional_guarded (keeps re-applying until a recovery guard holds).
- Solvable levels give the recovery path (steps with real tools); the impossible level gives the rationale \
(which stated, discoverable constraint blocks every alternative) and an empty recovery path.
{_JSON} Keys: "user_goal", "user_profile" (who asks, in a sentence), "normal_flow" (a list of {{"tool", \
"purpose"}}), "trigger" ({{"condition", "mechanism", "fires_during", "recovery_guard", "mutations" (a list \
of {{"state", "change"}}), "observable_via"}}), "expected_post_trigger_state", "recovery_path" (a list of \
{{"tool", "purpose"}}), "impossible_rationale" (null unless impossible).""",
                     "System {name}: {summary}\nTools:\n{tools}\n\nConflict {conflict}: {taxonomy}\nWhy it fits: "
                     "{rationale}\n\nLevel {level}: {level_guide}", Blueprint)

DYNAMIC = Template("dynamic", f"""\
You make a simulated system dynamic. Triggers and checklists are data that name the world's predicates \
(yes/no questions about the state, methods decorated `@predicate` returning bool) and operations (changes \
the world makes by itself, methods decorated `@operation`); they are never written into tool code. Every \
world already has the predicates `all_of(preds)`, `any_of(preds)`, `none_of(preds)`, `time_reached(moment)`, \
`field_equals(path, value)`, `noticed(trigger)`, `acted_on(trigger)`, `asked_user(about, before)` and the \
operation `set_field(path, value)`. Add to the class the predicates and operations that the blueprints below \
need: their trigger conditions, their changes when one field is not enough, and what their checklists will ask \
of the final state (a booking made, a deadline met). A predicate may take the parameter `ctx` (the call being \
made: ctx.tool, ctx.arguments, ctx.now). Keep every tool as it is.
{_WORLD_RULES}
Answer with the whole modified module in one ```python fence and nothing else.""",
                   "Code:\n```python\n{code}\n```\n\nBlueprints:\n{blueprints}", CODE)

TASK_DATA = Template("task_data", f"""\
You turn a blueprint into one executable task. Produce:
- "query": the user's request in 2 to 5 sentences, with every id, date, place and quantity needed, matching \
the initial state exactly, and never hinting that anything will change;
- "start_time" (ISO) and "initial_state": every container of the world, enough entities for both the normal \
and the recovery path (at least one alternative), references consistent;
- "profile": {{"persona", "task_goal", "context", "tone", "known_facts", "clarifications" (a list of \
{{"keywords", "text"}}), "insist" (impossible tasks: the user's answer to any change of plan, else null), \
"frustration_threshold", "flexibility"}}; the user accepts a reasonable alternative on solvable tasks and \
insists on the original on impossible ones, and never reveals the change;
- "trigger": {{"name" (snake_case), "description", "when" (a predicate: {{"name", "args"}}), "effect" (a \
list of operations), "activation" (the write tools during whose calls `when` is checked), "timing" ("before" \
or "after" that call), "mode", "recovery" (a predicate or null), "observable" ({{"tool", "args"}}: the read \
that shows the change)}};
- "mutations": every field the trigger changes, as {{"path" (a list of keys), "old" (exactly as in the \
initial state), "new"}};
- "oracle": the solution a careful agent would run, as a list of {{"name", "arguments", "save_as"}}: the \
normal flow until the change, a read that shows it, then the recovery (impossible tasks: the read that shows \
the blocking fact). Every argument value must appear in the query or in an earlier result; a value the \
world creates is taken from an earlier call's result with {{"ref": "result", "step": "<save_as>", "path": \
["data", "<key>"]}};
- "final_reply": impossible tasks: the oracle's message to the user, one sentence saying the request cannot be \
met and naming the blocking fact; else null.
{_JSON}""",
                     "Code:\n```python\n{code}\n```\n\nBlueprint ({conflict}, {level}):\n{blueprint}", TaskData)

CHECKLIST = Template("checklist", f"""\
You write the checklist a finished episode is scored by. Every check names a predicate of the world with \
JSON arguments ({{"name", "args"}}) and holds or not on the final state; the reward is the fraction of \
milestone checks that hold, 0 if a gate check fails.
- "checklist" (solvable tasks): milestones that score the outcome on the final state: the stale plan unwound \
(what the nominal plan made that no longer serves, cancelled or released), the alternative secured, the goal \
met; plus gates for constraints no outcome may break. Score outcomes only: no check for reading or noticing \
the change (the engine works out by itself what the agent saw), and none that the nominal plan, or the \
nominal plan's writes redone without reading, would pass after the change. None may hold in the initial \
state, and the oracle must pass all of them. Impossible tasks: an empty list.
- Every check has "stated": a quote, word for word, of where the agent is told the rule it enforces: a phrase \
of the query, of a tool's description, of a result the oracle's calls return, or of the rule every agent is \
told: "{RULE}"
- "static_checklist": the original goal as the nominal plan reaches it when nothing changes.
- "impossibility" (impossible tasks only, else null): {{"blocking_facts" (the new values the change brought, \
as the agent would read them), "forbidden" (gate checks that must still hold: nothing done anyway)}}.
Use only the predicates listed.
{_JSON}""",
                     "Predicates:\n{predicates}\n\nTools:\n{tools}\n\nQuery: {query}\n\nTrigger:\n{trigger}\n\n"
                     "Mutations:\n{mutations}\n\nOracle:\n{oracle}\n\nLevel {level}: {level_guide}", Checklist)

PLAN_AGENT = Template("plan_agent", f"""\
You are the plan agent of a scenario check. Write the complete tool-call plan that carries out the user's \
request as the story's normal flow does, assuming nothing changes: the plan a capable agent would make \
after reading the request and the initial state. Use only the tools listed and argument values grounded in \
the request and the initial state; a value the world creates (a new booking id) is taken from an earlier \
call's result with {{"ref": "result", "step": "<save_as of that call>", "path": ["data", "<key>"]}}.
{_JSON} Keys: "plan" (a list of {{"name", "arguments", "save_as"}}).""",
                      "Query: {query}\n\nStory:\n{story}\n\nInitial state:\n{initial_state}\n\nTools:\n{tools}",
                      NominalPlan)

CHECK_AGENT = Template("check_agent", f"""\
You are the check agent of a scenario check. The nominal plan was run in the dynamic world; read the calls, \
their results and the change that fired. Judge: does the path follow the story's normal flow; do the tools \
behave as they should (no unexpected errors); did the change fire at the intended point and do what the \
story says; does it disrupt the plan? "pass" when all hold, "warning" when the path is right but the \
evidence is slightly incomplete, "fail" otherwise.
{_JSON} Keys: "analysis", "result" ("pass", "warning" or "fail"), "reason".""",
                       "Story:\n{story}\n\nChange:\n{trigger}\n\nRun:\n{run}", Verdict)

AUDITOR = Template("auditor", f"""\
You audit one benchmark scenario for internal consistency across all its artifacts. Look for concrete \
contradictions, missing links and implausible transitions in these dimensions: query_config_coherence (does \
the query match the ids, values and times of the initial state), story_query_alignment (do the goal, normal \
flow and recovery support the query), conflict_mutation_alignment (do the mutations implement the claimed \
conflict type), checklist_coverage (do the checks test the key success and failure conditions), \
difficulty_consistency (does the complexity fit the level), narrative_consistency (one coherent story). A \
contradiction that would make the scenario invalid or misleading is fatal. Do not score.
{_JSON} Keys: "verdict" ("pass" only without fatal issues, else "fail"), "checks" (one {{"passed", \
"reason"}} per dimension), "fatal_issues", "minor_issues".""",
                   "Conflict {conflict} ({taxonomy}), level {level}\n\nBlueprint:\n{blueprint}\n\nTask:\n{task}\n\n"
                   "Oracle run:\n{run}", Audit)

PROMPTS: dict[str, Template] = {t.name: t for t in (
    FILTER_STATEFUL, FILTER_SENSITIVE, ENV_INFO, ENTITIES, TOOLS, CLASS_CODE, TEST_CONFIGS, CONFLICT_ASSIGNMENT,
    BLUEPRINT, DYNAMIC, TASK_DATA, CHECKLIST, PLAN_AGENT, CHECK_AGENT, AUDITOR)}

PROMPTS_HASH = hashlib.sha256(json.dumps(
    [[t.name, t.system, t.user, t.contract if t.contract == CODE else t.contract.__name__] for t in PROMPTS.values()]
).encode()).hexdigest()[:16]
