"""The evaluation runner: an agent over a benchmark suite, each trajectory saved as it finishes.

An evaluation is a set of *episodes*: every instance of the suite's manifest (``--limit``
keeps a prefix) under every condition (``dynamic``; for arena suites optionally ``static``,
without triggers, and ``no-user``, without ``chat_with_user``), repeated ``runs`` times.
Each finished episode is appended as one JSON line to ``OUT/trajectories.jsonl`` and flushed
to disk, so a killed run started again with the same ``OUT`` plays only what is missing:
a torn last line is cut off, nothing is lost and nothing is played twice. ``OUT/config.json``
pins what the records mean; resuming with a different agent, model or suite is refused,
while ``runs``, ``k`` and ``limit`` may grow.

Episodes run in threads: reference agents in one, remote models ``workers`` at a time,
and local models through :class:`~sttgym.evaluation.batching.BatchingModel`, which turns
the threads into a lock-step rollout with one batched generation per step.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Callable, Iterator, Literal

import gymnasium as gym
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

try:
    import fcntl
except ImportError:  # not POSIX: runs are not locked against each other
    fcntl = None

from sttgym import __version__
from sttgym.agents.base import Agent
from sttgym.agents.llm import RULES, SCRAMBLE_RULES, LLMAgent, MemoryAgent
from sttgym.cluster import cpus, ray_session
from sttgym.evaluation.batching import BatchingModel
from sttgym.manifests import MANIFEST, arena_manifest, scramble_manifest
from sttgym.registry import LEVELS
from sttgym.rollout import Trajectory, rollout

__all__ = ["EvalConfig", "Episode", "Runner", "REFERENCE_AGENTS", "PLAYER", "CONDITIONS", "load_records", "episode_record", "append_record"]

REFERENCE_AGENTS = ("oracle", "nominal", "noop", "random", "cycle-tracing")
PLAYER = "player"  # episodes played by a person or a shell-driven agent through sttgym play: nothing to run here
CONDITIONS: dict[str, dict] = {"dynamic": {}, "static": {"dynamics": False}, "no-user": {"user": "none"}}
TRAJECTORIES, CONFIG, SUMMARY = "trajectories.jsonl", "config.json", "summary.json"
log = logging.getLogger("sttgym.runner")


MAX_ERRORS_IN_A_ROW = 8  # episodes; a dead server or a model that cannot load fails every episode


PROTOCOLS = ("per-id", "full")
# What a config.json written before a setting existed did, where that differs from today's default.
_FORMER = {"protocol": "full"}


class BackendFailing(RuntimeError):
    """Episode after episode ends on an error: the model or its server is not working."""


@dataclass
class EvalConfig:
    """What to evaluate and how. Fields in ``IDENTITY`` must match for a run directory to be resumed."""

    suite: str = "arena"  # "arena" or "scramble"
    agent: str = "nominal"  # a reference agent, or "llm"/"memory" with a model
    model: str | None = None  # path or hub name, or the served model's name with base_url
    base_url: str | None = None
    runs: int = 3
    k: int = 1
    limit: int | None = None
    seed: int = 0
    domains: tuple[str, ...] = ()  # arena: only these domains (empty: every one)
    conditions: tuple[str, ...] = ("dynamic",)
    thinking: bool | None = None
    temperature: float = 0.7
    max_new_tokens: int = 2048
    workers: int = 8  # episodes in flight for a model (for a local one: the generation batch)
    user: str = "rule"  # "rule" or "llm" (the simulator is sim_model, by default the tested model)
    judge: str = "rule"  # "rule", "llm" (the paper's two criteria) or "llm-strict" (with the evidence checks)
    sim_model: str | None = None
    sim_base_url: str | None = None
    env_kwargs: dict = field(default_factory=dict)
    request_timeout: float = 120.0  # seconds per request to a server
    max_retries: int = 6  # per request, on rate limits, timeouts and server errors
    manifest: str = MANIFEST  # the frozen arena benchmark
    tasks: str | None = None  # or the instances of a file written by sttgym export
    hint: bool = False  # ablation: tell the model that the world can change (the paper's prompt does not)
    reasoning_effort: str | None = None  # a served reasoning model's effort: low, medium or high
    weights: str = "paper"  # how overall Pass@1 weights the levels: the paper's task counts, or the suite's
    # Arena manifests: "per-id" plays each id's first instance (360 episodes a run, near the paper's 227 tasks),
    # "full" every instance (3,600). A config.json without the field was written when every run was full.
    protocol: str = "per-id"
    # The sttgym release that played the episodes: with the frozen manifest it names the exact environments
    # (gymnasium cannot register versioned ids beside the unversioned ones; see docs/architecture.md).
    version: str = field(default_factory=lambda: __version__)
    ray: str | None = None  # play the episodes on Ray: "local" (a Ray instance started here) or a cluster address
    server: str | None = None  # play the envs on this `sttgym serve --privileged` server (same results as locally)

    IDENTITY = ("suite", "agent", "model", "base_url", "seed", "domains", "thinking", "temperature",
                "max_new_tokens", "user", "judge", "sim_model", "sim_base_url", "env_kwargs", "manifest", "tasks",
                "hint", "reasoning_effort", "version", "protocol")

    def __post_init__(self) -> None:
        self.conditions, self.domains = tuple(self.conditions), tuple(self.domains)
        if self.suite not in ("arena", "scramble"):
            raise ValueError(f"unknown suite {self.suite!r}: arena or scramble")
        if self.agent in ("llm", "memory"):
            if not self.model:
                raise ValueError(f"agent {self.agent!r} needs a model")
        elif self.agent not in (*REFERENCE_AGENTS, PLAYER):
            raise ValueError(f"unknown agent {self.agent!r}: one of {', '.join(REFERENCE_AGENTS)}, llm, memory")
        unknown = [c for c in self.conditions if c not in CONDITIONS]
        if unknown or not self.conditions:
            raise ValueError(f"conditions must be among {', '.join(CONDITIONS)}; got {self.conditions}")
        if self.suite == "scramble" and self.agent in ("oracle", "nominal"):
            raise ValueError(f"the {self.agent} agent plays arena task plans; on scramble use cycle-tracing, random, "
                             "noop or a model")
        if self.suite == "scramble" and self.conditions != ("dynamic",):
            raise ValueError("the static and no-user conditions exist only for the arena suite")
        if self.runs < 1 or self.k < 1:
            raise ValueError("runs and k must be at least 1")
        if self.user not in ("rule", "llm") or self.judge not in ("rule", "llm", "llm-strict"):
            raise ValueError(f"user must be rule or llm and judge rule, llm or llm-strict; got user={self.user!r}, "
                             f"judge={self.judge!r}")
        if self.reasoning_effort is not None and (self.reasoning_effort not in ("low", "medium", "high")
                                                  or not self.base_url):
            raise ValueError("reasoning effort is low, medium or high, for a model served at --base-url")
        if self.weights not in ("paper", "suite"):
            raise ValueError(f"weights must be paper or suite, not {self.weights!r}")
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be {' or '.join(PROTOCOLS)}, not {self.protocol!r}")
        if self.workers < 1 or self.max_new_tokens < 1:
            raise ValueError(f"workers and max_new_tokens must be at least 1; got workers={self.workers}, "
                             f"max_new_tokens={self.max_new_tokens}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit must be at least 1 (or left out for every instance), not {self.limit}")
        if self.server and (self.user == "llm" or self.judge != "rule"):
            raise ValueError("an LLM user or judge runs inside the env, which --server plays on the server: use the "
                             "rule user and judge there")
        if self.request_timeout <= 0 or self.max_retries < 0:
            raise ValueError("request_timeout must be positive and max_retries at least 0")
        self.runs = max(self.runs, self.k)  # pass@k needs k attempts per instance

    @property
    def label(self) -> str:
        """How tables name this agent."""
        if self.agent in (*REFERENCE_AGENTS, PLAYER):
            return self.agent
        name = Path(self.model).name if self.model and os.path.isdir(self.model) else self.model
        return (f"{name}{' +memory' if self.agent == 'memory' else ''}{' (thinking)' if self.thinking else ''}"
                f"{f' (effort {self.reasoning_effort})' if self.reasoning_effort else ''}"
                f"{' (llm user)' if self.user == 'llm' else ''}{' (hint)' if self.hint else ''}")

    @classmethod
    def from_dict(cls, saved: dict) -> "EvalConfig":
        """The config a run directory's config.json holds (a clear error for one this version cannot read)."""
        unknown = sorted(set(saved) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise ValueError(f"this run was written by another sttgym version (unknown settings: {', '.join(unknown)})")
        return cls(**{**_FORMER, **saved, "conditions": tuple(saved.get("conditions", ("dynamic",)))})

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "conditions": list(self.conditions), "domains": list(self.domains)}


@dataclass(frozen=True)
class Episode:
    condition: str
    env_id: str
    seed: int
    run: int

    @property
    def key(self) -> str:
        return f"{self.condition}|{self.env_id}|{self.seed}|{self.run}"


def _clock_reading(text: str) -> str:
    """A simulated time as ``Clock.iso`` writes it (``2024-05-01T09:41``: no zone, a real date), or a ValueError."""
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?", text):
        raise ValueError(f"{text[:40]!r} is not a simulated time such as 2024-05-01T09:41")
    datetime.fromisoformat(text)  # a month 13 or an hour 25 is a ValueError too
    return text


SimulatedTime = Annotated[str, AfterValidator(_clock_reading)]


class _Part(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")


class _Usage(_Part):
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)


class _Event(_Part):
    trigger: str | None = None
    observable_via: str | None = None
    at: SimulatedTime | None = None
    changes: list[dict] = []


class _Step(_Part):
    action: dict | str
    events: list[_Event] = []
    clock: SimulatedTime | None = None


class _Info(_Part):
    checklist: list[dict] = []
    trigger_log: list[_Event] = []
    tasks: list[dict] | None = None
    clock: SimulatedTime | None = None


class Record(_Part):
    """What a trajectories line must be to be read: every field the runner writes and summaries, diagnostics,
    reports and the viewer read, of its type and in its range; fields it does not name pass as they are."""

    key: str
    condition: Literal[tuple(CONDITIONS)]  # type: ignore[valid-type]
    env_id: str = Field(max_length=200)
    seed: int = Field(ge=0)
    run: int = Field(ge=0)
    agent: str
    reward: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    success: bool
    calls: int = Field(ge=0)
    turns: int = Field(ge=0)
    terminated: bool
    truncated: bool
    error: str | None
    seconds: float = Field(ge=0.0, allow_inf_nan=False)
    steps: list[_Step]
    info: _Info
    messages: list
    usage: _Usage | None = None
    violations: int = Field(0, ge=0)
    difficulty: Literal[LEVELS] | None = None  # type: ignore[valid-type]
    start_time: SimulatedTime | None = None
    trigger_timing: dict[str, str] = {}
    mutating_tools: list[str] = []

    @model_validator(mode="after")
    def _consistent(self) -> "Record":
        if self.key != Episode(self.condition, self.env_id, self.seed, self.run).key:
            raise ValueError(f"the key {self.key[:200]!r} disagrees with its condition, env_id, seed and run")
        if self.success != (self.reward >= 1.0):
            raise ValueError(f"success {self.success} disagrees with reward {self.reward}")
        return self


def load_records(path: Path, set_aside: list[str] | None = None) -> dict[str, dict]:
    """The records of a trajectories file by key; the last record wins.

    A line that is torn, not UTF-8, not JSON, or not a whole :class:`Record` (every field's type and range, the
    key matching its fields) is set aside: skipped, so its episode is played again on resume instead of breaking
    the summary, and said in a logged warning and, as ``"line N: why"``, in ``set_aside`` when given.
    """
    return {record["key"]: record for record in iter_records(path, set_aside)}


def iter_records(path: Path, set_aside: list[str] | None = None) -> Iterator[dict]:
    """The valid records of a trajectories file one at a time, in file order (see :func:`load_records`): a reader
    of a large file holds one record at a time, not all of them."""
    problems = [] if set_aside is None else set_aside
    if not path.exists():
        return
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            try:
                record = json.loads(line)
                Record.model_validate(record)
            except (json.JSONDecodeError, RecursionError) as exc:
                problems.append(f"line {number}: not JSON ({str(exc)[:100]})")
            except ValidationError as exc:
                problems.append(f"line {number}: " + "; ".join(
                    f"{'.'.join(map(str, e['loc'])) or 'record'}: {e['msg']}" for e in exc.errors()[:3]))
            else:
                yield record
    if problems:
        log.warning("%s: %d line(s) set aside, their episodes play again on resume: %s", path, len(problems),
                    "; ".join(problems[:5]))


@contextlib.contextmanager
def _exclusive(out: Path):
    """Hold ``out/.lock`` for the duration of a run (released by the OS if the process dies)."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file; give a directory")
    out.mkdir(parents=True, exist_ok=True)
    if fcntl is None:
        yield
        return
    with open(out / ".lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"another sttgym eval is writing to {out}; wait for it or use another --out") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _stored_tasks(path: Path, domains: tuple[str, ...]) -> dict[tuple[str, int], dict]:
    """The tasks of a file written by ``sttgym export``, by (env id, seed); every id a registered arena id (never
    ``module:...``, which would have gym.make import the module)."""
    from sttgym.registry import parse_arena_id, registered_arena_id

    if not path.is_file():
        raise ValueError(f"no task file {path}")
    tasks = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            try:
                row = json.loads(line)
                key = (registered_arena_id(row["env_id"]), int(row["seed"]))
                task = row["task"]
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"{path}:{number} is not a row written by sttgym export ({exc})") from exc
            if not domains or parse_arena_id(key[0])[0] in domains:
                tasks[key] = task
    return tasks


def _cut_torn_line(path: Path) -> None:
    """Drop a last line left without its newline by a killed writer, so appends start clean."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        data = handle.read()
        if data.endswith(b"\n"):
            return
        handle.truncate(data.rfind(b"\n") + 1)


class Runner:
    """Plays the missing episodes of an evaluation into ``out`` and returns their records.

    Args:
        config: what to evaluate.
        out: the run directory (created; resumed when it already holds records).
        model: a ready :class:`~sttgym.models.base.ChatModel` to use instead of loading
            ``config.model`` (tests, notebooks).
        retry_errors: play again the episodes whose record carries a backend error.
        progress: called with each new record and the counts done and total.
    """

    def __init__(self, config: EvalConfig, out: str | os.PathLike, model: Any = None, retry_errors: bool = False,
                 progress: Callable[[dict, int, int], None] | None = None):
        self.config, self.out, self._model = config, Path(out), model
        self.retry_errors, self.progress = retry_errors, progress
        self.path = self.out / TRAJECTORIES
        self._lock = threading.Lock()
        self._stored: dict[tuple[str, int], dict] = {}

    # ------------------------------------------------------------------ plan

    def instances(self) -> list[tuple[str, int]]:
        if self.config.suite == "scramble":
            manifest = scramble_manifest()
        elif self.config.tasks:
            self._stored = _stored_tasks(Path(self.config.tasks), self.config.domains)
            manifest = list(self._stored)
        else:
            manifest = arena_manifest(self.config.domains, self.config.manifest)
            if self.config.protocol == "per-id":
                first: dict[str, tuple[str, int]] = {}
                for env_id, seed in manifest:
                    first.setdefault(env_id, (env_id, seed))
                manifest = list(first.values())
        return manifest[: self.config.limit] if self.config.limit is not None else manifest

    def episodes(self) -> list[Episode]:
        """Every episode of the evaluation, run by run (run 0 of everything first)."""
        return [Episode(c, env_id, seed, run) for run in range(self.config.runs)
                for c in self.config.conditions for env_id, seed in self.instances()]

    def records(self) -> list[dict]:
        """The saved records of this evaluation's episodes, in episode order."""
        saved = load_records(self.path)
        return [saved[e.key] for e in self.episodes() if e.key in saved]

    def _prepare(self) -> list[Episode]:
        config_path = self.out / CONFIG
        current = self.config.to_dict()
        try:
            previous = json.loads(config_path.read_text(encoding="utf-8")) if config_path.exists() else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            previous = None  # torn by a crash mid-write (before writes were atomic): the records still say what ran
        if isinstance(previous, dict):
            previous = {**_FORMER, **previous}
            differ = [f for f in EvalConfig.IDENTITY if previous.get(f) != current.get(f)]
            if differ:
                raise ValueError(f"{self.out} holds another evaluation (differs in {', '.join(differ)}); "
                                 "use a new --out")
        partial = config_path.with_name(CONFIG + ".partial")
        partial.write_text(json.dumps(current, indent=1), encoding="utf-8")
        os.replace(partial, config_path)  # atomic: a kill leaves the old file or the new one, never half of one
        _cut_torn_line(self.path)
        saved = load_records(self.path)
        done = {k for k, r in saved.items() if not (self.retry_errors and r.get("error"))}
        return [e for e in self.episodes() if e.key not in done]

    # ------------------------------------------------------------------ play

    def run(self) -> list[dict]:
        """Play every missing episode; return all records of the evaluation.

        One run at a time writes to a directory: a second one started on the same ``out``
        is refused (a ``ValueError``) instead of playing every episode twice.
        """
        if self.config.agent == PLAYER:
            raise ValueError("this run's episodes are played by hand, with sttgym play; sttgym eval cannot play them")
        with _exclusive(self.out):  # also makes the directory
            todo = self._prepare()
            if todo:
                self._play_all(todo)
        return self.records()

    def _play_all(self, todo: list[Episode]) -> None:
        done = _Tally(self, len(self.episodes()) - len(todo), len(self.episodes()))
        if self.config.ray is not None:
            self._play_on_ray(todo, done)
        else:
            self._play_in_threads(todo, done)
        if done.failures:
            raise done.failures[0]

    def _play_in_threads(self, todo: list[Episode], done: "_Tally") -> None:
        model = self._chat_model() if self.config.agent in ("llm", "memory") else None
        threads = 1 if model is None else min(self.config.workers, len(todo))
        queue = deque(todo)

        def work() -> None:
            envs: dict[tuple[str, str], gym.Env] = {}
            try:
                while True:
                    with self._lock:
                        if not queue or done.failures:
                            return
                        episode = queue.popleft()
                    done.accept(self._play(episode, envs, model))
            except BaseException as exc:  # surfaced by the main thread once the others stop
                done.failures.append(exc)
            finally:
                for env in envs.values():
                    env.close()

        workers = [threading.Thread(target=work, daemon=True) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            while worker.is_alive():  # short joins keep Ctrl-C responsive
                worker.join(timeout=0.5)

    def _play_on_ray(self, todo: list[Episode], done: "_Tally") -> None:
        """Episodes as Ray tasks, a chunk each; records come back to this process, which writes them in
        the order they finish, exactly as the threads do."""
        with ray_session(self.config.ray) as ray:
            play = ray.remote(_play_chunk)
            size = max(1, -(-len(todo) // (4 * cpus(ray))))
            config = self.config.to_dict()
            pending = [play.remote(config, str(self.out), todo[i:i + size]) for i in range(0, len(todo), size)]
            while pending and not done.failures:
                finished, pending = ray.wait(pending, num_returns=1)
                for record in ray.get(finished[0]):
                    done.accept(record)
            for task in pending:
                ray.cancel(task)

    def _append(self, record: dict) -> None:
        append_record(self.path, record)

    def _play(self, episode: Episode, envs: dict, model: Any) -> dict:
        started = time.perf_counter()
        place = (episode.condition, episode.env_id)
        if place not in envs:
            envs[place] = self._make_env(episode, model)
        env = envs[place]
        agent = self._agent(episode, model)
        if isinstance(model, BatchingModel):
            model.enter()
        try:
            stored = self._stored.get((episode.env_id, episode.seed))
            traj = rollout(env, agent, seed=episode.seed, options=None if stored is None else {"task": stored})
            error = getattr(agent, "error", None)
        except Exception as exc:  # an agent bug is recorded against its episode; the run goes on
            traj, error = Trajectory(episode.env_id, episode.seed), f"episode raised {type(exc).__name__}: {exc}"
        finally:
            if isinstance(model, BatchingModel):
                model.leave()
        return self._record(episode, env, agent, traj, error, time.perf_counter() - started)

    def _record(self, episode: Episode, env: gym.Env, agent: Agent, traj: Trajectory, error: str | None,
                seconds: float) -> dict:
        return episode_record(episode, self.config.label, env, agent, traj, error, seconds)

    # ------------------------------------------------------------------ parts

    def _chat_model(self) -> Any:
        from sttgym.models import load_model

        cfg = self.config
        if self._model is None:
            options: dict[str, Any] = {"temperature": cfg.temperature}
            if cfg.base_url:
                options.update(max_tokens=cfg.max_new_tokens, max_workers=cfg.workers, timeout=cfg.request_timeout,
                               max_retries=cfg.max_retries, reasoning_effort=cfg.reasoning_effort)
            else:
                options.update(max_new_tokens=cfg.max_new_tokens, max_batch=cfg.workers)
            self._model = load_model(cfg.model, cfg.base_url, **options)
        return BatchingModel(self._model) if getattr(self._model, "batched", False) else self._model

    def _simulator_model(self, model: Any) -> Any:
        cfg = self.config
        if cfg.sim_model:
            from sttgym.models import load_model

            if not hasattr(self, "_sim"):
                served = {"timeout": cfg.request_timeout, "max_retries": cfg.max_retries} if cfg.sim_base_url else {}
                self._sim = load_model(cfg.sim_model, cfg.sim_base_url, **served)
            return BatchingModel(self._sim) if getattr(self._sim, "batched", False) else self._sim
        if model is None:
            raise ValueError("an LLM user or judge needs --sim-model when the agent is not a model")
        return model

    def _make_env(self, episode: Episode, model: Any) -> gym.Env:
        from sttgym.judge.llm import LLMJudge
        from sttgym.user.llm import LLMUser

        kwargs = {**self.config.env_kwargs, **CONDITIONS[episode.condition]}
        if self.config.server:
            from sttgym.server import RemoteEnv

            return RemoteEnv(self.config.server, episode.env_id, timeout=self.config.request_timeout, **kwargs)
        if self.config.suite == "arena":
            if self.config.user == "llm" and "user" not in kwargs:
                kwargs["user"] = LLMUser(self._simulator_model(model))
            if self.config.judge in ("llm", "llm-strict"):
                kwargs["judge"] = LLMJudge(self._simulator_model(model), strict=self.config.judge == "llm-strict")
        return gym.make(episode.env_id, **kwargs)

    def _agent(self, episode: Episode, model: Any) -> Agent:
        cfg = self.config
        if model is not None:
            kind = MemoryAgent if cfg.agent == "memory" else LLMAgent
            return kind(model, thinking=cfg.thinking, temperature=cfg.temperature,
                        max_new_tokens=cfg.max_new_tokens, seed=cfg.seed * 7919 + episode.run,
                        rules=SCRAMBLE_RULES if cfg.suite == "scramble" else RULES, hint=cfg.hint)
        return reference_agent(cfg.agent)


class _Tally:
    """Accepts finished episodes' records for a runner: saves each, counts, reports progress, and stops the
    run when too many episodes in a row ended on an error."""

    def __init__(self, runner: Runner, finished: int, total: int):
        self.runner, self.finished, self.total = runner, finished, total
        self.failing = 0  # episodes in a row that ended on an error
        self.failures: list[BaseException] = []

    def accept(self, record: dict) -> None:
        with self.runner._lock:
            self.runner._append(record)
            self.finished += 1
            count = self.finished
            self.failing = self.failing + 1 if record["error"] else 0
            if self.failing >= MAX_ERRORS_IN_A_ROW and not self.failures:
                self.failures.append(BackendFailing(
                    f"{self.failing} episodes in a row ended on an error (last: {record['error']}); "
                    "stopped rather than play the rest against a backend that is down. The finished "
                    "episodes are saved: fix the cause and run again with the same --out and --retry-errors"))
        if self.runner.progress:
            self.runner.progress(record, count, self.total)


def append_record(path: Path, record: dict) -> None:
    """Append one record to a trajectories file, on disk before this returns, with no configured secret in it."""
    from sttgym.redaction import redact

    line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a model: escaped, it still reads back as sent
        line = json.dumps(record, ensure_ascii=True, default=str) + "\n"
    line = redact(line)  # whatever carried a key (a reply echoing headers, an error, a tool result quoting one)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())


def episode_record(episode: Episode, label: str, env: gym.Env, agent: Agent | None, traj: Trajectory,
                   error: str | None, seconds: float) -> dict:
    """The line ``trajectories.jsonl`` keeps of one finished episode (``sttgym play`` writes the same)."""
    record = {"key": episode.key, **dataclasses.asdict(episode), "agent": label,
              "reward": float(traj.reward), "success": traj.reward >= 1.0, "calls": traj.tool_calls,
              "turns": len(traj.steps), "terminated": traj.terminated, "truncated": traj.truncated,
              "error": error, "seconds": round(seconds, 3)}
    base = env.unwrapped
    task = getattr(base, "task", None)
    if hasattr(task, "harness"):  # an arena episode: what the report groups by and diagnostics read
        record.update(task.harness())
        record["mutating_tools"] = sorted(n for n, spec in base.tools.items() if spec.mutates)
        record["trigger_timing"] = {t.name: t.timing for t in task.triggers}
    if isinstance(agent, LLMAgent):
        record.update(usage=agent.usage, violations=sum(t["violation"] is not None for t in agent.turns),
                      turn_log=agent.turns, messages=agent.messages, context_overflow=agent.overflowed)
        if agent.overflowed:  # cut short by the model's own context, as a turn limit cuts an episode
            record["truncated"] = True
        if isinstance(agent, MemoryAgent):
            record["memory"] = agent.memory
    else:
        record["messages"] = traj.messages
    record.update(steps=traj.steps, info=traj.info)
    return record


def _play_chunk(config: dict, out: str, episodes: list[Episode]) -> list[dict]:
    """Play ``episodes`` in this process (a Ray worker) and return their records, unsaved."""
    runner = Runner(EvalConfig.from_dict(config), out)
    runner.instances()  # loads the stored tasks of a --tasks run
    model = runner._chat_model() if runner.config.agent in ("llm", "memory") else None
    envs: dict[tuple[str, str], gym.Env] = {}
    try:
        return [runner._play(episode, envs, model) for episode in episodes]
    finally:
        for env in envs.values():
            env.close()


def reference_agent(name: str) -> Agent:
    """A fresh reference agent by its CLI name."""
    import sttgym.agents as agents

    classes = {"oracle": "OracleAgent", "nominal": "NominalAgent", "noop": "NoopAgent", "random": "RandomAgent",
               "cycle-tracing": "CycleTracingAgent"}
    cls = getattr(agents, classes[name], None)
    if cls is None:
        raise ValueError(f"agent {name!r} ({classes[name]}) is not available in this installation")
    return cls()
