"""Playing the benchmark through a shell: a person at a prompt, or an agent one command at a time.

``sttgym play start ID --seed N`` prints what an agent is told when an episode starts (the rules, the
environment, the tools, the request) and saves a *session*: the id, the seed and the actions so far. Each
``sttgym play step ACTION`` replays the session's actions on a fresh env (a seed fixes an episode, so the
replay is the episode itself), takes the new action and prints only what it brings back, exactly what a model
would read next. ``--interactive`` plays the episode at a prompt instead.

An action is the env's own JSON (``{"name": ..., "arguments": {...}}`` or ``{"content": ...}``), the short
form ``name key=value ...`` (a value in JSON, in single quotes, or a bare word: text where the tool expects
text, else read as JSON), or the final reply
``Task Completed``. Text that is none of these is refused without costing a turn: it is a typing slip, not a
move in the episode.

When the episode ends its record is appended to ``OUT/trajectories.jsonl`` exactly as ``sttgym eval`` writes
it, with ``OUT/config.json`` beside it, so ``sttgym view`` and ``sttgym report`` read playtests like any run.
The score is printed at the end, or never with ``blind`` (for playtests whose players must not learn the
checklist). :func:`review` writes what a reviewer reads instead: the transcript, what changed in the world,
and the final state, but no score.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from sttgym.agents.base import Agent
from sttgym.rollout import Trajectory, rollout

__all__ = ["Session", "ActionError", "parse_action", "tool_cards", "briefing", "Played", "replay", "start", "step",
           "review", "VERDICTS", "FAILURES", "reviewed", "agrees", "corpus_stats", "stats_markdown", "DEFAULT_SESSION"]

DEFAULT_SESSION = Path("play-session.json")


class ActionError(ValueError):
    """Text that is not an action; nothing was sent to the env."""


@dataclass
class Session:
    """One episode being played: which instance, the actions so far, and where its record goes."""

    env_id: str
    seed: int
    actions: list[dict] = field(default_factory=list)
    out: str = "runs/play"
    player: str = "player"
    blind: bool = False
    recorded: bool = False  # the finished episode's record has been written

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps(asdict(self), indent=1, ensure_ascii=False), encoding="utf-8")
        partial.replace(path)  # a killed write leaves the old session, never half of one

    @classmethod
    def load(cls, path: Path) -> "Session":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(**data)
        except FileNotFoundError:
            raise ActionError(f"no session at {path}: start one with sttgym play start ID --seed N") from None
        except (ValueError, TypeError) as exc:
            raise ActionError(f"{path} is not a session sttgym play wrote ({exc})") from None


class _Replay(Agent):
    """Plays back recorded actions, in order, keeping what the episode started with."""

    def __init__(self, actions: list[dict]):
        self.actions = actions

    def reset(self, observation: str, info: dict, env: gym.Env | None = None, seed: int | None = None) -> None:
        self.index, self.request, self.info = 0, observation, info

    def act(self, observation: str, info: dict) -> dict:
        self.index += 1
        return self.actions[self.index - 1]


@dataclass
class Played:
    """A session replayed: the env as the last action left it, the trajectory so far, and the briefing facts."""

    env: gym.Env
    trajectory: Trajectory
    request: str
    reset_info: dict

    @property
    def ended(self) -> bool:
        return self.trajectory.terminated or self.trajectory.truncated

    @property
    def tools(self) -> list[dict]:
        return self.reset_info.get("tools", [])


def replay(env_id: str, seed: int, actions: list[dict]) -> Played:
    """The episode of ``env_id`` at ``seed`` after ``actions`` (it may have ended before the last of them)."""
    from sttgym.registry import arena_ids

    if env_id not in arena_ids():  # an id from a file is checked against the registry before anything is built
        raise ActionError(f"unknown arena id {env_id!r}; sttgym list prints them")
    env, player = gym.make(env_id), _Replay(actions)
    trajectory = rollout(env, player, seed=seed, max_steps=len(actions))
    return Played(env, trajectory, player.request, player.info)


# ------------------------------------------------------------------------------ what the player reads


def tool_cards(tools: list[dict]) -> str:
    """The tools in a readable form: a signature line, the description, one line per parameter."""
    cards = []
    for schema in tools:
        function = schema.get("function", schema)
        params = function.get("parameters", {})
        required = set(params.get("required", []))
        signature, lines = [], []
        for name, spec in params.get("properties", {}).items():
            kind = " | ".join(map(json.dumps, spec["enum"])) if "enum" in spec else _type_name(spec)
            signature.append(f"{name}: {kind}" + ("" if name in required else " (optional)"))
            if spec.get("description"):
                lines.append(f"    {name}: {spec['description']}")
        cards.append("\n".join([f"{function['name']}({', '.join(signature)})", f"    {function.get('description', '')}",
                                *lines]))
    return "\n\n".join(cards)


def _type_name(spec: dict) -> str:
    kind = spec.get("type", "any")
    if kind == "array":
        return f"list of {_type_name(spec.get('items', {}))}"
    return kind if isinstance(kind, str) else " | ".join(kind)


def briefing(played: Played) -> str:
    """What an LLM agent is told when the episode starts: the system prompt's rules, the environment and the
    clock, then the tools and the user's request."""
    from sttgym.agents.llm import LLMAgent

    agent = LLMAgent(model=None)
    agent.reset(played.request, played.reset_info)
    return "\n\n".join([agent.system_prompt(), "Tools (call one per turn):", tool_cards(played.tools),
                        f"The user's request:\n{played.request}"])


def parse_action(text: str, tools: list[dict]) -> dict:
    """The env action ``text`` stands for (see the module docstring), or an :class:`ActionError` saying why not."""
    from sttgym.agents.llm import is_final_reply

    text = text.strip()
    if not text:
        raise ActionError("empty action")
    if text.startswith("{"):
        try:
            action = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ActionError(f"not valid JSON: {exc}") from None
        if not isinstance(action, dict):
            raise ActionError("an action is a JSON object")
        return action
    if is_final_reply(text):
        return {"content": text}
    schemas = {t.get("function", t).get("name"): t.get("function", t) for t in tools}
    name, _, rest = text.partition(" ")
    if name not in schemas:
        raise ActionError(f"{name!r} is not a tool; call one as `name key=value ...` or as JSON, or finish with "
                          "`Task Completed`")
    properties = schemas[name].get("parameters", {}).get("properties", {})
    return {"name": name, "arguments": _arguments(rest, properties)}


_DECODER = json.JSONDecoder()


def _arguments(text: str, properties: dict) -> dict[str, Any]:
    """``key=value ...``: a value is JSON when it starts as JSON does (``"..."``, ``[...]``, ``{...}``), text in single
    quotes, or a bare word, read as JSON unless the tool wants text there."""
    arguments: dict[str, Any] = {}
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            return arguments
        key, sep, _ = text[position:].partition("=")
        if not sep or not key or any(c.isspace() for c in key):
            raise ActionError(f"{text[position:].split()[0]!r}: give each argument as key=value")
        position += len(key) + 1
        start = text[position:position + 1]
        if start in ('"', "[", "{"):
            try:
                value, position = _DECODER.raw_decode(text, position)
            except json.JSONDecodeError as exc:
                raise ActionError(f"the value of {key} is not valid JSON: {exc}") from None
        elif start == "'":
            end = text.find("'", position + 1)
            if end < 0:
                raise ActionError(f"the value of {key} opens a quote it never closes")
            value, position = text[position + 1:end], end + 1
        else:
            end = next((i for i in range(position, len(text)) if text[i].isspace()), len(text))
            value, position = text[position:end], end
            if properties.get(key, {}).get("type") != "string":  # a number, a flag...: written as JSON
                try:
                    value = json.loads(value)
                except json.JSONDecodeError:
                    pass  # the env says what it expected
        arguments[key] = value


# ------------------------------------------------------------------------------ the stateless commands


def start(path: Path, env_id: str, seed: int, out: str = "runs/play", player: str = "player",
          blind: bool = False) -> str:
    """Start a session at ``path`` (replacing one there); the briefing to print."""
    session = Session(env_id=env_id, seed=seed, out=out, player=player, blind=blind)
    text = briefing(replay(env_id, seed, []))
    session.save(path)
    return text


def step(path: Path, text: str) -> str:
    """Take one action in the session at ``path``; what it brings back (and, at the end, how the episode ended)."""
    session = Session.load(path)
    before = replay(session.env_id, session.seed, session.actions)
    if before.ended:
        return "The episode has ended. Start another with sttgym play start."
    action = parse_action(text, before.tools)
    session.actions.append(action)
    played = replay(session.env_id, session.seed, session.actions)
    lines = [played.trajectory.steps[-1]["observation"]]
    if played.ended:
        lines.append(conclude(session, played))
    session.save(path)
    return "\n".join(lines)


def conclude(session: Session, played: Played) -> str:
    """Write the ended episode's record (once) and say how it ended (its score unless the session is blind)."""
    if not session.recorded:
        write_record(Path(session.out), session, played.env, played.trajectory)
        session.recorded = True
    end = "The episode has ended" + (" (the turn limit was reached)" if played.trajectory.truncated else "") + "."
    if session.blind:
        return end
    info = played.trajectory.info
    lines = [f"{end} Score: {played.trajectory.reward:.3f}"]
    lines += [f"  [{'x' if c['passed'] else ' '}] {'gate' if c.get('gate') else 'milestone'} {c['name']}: "
              f"{c.get('description', '')}" for c in info.get("checklist", [])]
    return "\n".join(lines)


def write_record(out: Path, session: Session, env: gym.Env, trajectory: Trajectory) -> dict:
    """Append the episode's record to ``out/trajectories.jsonl`` (config.json beside it, as sttgym eval writes)."""
    from sttgym.evaluation.runner import (CONFIG, PLAYER, TRAJECTORIES, Episode, EvalConfig, append_record,
                                          episode_record, load_records)

    out.mkdir(parents=True, exist_ok=True)
    config_path, records = out / CONFIG, load_records(out / TRAJECTORIES)
    if config_path.exists():
        saved = json.loads(config_path.read_text(encoding="utf-8"))
        if saved.get("agent") != PLAYER:
            raise ActionError(f"{out} holds a run of {saved.get('agent')!r}, not played episodes; use another --out")
    run = sum(1 for r in records.values() if (r["env_id"], r["seed"]) == (session.env_id, session.seed))
    runs = max([run + 1, *(r["run"] + 1 for r in records.values())])
    config = EvalConfig(agent=PLAYER, runs=runs)
    config_path.write_text(json.dumps(config.to_dict(), indent=1), encoding="utf-8")
    record = episode_record(Episode("dynamic", session.env_id, session.seed, run), session.player, env, None,
                            trajectory, None, 0.0)
    append_record(out / TRAJECTORIES, record)
    return record


# ------------------------------------------------------------------------------ what a reviewer reads


def review(env_id: str, seed: int, actions: list[dict], key: str | None = None) -> str:
    """An episode as its reviewer reads it: the request, whether a valid completion existed (and the reference
    solution's writes or refusal), the tools the agent had, the transcript with the simulated clock, what the world did by itself, and
    how the final state differs from the start. No checklist and no score. ``key``: the episode's key in its run,
    which ``sttgym play label`` takes."""
    from sttgym.agents import OracleAgent
    from sttgym.triggers import diff

    played = replay(env_id, seed, actions)
    task = played.env.unwrapped.task
    reference = rollout(gym.make(env_id), OracleAgent(), seed=seed)
    writes = [s for s in reference.steps if "name" in s["action"]
              and played.env.unwrapped.tools[s["action"]["name"]].mutates]
    lines = [f"# {env_id} seed {seed}", *([f"Episode key (for sttgym play label): {key}"] if key else []), "",
             "## The request", played.request, "",
             f"Environment: {played.reset_info.get('world', '')}", f"The episode starts at {task.start_time}.", ""]
    if task.solvable:
        lines += ["## Ground truth: a valid completion exists. The reference solution's writes were:"]
        lines += [f"- {_call_text(s['action'])}" for s in writes] or ["- (none)"]
    else:
        lines += ["## Ground truth: no valid completion exists. The reference solution told the user:",
                  next((s["action"]["arguments"].get("message", "") for s in reversed(reference.steps)
                        if s["action"].get("name") == "chat_with_user"), "")]
    lines += ["", "## The tools the agent had (what it could and could not do)", tool_cards(played.tools)]
    lines += ["", "## The episode"]
    for number, s in enumerate(played.trajectory.steps, 1):
        action = s["action"]
        said = _call_text(action) if "name" in action else f"REPLY {action.get('content', action)!r}"
        lines += [f"{number}. [{s.get('clock')}] {said}", f"   -> {s['observation']}"]
    lines += ["", "## What the world did by itself"]
    events = played.env.unwrapped.log.events
    for event in events:
        changes = "; ".join(f"{c['path']}: {json.dumps(c['old'])} -> {json.dumps(c['new'])}" for c in event["changes"])
        lines.append(f"- at {event['at']} (during {event['during']}): {changes}")
    if not events:
        lines.append("- nothing")
    lines += ["", "## The final state, where it differs from the start (the agent's writes and the world's changes)"]
    changed = diff(task.initial_state, played.env.unwrapped.world.state)
    lines += [f"- {c['path']}: {json.dumps(c['old'])} -> {json.dumps(c['new'])}" for c in changed
              if not c["path"].startswith("counters")] or ["- nothing"]
    if not played.ended:
        lines += ["", "(The episode had not ended: the player stopped before a final reply.)"]
    return "\n".join(lines)


# A reviewer's verdicts, and which of them the score must call a success (reward 1.0).
VERDICTS = {"met": True, "not_met": False, "correct_refusal": True, "wrong_refusal": False}


def reviewed(record: dict, verdict: str, reason: str, reviewer: str, category: str | None = None) -> dict:
    """A played episode's record as a row of a reviewed corpus: the instance (with its task's digest, so a row whose
    instance has since changed is noticed), the actions, and the review; a failure names its ``category`` (one of
    :data:`FAILURES`), a success none."""
    from sttgym.manifests import digest, task_of

    if verdict not in VERDICTS:
        raise ActionError(f"a verdict is one of {', '.join(VERDICTS)}, not {verdict!r}")
    if not reason.strip():
        raise ActionError("give the review's reason in a line")
    if VERDICTS[verdict] and category is not None:
        raise ActionError(f"{verdict} is a success: a category names why an episode failed")
    if not VERDICTS[verdict] and category not in FAILURES:
        raise ActionError(f"say why it failed with --category: one of {', '.join(FAILURES)} (a failure that is "
                          "not the agent's mistake is a benchmark defect, not a category)")
    return {"env_id": record["env_id"], "seed": record["seed"], "digest": digest(task_of(record["env_id"],
                                                                                         record["seed"])),
            "player": record.get("agent", ""), "actions": [s["action"] for s in record["steps"]],
            "verdict": verdict, "reason": reason.strip(), "reviewer": reviewer,
            **({"category": category} if category else {})}


def agrees(row: dict) -> tuple[bool, float]:
    """Whether replaying a corpus row scores as its review says (a success exactly for ``met`` and
    ``correct_refusal``), and the reward."""
    played = replay(row["env_id"], row["seed"], row["actions"])
    reward = played.trajectory.reward if played.ended else 0.0
    return (reward >= 1.0) == VERDICTS[row["verdict"]], reward


# ------------------------------------------------------------------------------ what a corpus measures

# Why a reviewed episode failed, when the failure is the agent's (docs/benchmark.md, Playtests): a reviewer names
# one with ``sttgym play label --category``. A failure that fits none is a benchmark defect, not a category.
FAILURES = {
    "stale_state": "acted on, or reported, a fact the world had changed since it was read",
    "missed_cascade": "recovered from the first change but not from what it led to",
    "suboptimal_choice": "met the constraints but not the request's objective",
    "constraint_overlooked": "broke a constraint the request, the user or a tool stated",
    "too_slow": "spent so many minutes that a valid plan ran out of time",
    "gave_up": "refused, or stopped, while a valid completion existed",
}
# STT-Arena's Table 3, its strongest model: Pass@1 (%) per level, and overall over the paper's 227 tasks.
PAPER_BEST = {"model": "Claude-4.6-Opus", "easy": 41.78, "medium": 31.34, "hard": 23.73, "impossible": 52.22,
              "overall": 35.39}


def corpus_stats(rows: list[dict], manifest: str | None = None) -> dict:
    """A reviewed corpus's Pass@1 (the reviews' successes: ``met`` and ``correct_refusal``) per level, per conflict
    type and per domain, each with its 95% Wilson interval, overall with the paper's level weights (and a 95%
    bootstrap interval), and the failures by category. ``manifest``: only the rows whose instance is that
    manifest's (the same id, seed and task digest), so a figure names the benchmark it measured."""
    from sttgym.evaluation.summary import PAPER_WEIGHTS, bootstrap, wilson
    from sttgym.manifests import load_manifest
    from sttgym.registry import parse_arena_id

    for number, r in enumerate(rows, 1):
        if not isinstance(r, dict) or not isinstance(r.get("env_id"), str) or r.get("verdict") not in VERDICTS:
            raise ActionError(f"corpus row {number} is not a reviewed episode (an env id and one of the verdicts "
                              f"{', '.join(VERDICTS)})")
        parse_arena_id(r["env_id"])  # a ValueError naming the id
    if manifest is not None:
        pinned = {(env_id, seed): pin for env_id, seed, pin in load_manifest(manifest)["instances"]}
        rows = [r for r in rows if pinned.get((r["env_id"], r.get("seed"))) == r.get("digest")]

    def cell(group: list[dict]) -> dict:
        won = sum(VERDICTS[r["verdict"]] for r in group)
        low, high = wilson(won, len(group))
        return {"episodes": len(group), "passed": won, "pass_at_1": won / len(group) if group else None,
                "ci": [low, high]}

    def by(key) -> dict:
        groups: dict[str, list[dict]] = {}
        for r in rows:
            groups.setdefault(key(parse_arena_id(r["env_id"])), []).append(r)
        return {name: cell(group) for name, group in sorted(groups.items())}

    def weighted(group: list[dict]) -> float | None:
        rates = {lvl: [VERDICTS[r["verdict"]] for r in group if parse_arena_id(r["env_id"])[2] == lvl]
                 for lvl in PAPER_WEIGHTS}
        if not all(rates.values()):
            return None  # a level without episodes: no overall figure
        return sum(PAPER_WEIGHTS[lvl] * sum(v) / len(v) for lvl, v in rates.items()) / sum(PAPER_WEIGHTS.values())

    levels = by(lambda parsed: parsed[2])
    failures: dict[str, int] = {}
    for r in rows:
        if not VERDICTS[r["verdict"]]:
            failures[r.get("category", "unnamed")] = failures.get(r.get("category", "unnamed"), 0) + 1
    return {"manifest": manifest, "episodes": len(rows), "players": len({r.get("player") for r in rows}),
            "levels": {lvl: levels[lvl] for lvl in PAPER_WEIGHTS if lvl in levels},
            "overall": {"paper_weights": weighted(rows), "ci": bootstrap(rows, weighted)},
            "conflicts": by(lambda parsed: parsed[1]), "domains": by(lambda parsed: parsed[0]),
            "failures": dict(sorted(failures.items(), key=lambda kv: -kv[1])), "paper": PAPER_BEST}


def stats_markdown(stats: dict) -> str:
    """:func:`corpus_stats` as the tables docs/benchmark.md shows: per level beside the paper's strongest model,
    then per conflict type and per domain, then the failures by category."""
    def pct(x: float | None) -> str:
        return "–" if x is None else f"{100 * x:.1f}"

    def rows(cells: dict, paper: dict | None = None) -> list[str]:
        return [f"| {name} | {c['episodes']} | {c['passed']} | {pct(c['pass_at_1'])} | "
                f"{pct(c['ci'][0])}–{pct(c['ci'][1])} |" + (f" {paper[name]:.1f} |" if paper else "")
                for name, c in cells.items()]

    paper = stats["paper"]
    overall, ci = stats["overall"]["paper_weights"], stats["overall"]["ci"]
    lines = [f"{stats['episodes']} reviewed episodes by {stats['players']} players"
             + (f" on `{stats['manifest']}`" if stats["manifest"] else "") + "; Pass@1 in %, 95% intervals.", "",
             f"| level | episodes | passed | Pass@1 | 95% interval | {paper['model']} (paper) |",
             "|---|---|---|---|---|---|", *rows(stats["levels"], paper),
             f"| overall (paper weights) | {stats['episodes']} | | {pct(overall)} | "
             + (f"{pct(ci[0])}–{pct(ci[1])}" if ci else "–") + f" | {paper['overall']:.1f} |"]
    for title, key in (("conflict type", "conflicts"), ("domain", "domains")):
        lines += ["", f"| {title} | episodes | passed | Pass@1 | 95% interval |", "|---|---|---|---|---|",
                  *rows(stats[key])]
    if stats["failures"]:
        lines += ["", "| failure (the agent's) | episodes |", "|---|---|",
                  *[f"| {name} | {n} |" for name, n in stats["failures"].items()]]
    return "\n".join(lines)


def _call_text(action: dict) -> str:
    return f"{action.get('name')}({json.dumps(action.get('arguments', {}), ensure_ascii=False)})"
