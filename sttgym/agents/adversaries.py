"""Adversarial scripted policies: cheap, generic ways to try to score without solving the task.

Each policy sees only what an agent sees: the request (the first observation), the tool schemas
(``info["tools"]``), the world description (``info["world"]``) and each tool result
(``info["result"]``).  None reads the env, the task or the checklist.  They share one small toolkit,
:class:`_Scripted`, which

* sorts the tools into reads (``get_``/``list_``/``search_``/``check_``/``find_``/...) and writes,
* remembers every identifier it has seen, with the words in front of it in the request and the keys
  it sat under in results ("booking_id", "vehicle_id", ...),
* fills a tool's arguments from that memory by name alone (``booking_id`` takes the id last seen
  under ``booking_id``, or one called "booking ..." in the request, or one whose prefix abbreviates
  the word, e.g. ``BK-`` for booking; ``count`` takes the number before "seats" in the request),
* picks "the obvious writes": the write tools whose verb (from the name or the first word of the
  description) the request uses, in the order the request uses them.

A policy is a generator (:meth:`_Scripted.plan`) that yields actions and reads ``self.result``
after each one.  They make no random choice at all, so an episode is fixed by its seed;
``self.rng = numpy.random.default_rng(seed)`` is kept for variants that want one.

These are probes of the benchmark, not agents to deploy: they exist to show how much reward a
policy that does not understand the tasks can collect. They were written by an adversary who saw
only the observations, never the checklists, the judge or the project's own probe panel; they join
that panel (:data:`sttgym.agents.probes.PROBES`) under :data:`ADVERSARIES`' names, and ``sttgym
validate`` holds each to ``ADVERSARY_CEILING`` overall with the paper's level weights.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

import numpy as np

from .base import Agent

__all__ = [
    "WritesThenReads",
    "RereadAfterFailure",
    "RereadEveryWrite",
    "AskThenActOrRefuse",
    "ExploreThenRefuse",
    "RefuseFeasible",
    "ADVERSARIES",
]

FINAL = {"content": "Task Completed"}
ALTERNATIVE_QUESTION = "Would a different option be acceptable if the one I was asked for is not available?"
MAX_TURNS = 48  # episodes are cut at 50 turns; keep two for the final reply

_READ_VERBS = {"get", "list", "search", "check", "find", "read", "plan", "quote"}
_UNDO_VERBS = {"cancel", "release", "close"}
# Id-like tokens: PAX-66696, DEP-CP29, LOT-INS-6782, ZN-CLOVER, HJ206, FLYSMART73, ILM.
_ID = re.compile(r"(?<![\w-])(?:[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+|[A-Z]{2}\d{2,4}|[A-Z]{3,}\d*)(?![\w-])")
_ID_VALUE = re.compile(r"^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*$")
_DATETIME = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_NUMBER = re.compile(r"(?<![\w.:-])(\d+)(?:\s*(x|%|m3/h|m3|[a-z]+))?")
_WORD = re.compile(r"[a-z][a-z0-9'-]*")
# Request verbs for tools whose name and description word it differently.
_SYNONYMS = {
    "buy": {"purchase"},
    "ticket": {"confirm"},
    "ship": {"dispatch"},
    "unlock": {"start"},
    "relay": {"schedule"},
    "pick": {"book"},
    "brought": {"transfer"},
    "driven": {"transfer"},
    "charge": {"refuel"},
}
# Description verbs too vague to tie a request's wording to a tool.
_WEAK_VERBS = {"move", "make", "have", "take", "give", "put", "set", "send", "the", "a", "an"}
# Nouns an id of any kind can fill (a crossing is also a site).
_GENERIC_NOUNS = {"site", "location", "place", "origin", "destination", "node", "from", "to", "at", "id"}
_GOOD_STATUS = {"scheduled", "open", "active", "available", "free", "ok", "normal", "idle", "on_sale",
                "live", "held", "confirmed", "ticketed", "booked", "pending", "operational", "stable",
                "on_time", "none", "in_service", "ready", "cleared", "valid"}
_BAD_STATUS = re.compile(r"closed|cancel|full|sold|maint|fault|repair|locked|expired|taken|blocked|"
                         r"halted|delayed|diverted|suspended|quarantin|unavailable|outage|off|busy", re.I)
_NOTE_KEYS = {"notice", "notices", "note", "notes", "problem", "problems", "reason", "quota_note",
              "promo_status", "warning", "warnings"}


def _stem_match(a: str, b: str) -> bool:
    """True when two words share a stem (the first five letters, or all of the shorter one)."""
    if len(a) < 3 or len(b) < 3:
        return a == b
    n = min(5, len(a), len(b))
    return a[:n] == b[:n]


def _abbreviates(prefix: str, word: str) -> bool:
    """``BK`` abbreviates booking, ``SHP`` shipment, ``P`` pump: same first letter, letters in order."""
    prefix, word = prefix.lower(), word.lower()
    if not prefix or not word or prefix[0] != word[0]:
        return False
    rest = iter(word[1:])
    return all(ch in rest for ch in prefix[1:])


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class _Memory:
    """What the policy has seen: ids with their context and keys, scalars under keys, facts."""

    def __init__(self, request: str):
        self.request = request
        self.ids: dict[str, dict[str, Any]] = {}
        self.scalars: dict[str, list[Any]] = {}
        self.facts: list[tuple[int, int, str]] = []  # (priority, tick, text)
        self.tick = 0
        self.result_no = 0
        self.involved: set[str] = set()
        self._read_request(request)

    def _note(self, value: str, key: str | None = None, ctx: list[str] | None = None):
        self.tick += 1
        rec = self.ids.setdefault(value, {"keys": set(), "ctx": set(), "near": None, "first": self.tick,
                                          "in_request": False, "obj": None, "result": 0, "pos": 0})
        if key:
            rec["keys"].add(key)
        if ctx:
            rec["ctx"].update(ctx)
        if rec["result"] != self.result_no:  # newest sighting: which result, and how far down it
            rec["result"], rec["pos"] = self.result_no, self.tick
        return rec

    def _read_request(self, text: str):
        for m in _ID.finditer(text):
            before = text[max(0, m.start() - 60):m.start()]
            ctx = _words(before)[-4:]
            if before.rstrip().endswith("("):  # "Ilmara Airport (ILM)": the name before the bracket
                ctx = _words(before.rstrip()[:-1])[-4:]
            rec = self._note(m.group(0), ctx=ctx)
            if ctx and not rec["near"]:
                rec["near"] = ctx[-1]
            rec["in_request"] = True

    phase = 0  # 0 while first looking around; facts first seen later are what changed

    def fact(self, priority: int, text: str):
        if text and all(t != text for _, _, t in self.facts):
            if self.phase and priority < 5:  # a notice or status that was not there at first
                priority += 10
            self.facts.append((priority, self.tick, text))

    def read_result(self, result: Any, write: bool, involved: set[str]):
        """Walk a tool result, noting every id under its key and every notice or odd status."""
        if not isinstance(result, dict):
            return
        self.result_no += 1
        self.involved = involved
        if not result.get("success", True) and result.get("error"):
            err = str(result["error"])
            if write is not None and not re.match(r"no \w+ '", err):  # not our own typo, nor an undo
                self.fact(5 if write else 1, err)
            for m in _ID.finditer(err):
                self._note(m.group(0))
        self._walk(result.get("data"), None, None)

    def _walk(self, node: Any, key: str | None, parent: dict | None):
        if isinstance(node, dict):
            for k, v in node.items():
                self._walk(v, k, node)
        elif isinstance(node, list):
            for v in node:
                self._walk(v, key, parent)
        elif isinstance(node, str):
            owner = self._owner(parent)
            mine = owner in self.involved
            if key and _ID_VALUE.match(node) and 2 <= len(node) <= 24 and key != "status":
                rec = self._note(node, key=key)
                if key.endswith("id") and parent is not None:
                    rec["obj"] = parent
            elif key in _NOTE_KEYS and node.strip():
                self.fact(4 if mine else 2, f"{owner}: {node.strip()}" if owner else node.strip())
            elif key == "status" and node.lower() not in _GOOD_STATUS:
                self.fact(4 if mine else 0, f"{owner or 'it'} is {node.replace('_', ' ')}")
            if key:
                self.scalars.setdefault(key, []).append(node)
        elif isinstance(node, (int, float)) and key and not isinstance(node, bool):
            self.scalars.setdefault(key, []).append(node)

    @staticmethod
    def _owner(obj: dict | None) -> str:
        if obj:
            for k, v in obj.items():
                if k.endswith("id") and isinstance(v, str):
                    return v
        return ""

    # ------------------------------------------------------------------ choosing values
    def score(self, value: str, param: str) -> float:
        """How well ``value`` fits a parameter called ``param`` (below 5: not at all)."""
        rec = self.ids[value]
        words = [w for w in param.lower().split("_") if w not in ("id", "ids")]
        if not words:
            return 0.0
        noun, roles = words[-1], words[:-1]
        base = param[:-1] if param.endswith("_ids") else param
        s = 0.0
        for k in rec["keys"]:
            kw = [w for w in k.lower().split("_") if w not in ("id", "ids")]
            if k in (base, param):
                s = max(s, 10)
            elif kw and _stem_match(kw[-1], noun):
                s = max(s, 7 + (2 if set(kw[:-1]) & set(roles) else 0))
            elif kw and noun in kw:
                s = max(s, 5)
        ctx = rec["ctx"]
        if rec["near"] and _stem_match(rec["near"], noun):
            s = max(s, 8)
        elif any(_stem_match(c, noun) for c in ctx):
            s = max(s, 6)
        prefix = value.split("-")[0] if "-" in value else ""
        if prefix and (_abbreviates(prefix, noun) or prefix.lower() == noun):
            s = max(s, 5)
        if noun == "flight" and re.fullmatch(r"[A-Z]{2}\d{3,4}", value):
            s = max(s, 6)
        if (noun == "code" or "promo" in words) and re.fullmatch(r"[A-Z]{4,}-?\d{2,}", value):
            s = max(s, 6)
        if rec["in_request"] and ((noun in ("origin", "source") and "from" in ctx) or (
                noun == "destination" and "to" in ctx)):
            s = max(s, 6)
        # an id already seen as some other kind of thing ("consignment_id") is not a crossing
        kinds = {k.lower().split("_")[-2] for k in rec["keys"] if k.endswith("_id") and "_" in k}
        if s < 10 and kinds and not any(_stem_match(k, noun) for k in kinds) \
                and not kinds & _GENERIC_NOUNS and noun not in _GENERIC_NOUNS:
            s = min(s, 2)
        if s >= 5:
            if roles and set(roles) & {"origin", "from", "pickup", "old"} and "from" in ctx:
                s += 1
            if roles and set(roles) & {"destination", "to", "return", "new"} and "to" in ctx:
                s += 1
            if rec["in_request"]:
                s += 0.5
            if rec.get("ours"):  # made or booked by one of our own writes just now
                s += 1
            status = str((rec["obj"] or {}).get("status", "")).lower()
            if status in _GOOD_STATUS:
                s += 0.5
            elif status and _BAD_STATUS.search(status):
                s -= 1.5
        return s

    def ranked(self, param: str, exclude=frozenset(), request_only: bool = False) -> list[str]:
        """Ids that fit ``param``, best first: score, then newest result, then first in that result."""
        scored = []
        for v, rec in self.ids.items():
            if v in exclude or (request_only and not rec["in_request"]):
                continue
            s = self.score(v, param)
            if s >= 5:
                scored.append((-s, -rec["result"], rec["pos"], v))
        return [v for *_, v in sorted(scored)]

    def request_list(self, param: str) -> list[str]:
        """All ids of the request that fit a list parameter, in the request's order."""
        out = [(rec["first"], v) for v, rec in self.ids.items() if rec["in_request"] and self.score(v, param) >= 5]
        return [v for _, v in sorted(out)]


class _Scripted(Agent):
    """Shared machinery; subclasses write :meth:`plan` as a generator of actions."""

    def reset(self, observation: str, info: dict, env=None, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.request = observation
        self.world = info.get("world", "")
        self.tools = {t["function"]["name"]: t["function"] for t in info.get("tools", [])}
        self.mem = _Memory(observation)
        self.result: Any = None
        self.reply = ""
        self.turns = 0
        self.calls: set[str] = set()
        self.writes: list[dict] = []  # every write tried: name, args, ok, created ids, error
        self._last: dict | None = None
        self._retried: set[str] = set()  # writes already retried once
        self.looked: list[dict] = []  # reads that worked while exploring, to repeat later
        self._gen = self.plan()

    def act(self, observation: str, info: dict) -> dict[str, Any]:
        self.result = info.get("result")
        if self._last is not None:
            self._record(self._last)
        self.turns += 1
        try:
            action = next(self._gen)
        except StopIteration:
            action = FINAL
        if self.turns >= MAX_TURNS and "name" in action:
            action = FINAL
        self._last = action if "name" in action else None
        if self._last:
            self.calls.add(self._key(action))
        return action

    def _record(self, action: dict):
        args = action.get("arguments", {})
        involved = {v for v in args.values() if isinstance(v, str)} | {
            x for v in args.values() if isinstance(v, list) for x in v} | {
            v for v, r in self.mem.ids.items() if r["in_request"]}
        write = self.is_write(action["name"])
        undo = write and bool(self.verbs(action["name"]) & _UNDO_VERBS)
        before = set(self.mem.ids)
        self.mem.read_result(self.result, None if undo else write, involved)
        if write:
            data = json.dumps((self.result or {}).get("data", {})) if self.ok() else ""
            created = [v for v in dict.fromkeys(_ID.findall(data)) if v not in before and v not in involved]
            for v in _ID.findall(data):
                if v in self.mem.ids:
                    self.mem.ids[v]["ours"] = True
            self.writes.append({"name": action["name"], "args": args, "ok": self.ok(), "created": created,
                                "error": "" if self.ok() else str((self.result or {}).get("error", ""))})

    def plan(self) -> Iterator[dict[str, Any]]:
        raise NotImplementedError
        yield

    # ------------------------------------------------------------------ tools
    @staticmethod
    def _key(action: dict) -> str:
        return action["name"] + json.dumps(action.get("arguments", {}), sort_keys=True)

    @staticmethod
    def call(name: str, args: dict) -> dict:
        return {"name": name, "arguments": args}

    def is_read(self, name: str) -> bool:
        parts = name.split("_")
        return parts[0] in _READ_VERBS and not (parts[0] == "check" and parts[1:2] in (["in"], ["out"]))

    def is_write(self, name: str) -> bool:
        return name in self.tools and name != "chat_with_user" and not self.is_read(name)

    def ok(self) -> bool:
        return isinstance(self.result, dict) and bool(self.result.get("success"))

    def required(self, name: str) -> list[str]:
        return list(self.tools[name]["parameters"].get("required", []))

    def verbs(self, name: str) -> set[str]:
        first = [w for w in _words(self.tools[name].get("description", ""))[:1] if w not in _WEAK_VERBS]
        verb = name.split("_")[0]
        if verb in _READ_VERBS:  # check_in_vehicle is a write, but "check my licence" is not it
            verb = name
        return {verb, *first}

    def obvious_writes(self) -> list[str]:
        """Write tools whose verb the request uses, in the order it uses them."""
        req = _words(self.request)
        hits: dict[str, int] = {}
        for name in self.tools:
            if not self.is_write(name):
                continue
            verbs = self.verbs(name)
            if verbs & _UNDO_VERBS and not any(_stem_match(w, v) for w in req for v in verbs & _UNDO_VERBS):
                continue
            for i, w in enumerate(req):
                cands = {w} | _SYNONYMS.get(w, set())
                if any(_stem_match(c, v) for c in cands for v in verbs):
                    hits.setdefault(name, i)
                    break
        if any(_stem_match(w, "booking") or w == "book" for w in req):  # "book me ...": hold, then confirm
            for name in self.tools:
                if name.split("_")[0] in ("hold", "confirm") and self.is_write(name):
                    hits.setdefault(name, len(req) if name.startswith("confirm") else -1)
        # several tools on one verb (book_slot, book_shuttle ...): keep those whose nouns the request names
        by_pos: dict[int, list[str]] = {}
        for name, i in hits.items():
            by_pos.setdefault(i, []).append(name)
        out = []
        for i in sorted(by_pos):
            names = sorted(by_pos[i])
            if len(names) > 1:
                named = [n for n in names if any(_stem_match(w, t) for t in n.split("_")[1:] for w in req)]
                names = named or names[:1]
            out.extend(names)
        return out

    def fill(self, name: str, exclude=frozenset(), override: dict | None = None) -> dict | None:
        """Arguments for ``name`` from memory, or None when a required one cannot be found."""
        props = self.tools[name]["parameters"].get("properties", {})
        required = set(self.required(name))
        datetimes = _DATETIME.findall(self.request)
        args: dict[str, Any] = {}
        for p, s in props.items():
            if override and p in override:
                args[p] = override[p]
                continue
            v = self._value(p, s, p not in required, exclude, datetimes, args)
            if v is None:
                if p in required:
                    return None
                continue
            args[p] = v
        return args

    def _value(self, p: str, s: dict, optional: bool, exclude, datetimes: list[str], so_far: dict):
        typ, desc = s.get("type"), s.get("description", "").lower()
        if "enum" in s:
            text = self.request.lower().replace("-", "_").replace(" ", "_")
            for e in s["enum"]:
                if e.lower() in text:
                    return e
            return None if optional else s["enum"][0]
        if typ == "array":
            vals = self.mem.request_list(p) or ("site" in desc and self.mem.request_list("site_id")) or None
            return vals
        if typ == "integer":
            return self._number(p, desc)
        if p in ("message", "reason", "text"):
            return self.request[:200] if p == "text" else "As the request asks: " + self.request[:160]
        if "date" in p or "yyyy-mm-dd" in desc or p == "check_in" or "arrival date" in desc:
            dates = _DATE.findall(self.request)
            return None if optional or not dates else dates[0]
        if p in ("start", "arrival", "ready_by", "slot") or p.endswith("_time") or "iso" in desc:
            if optional:
                return None
            used = sum(1 for v in so_far.values() if isinstance(v, str) and _DATETIME.fullmatch(v))
            if datetimes:
                return datetimes[min(used, len(datetimes) - 1)]
            known = [x for x in self.mem.scalars.get(p, []) if isinstance(x, str) and _DATETIME.match(x)]
            return known[0] if known else None
        noun = p.split("_")[-1]
        if not p.endswith("_id") and typ == "string":  # "(class van)", "(kind family)", "category city"
            m = re.search(rf"\b{re.escape(noun)}\s+([a-z][\w-]*)", self.request)
            if m:
                return m.group(1)
        ranked = self.mem.ranked(p, exclude, request_only=optional)
        if ranked:
            return ranked[0]
        if optional:
            return None
        known = [x for x in self.mem.scalars.get(p, []) if isinstance(x, str)]
        return known[-1] if known else None

    def _number(self, p: str, desc: str) -> int | None:
        words = {w for w in set(p.split("_")) | set(_words(desc)) if len(w) > 3} | {p.split("_")[-1]}
        text = _DATETIME.sub(" ", self.request)
        for m in _NUMBER.finditer(text):
            unit = (m.group(2) or "").replace("/", "")
            following = _words(text[m.end():m.end() + 30])[:1]
            if unit and (unit in words or any(_stem_match(unit, w) for w in words)):
                return int(m.group(1))
            if unit == "x" and words & {"units", "quantity", "many"}:
                return int(m.group(1))
            if any(_stem_match(f, w) for f in following for w in words):
                return int(m.group(1))
        known = [x for x in self.mem.scalars.get(p, []) if isinstance(x, int)]
        return known[-1] if known else None

    # ------------------------------------------------------------------ building blocks
    def explore(self, budget: int = 12) -> Iterator[dict]:
        """List tools without required arguments, single-id reads on the request's ids, then
        searches and quotes whose arguments the request fills."""
        actions: list[dict] = []
        for name, f in sorted(self.tools.items()):
            if self.is_read(name) and not self.required(name):
                actions.append(self.call(name, {}))
        n = 0
        for a in actions:
            if n >= budget:
                return
            yield from self._look(a)
            n += 1
        for a in self.reads_on_ids(only_request=True):
            if n >= budget:
                return
            yield from self._look(a)
            n += 1
        for name in sorted(self.tools):
            if n >= budget:
                return
            if self.is_read(name) and len(self.required(name)) > 1:
                args = self.fill(name)
                if args and self._key(self.call(name, args)) not in self.calls:
                    yield from self._look(self.call(name, args))
                    n += 1

    def _look(self, action: dict) -> Iterator[dict]:
        yield action
        if self.ok():
            self.looked.append(action)

    def look_again(self, budget: int = 14) -> Iterator[dict]:
        """Repeat the reads that worked while exploring (newest facts now count as what changed),
        then read what our own writes made."""
        self.mem.phase = 1
        for a in self.looked[:budget]:
            yield a
        yield from self.reads_on_ids(ids={v for w in self.writes for v in w["created"]})

    def reads_on_ids(self, only_request: bool = False, ids=None, again: bool = False) -> Iterator[dict]:
        """Every read tool with one required id argument, on every id that fits it (``again``: reads made
        before too)."""
        for name in sorted(self.tools):
            req = self.required(name) if self.is_read(name) else []
            if len(req) != 1 or not req[0].endswith("_id"):
                continue
            for v, rec in sorted(self.mem.ids.items(), key=lambda kv: kv[1]["first"]):
                if (only_request and not rec["in_request"]) or (ids is not None and v not in ids):
                    continue
                a = self.call(name, {req[0]: v})
                if self.mem.score(v, req[0]) >= 5 and (again or self._key(a) not in self.calls):
                    yield a

    def attempt_writes(self, names: list[str], on_failure=None, after=None) -> Iterator[dict]:
        """Try each write in turn; one whose arguments cannot be filled yet waits for the others. ``after`` follows
        a write that worked, ``on_failure`` one that did not."""
        pending, stuck = list(names), 0
        while pending and stuck < len(pending):
            name = pending.pop(0)
            args = self.fill(name)
            if args is None:
                pending.append(name)
                stuck += 1
                continue
            stuck = 0
            yield self.call(name, args)
            if self.ok() and after is not None:
                yield from after(name, args)
            elif not self.ok() and on_failure is not None:
                yield from on_failure(name, args)

    def retry_once(self, name: str, args: dict) -> Iterator[dict]:
        """After a failed write: re-read what the error names, then retry once with what was read.
        If an id the error names was made by an earlier write of ours (a hold that lapsed), make it
        again and redo the writes that used it; otherwise swap that id for another of its kind."""
        if name in self._retried:
            return
        self._retried.add(name)
        error = self.writes[-1]["error"]
        named = {m.group(0) for m in _ID.finditer(error)} & set(self.mem.ids)
        yield from self.reads_on_ids(ids=named)
        makers = [i for i, w in enumerate(self.writes) if w["ok"] and set(w["created"]) & named]
        if makers:  # make it again and go straight on to the failed write (holds can be short)
            for w in (self.writes[makers[0]], self.writes[-1]):
                again = self.fill(w["name"]) or w["args"]
                yield self.call(w["name"], again)
                if not self.ok():
                    return
            return
        bad = named & {v for v in args.values() if isinstance(v, str)}
        again = self.fill(name, exclude=bad) if bad else None
        if again and again != args:
            yield self.call(name, again)

    def undo_own_writes(self) -> Iterator[dict]:
        """Cancel or release, newest first, what each of our writes made or booked (a hold, a
        reservation, a slot): one undo per write, on an id it created, or on the thing it names."""
        undo = [n for n in sorted(self.tools) if self.is_write(n) and self.verbs(n) & _UNDO_VERBS]
        for w in reversed(self.writes):
            if not w["ok"] or w["name"] in undo:
                continue
            nouns = w["name"].split("_")[1:]
            named = [v for v in w["args"].values() if isinstance(v, str) and v in self.mem.ids]
            done = False
            for v in w["created"] + named:
                for n in undo:
                    fits = [p for p in self.required(n) if self.mem.score(v, p) >= 7 and (
                        v in w["created"] or any(_stem_match(p.split("_")[0], t) for t in nouns))]
                    args = self.fill(n, override={fits[0]: v}) if fits else None
                    if args:
                        yield self.call(n, args)
                        done = True
                        break
                if done:
                    break

    def refusal(self, lead: str, extra: list[str] = ()) -> str:
        """A short refusal naming the few facts most likely to be what blocks the request."""
        facts = [t for _, _, t in sorted(self.mem.facts, key=lambda f: (-f[0], -f[1]))]
        said = list(dict.fromkeys([*extra, *facts]))[:3]
        return f"{lead}: " + "; ".join(s.rstrip(".") for s in said) + "." if said else f"{lead}."

    def refuse(self, lead: str = "I'm sorry, but your request cannot be done", extra: list[str] = ()):
        yield self.call("chat_with_user", {"message": self.refusal(lead, extra)})
        yield FINAL

    def ask(self, message: str) -> Iterator[dict]:
        yield self.call("chat_with_user", {"message": message})
        self.reply = str((self.result or {}).get("data", {}).get("reply", "")) if self.ok() else ""


class WritesThenReads(_Scripted):
    """Do the writes the request names, with ids from the request (and from earlier writes'
    results); then read everything it can: every list tool, then every single-id read on every id
    seen (its own new ids first), then finish.  Tests whether milestones credit reading after acting
    ("noticed", "observed") whatever the order."""

    def plan(self):
        yield from self.attempt_writes(self.obvious_writes())
        yield from self.explore(budget=10)
        own = {v for w in self.writes for v in w["created"]} | {
            v for w in self.writes for v in w["args"].values() if isinstance(v, str)}
        yield from self.reads_on_ids(ids=own)
        yield from self.reads_on_ids()


class RereadAfterFailure(_Scripted):
    """Explore (list tools, reads on the request's ids, searches the request fills), do the obvious
    writes, and after a failed write re-read the entities the error names and retry once with what
    it read (see :meth:`_Scripted.retry_once`), then finish."""

    def plan(self):
        yield from self.explore()
        yield from self.attempt_writes(self.obvious_writes(), on_failure=self.retry_once)


class RereadEveryWrite(_Scripted):
    """What the playtesters' own reports describe as the winning habit, scripted: explore, then after every obvious
    write re-read each entity it named or made; after a failed write re-read what the error names and replan
    locally, the changed entity swapped for another of its kind, up to three tries; before finishing, read
    everything it wrote to once more. Observation-only like the rest: its score is what checking after every step
    earns without understanding the task."""

    TRIES = 3

    def plan(self):
        yield from self.explore()
        yield from self.attempt_writes(self.obvious_writes(), on_failure=self.replan, after=self.reread)
        yield from self.reread_all()

    def reread(self, name: str, args: dict) -> Iterator[dict]:
        touched = {v for v in args.values() if isinstance(v, str)} | set(self.writes[-1]["created"])
        yield from self.reads_on_ids(ids=touched & set(self.mem.ids), again=True)

    def replan(self, name: str, args: dict) -> Iterator[dict]:
        ruled_out: set[str] = set()
        for _ in range(self.TRIES):
            named = {m.group(0) for m in _ID.finditer(self.writes[-1]["error"])} & set(self.mem.ids)
            yield from self.reads_on_ids(ids=named, again=True)
            ruled_out |= named & {v for v in args.values() if isinstance(v, str)}
            again = self.fill(name, exclude=ruled_out) if ruled_out else None
            if not again or again == args:
                return
            yield self.call(name, again)
            if self.ok():
                yield from self.reread(name, again)
                return
            args = again

    def reread_all(self) -> Iterator[dict]:
        ours = {v for w in self.writes if w["ok"] for v in [*w["created"], *(
            a for a in w["args"].values() if isinstance(a, str))]}
        yield from self.reads_on_ids(ids=ours & set(self.mem.ids), again=True)


class AskThenActOrRefuse(_Scripted):
    """Ask the user one generic question at the start.  If the reply only points back at the
    request (or says an alternative is fine), act: explore, the obvious writes, one retry after a
    failure.  If the reply states a hard constraint, refuse: explore, try the writes to see what
    blocks them, undo what they made, and tell the user the request cannot be done, naming the
    constraint and what blocked it."""

    _accepting = re.compile(r"everything i know|that is all i know|not sure what you mean|details are in|"
                            r"\bany\b|is fine|be fine|will do|as asked|as i asked", re.I)
    _binding = re.compile(r"has to|have to|must|need|can't|cannot|can only|nothing else|nothing later|"
                          r"no use|won't|no later|fixed|only", re.I)

    def refuses(self, reply: str) -> bool:
        """The reply states a hard constraint and offers no way round it."""
        return bool(self._binding.search(reply)) and not self._accepting.search(reply)

    def plan(self):
        yield from self.ask(ALTERNATIVE_QUESTION)
        yield from self.explore(budget=8)
        if self.refuses(self.reply):
            yield from self.attempt_writes(self.obvious_writes())
            yield from self.look_again()
            yield from self.undo_own_writes()
            yield from self.refuse(extra=[self.reply])
            return
        yield from self.attempt_writes(self.obvious_writes(), on_failure=self.retry_once)


class ExploreThenRefuse(_Scripted):
    """Explore, attempt the obvious writes; if a write failed, read everything again (a notice or
    status that was not there at first is "what changed"), re-read what the errors name, undo what
    its writes made, and tell the user in a chat that the request cannot be done, naming what
    changed and what failed (ids, times, statuses), then give the final reply."""

    def plan(self):
        yield from self.explore()
        yield from self.attempt_writes(self.obvious_writes())
        failed = [w for w in self.writes if not w["ok"]]
        if failed:
            yield from self.look_again()
            yield from self.reads_on_ids(ids={m.group(0) for w in failed for m in _ID.finditer(w["error"])})
            yield from self.undo_own_writes()
            yield from self.refuse()


class RefuseFeasible(_Scripted):
    """Explore a little, then refuse politely naming what it saw: the refusal a lazy agent gives
    whenever anything looks hard.  It never writes."""

    def plan(self):
        yield from self.explore(budget=8)
        yield from self.look_again(budget=8)
        yield from self.refuse("I'm sorry, but I can't complete this request as asked")


ADVERSARIES = {
    "writes-then-reads": WritesThenReads,
    "reread-after-failure": RereadAfterFailure,
    "reread-every-write": RereadEveryWrite,
    "ask-then-act-or-refuse": AskThenActOrRefuse,
    "explore-then-refuse": ExploreThenRefuse,
    "refuse-feasible": RefuseFeasible,
}
