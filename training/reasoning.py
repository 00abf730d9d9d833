"""Short reasoning text beside the assistant's tool calls, written from what the agent had seen.

STT-Arena refines message blocks that hold the model's own diagnostic text, not bare calls.
:func:`narrate` gives each assistant turn of a replayed transcript such text, in one or two
sentences: what its last result showed (a refusal and what it means, a value that moved
since it was last read), why the plan changes, and what the call is for (re-checking state
before acting on it, reading the end state back before finishing). Routine calls carry a
few words or nothing; the final reply stays exactly as it was.

The text is a function of the blocks and what the environment answered, so every edit of a
block edits its text too: a deleted blind retry takes its text away, the turn after a
refusal then interprets the failure instead of retrying, a re-read inserted after a change
says it re-checks the plan, and the turn after it names what moved. It is written only from
what the agent could see before that turn: the request, its own calls and the results it
read. The trigger log, the task's level and its solvability never reach it.

Wording varies: each kind of sentence has several phrasings, drawn per transcript from a
generator seeded with the instance's seed, so the same instance always reads the same.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np

from sttgym.agents.llm import USER_TOOL
from sttgym.training.transcripts import Step, Transcript, failed, is_call

__all__ = ["narrate", "notes"]

NARRATION_KEY = 0x7E47  # narration draws its own stream from the instance seed
ROUTINE_CHANCE = 0.3  # share of routine calls that carry a word about the next step
MAX_QUOTE = 90  # characters of an error message or a changed value quoted in a note
MAX_VALUE = 40  # characters of an argument naming what a call is about
READ_VERBS = {"get", "list", "check", "read", "search", "find", "query", "view", "lookup", "fetch", "show"}

REFUSED = ("The call {tool} was refused: {error}. That is the state of the world, not a slip to retry: {plan}",
           "The refusal of {tool} ({error}) means my picture of the state is out of date: {plan}",
           "{tool} failed with \"{error}\"; the same call would fail the same way, so {plan}")
AFTER_REFUSAL_READ = ("reading the {subject} to see what changed.", "checking the {subject} before deciding.",
                      "first a look at the {subject}.")
AFTER_REFUSAL_ACT = ("changing course: {action}.", "a different step is needed: {action}.",
                     "next, {action} instead.")
RETRY_SAME = ("Maybe a passing glitch; trying {tool} again.", "That looks temporary; sending the same call again.",
              "Trying {tool} once more.")
RETRY_VARIED = ("Perhaps the identifier's format is off; trying {value}.",
                "Maybe it expects {value} rather than {old}; retrying.", "Trying again with {value}.")
TRANSIENT = ("The service says the call may be retried; sending it again.", "A transient error: retrying {tool}.")
CHANGED = ("The {subject} has changed: {change}, which none of my calls did. {plan}",
           "Since I last read the {subject}, {change}; my plan has to account for that. {plan}",
           "In the {subject}, {change}, and not by me. {plan}")
AFTER_CHANGE_ACT = ("Next: {action}.", "With that in mind: {action}.", "So the next step: {action}.")
AFTER_CHANGE_READ = ("Reading the {subject} too before I act.", "I need the {subject} as well.",
                     "Checking the {subject} in that light.")
REPLAN = ("With the {seen}, the plan changes: {action}.", "The {seen} changes the plan: {action}.",
          "Given the {seen}: {action}.")
OWN_CHANGE = ("The {subject} shows my update.", "My change is in place.", "")
UNCHANGED = ("The {subject} is as before; carrying on.", "Nothing moved; going on.", "")
REFRESH = ("{done}; re-reading the {subject} before the next step, to make sure the plan still holds.",
           "{done}. Before going on I re-check the {subject}: the plan rests on it.",
           "{done}; the next step needs the {subject} as it is now, not as I read it earlier.")
VERIFY = ("Before finishing, reading the {subject} back to confirm that {last} took effect.",
          "Verifying the end state: the {subject} should reflect my last step ({last}).",
          "One last check of the {subject}, to be sure the request is met.")
ROUTINE = ("Next: {action}.", "Now {action}.", "Then {action}.")
OPENING = ("Starting with the {subject}.", "First I need the {subject}.", "I begin by reading the {subject}.")


def notes(transcript: Transcript) -> list[str]:
    """One note per block of ``transcript`` (empty for the final reply and for most routine calls)."""
    return _Narrator(transcript).notes()


def narrate(transcript: Transcript) -> Transcript:
    """``transcript`` with each assistant turn's ``content`` set to its note, beside its tool call."""
    texts, messages = iter(notes(transcript)), []
    for message in transcript.messages:  # the assistant turns are the blocks, in order
        if message["role"] == "assistant":
            note = next(texts)
            message = {**message, "content": note} if message.get("tool_calls") else message
        messages.append(message)
    return dataclasses.replace(transcript, messages=messages, reasoning=True)


def _data(step: Step) -> Any:
    """The parsed ``data`` of a step's result (the raw observation when it is not JSON)."""
    if step.result is not None:
        return step.result.get("data")
    try:
        return json.loads(step.observation).get("data")
    except (json.JSONDecodeError, AttributeError):
        return step.observation


def _leaves(value: Any, path: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _leaves(item, f"{path}.{key}" if path else key).items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in _leaves(item, f"{path}[{i}]").items()}
    return {path: value}


def _shown(value: Any) -> str:
    text = "none" if value is None else value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= MAX_QUOTE else text[:MAX_QUOTE] + "..."


def _key(action: dict) -> str:
    return action["name"] + json.dumps(action.get("arguments", {}), sort_keys=True)


def _values(action: dict, count: int) -> list[str]:
    """The first ``count`` scalar arguments of a call, shortened."""
    values = [v for v in action.get("arguments", {}).values() if isinstance(v, (str, int, float))
              and not isinstance(v, bool)]
    return [_shown(v)[:MAX_VALUE] for v in values[:count]]


def _action(action: dict) -> str:
    """A call in words: its tool's name spelled out and its identifying arguments."""
    if action["name"] == USER_TOOL:
        return "tell the user"
    values = _values(action, 3)
    return action["name"].replace("_", " ") + (f" {', '.join(values)}" if values else "")


def _subject(action: dict) -> str:
    """What a read looks at: ``get_vehicle_status(VH-1)`` reads "vehicle status for VH-1"."""
    words = action["name"].split("_")
    noun = " ".join(words[1:] if len(words) > 1 and words[0] in READ_VERBS else words)
    values = _values(action, 2)
    return noun + (f" for {', '.join(values)}" if values else "")


class _Narrator:
    def __init__(self, t: Transcript):
        self.t = t
        self.rng = np.random.default_rng([NARRATION_KEY, t.seed])
        self.earlier = self.earlier_reads()
        self.pending = ""  # a change the agent read and has not acted on yet: the reason its next change makes

    def pick(self, phrasings: tuple[str, ...], **fields: str) -> str:
        return phrasings[int(self.rng.integers(len(phrasings)))].format(**fields)

    def notes(self) -> list[str]:
        return [self.note(i) if is_call(step) else "" for i, step in enumerate(self.t.steps)]

    def earlier_reads(self) -> list[int | None]:
        """For each read, the index of the last successful read of the same call before it."""
        reads: dict[str, int] = {}
        out: list[int | None] = []
        for i, step in enumerate(self.t.steps):
            key = _key(step.action) if self.is_read(step.action) else None
            out.append(reads.get(key) if key else None)
            if key and (step.result or {}).get("success"):
                reads[key] = i
        return out

    def is_read(self, action: dict) -> bool:
        return action.get("name") in self.t.reads

    def changed(self, step: Step) -> bool:
        """Whether ``step`` is a change the agent made (a call that changes the world and was carried out)."""
        return self.t.mutates(step) and bool((step.result or {}).get("success"))

    def note(self, i: int) -> str:
        text = self.compose(i)
        if not self.is_read(self.t.steps[i].action):
            self.pending = ""  # a change the agent makes answers (or passes over) what it read
        return text

    def compose(self, i: int) -> str:
        steps, action = self.t.steps, self.t.steps[i].action
        previous = steps[i - 1] if i else None
        if previous is not None and failed(previous):
            return self.after_refusal(previous, action)
        if previous is not None and (previous.result or {}).get("retryable"):
            return self.pick(TRANSIENT, tool=action["name"])
        seen = self.seen_change(i)
        if seen:
            return seen
        if self.earlier[i] is not None:
            return self.reread(i, self.earlier[i])
        if i == 0 and self.is_read(action):
            return self.pick(OPENING, subject=_subject(action)) if self.rng.random() < 2 * ROUTINE_CHANCE else ""
        if self.pending and not self.is_read(action):
            return self.pick(REPLAN, seen=self.pending, action=_action(action))
        if self.rng.random() < ROUTINE_CHANCE:
            return self.pick(ROUTINE, action=_action(action))
        return ""

    def after_refusal(self, refused: Step, action: dict) -> str:
        """A blind retry misreads the refusal as a glitch or a typo; any other next step reads it as a state."""
        if action["name"] == refused.action["name"]:
            old, new = refused.action.get("arguments", {}), action.get("arguments", {})
            varied = [k for k in new if old.get(k) != new[k] and isinstance(new[k], str)]
            if varied:
                return self.pick(RETRY_VARIED, value=new[varied[0]], old=_shown(old.get(varied[0])))
            return self.pick(RETRY_SAME, tool=action["name"])
        if self.is_read(action):
            plan = self.pick(AFTER_REFUSAL_READ, subject=_subject(action))
        else:
            plan = self.pick(AFTER_REFUSAL_ACT, action=_action(action))
        error = _shown(str((refused.result or {}).get("error") or refused.observation))
        return self.pick(REFUSED, tool=refused.action["name"], error=error, plan=plan)

    def seen_change(self, i: int) -> str:
        """What the last call, a re-read, showed: values that moved since the earlier read, if any."""
        earlier = self.earlier[i - 1] if i else None
        if earlier is None:
            return ""
        previous = self.t.steps[i - 1]
        before, after = _leaves(_data(self.t.steps[earlier])), _leaves(_data(previous))
        moved = [p for p in after if p in before and before[p] != after[p]] + [p for p in after if p not in before]
        subject = _subject(previous.action)
        if not moved:
            return self.pick(UNCHANGED, subject=subject)
        mine = " ".join(json.dumps(s.action.get("arguments", {})) + s.observation
                        for s in self.t.steps[earlier + 1:i - 1] if self.changed(s))
        foreign = [p for p in moved if _shown(after[p]) not in mine]
        if not foreign:
            return self.pick(OWN_CHANGE, subject=subject)
        path = foreign[0]
        change = (f"{path} is now {_shown(after[path])} (was {_shown(before[path])})" if path in before
                  else f"{path} now reads {_shown(after[path])}")
        action = self.t.steps[i].action
        if self.is_read(action):  # the agent gathers more before it changes anything: the change is its reason then
            self.pending = f"{subject} showing {path} {_shown(after[path])}"
            plan = self.pick(AFTER_CHANGE_READ, subject=_subject(action))
        else:
            plan = self.pick(AFTER_CHANGE_ACT, action=_action(action))
        return self.pick(CHANGED, subject=subject, change=change, plan=plan)

    def reread(self, i: int, earlier: int) -> str:
        """A read of something read before: the end-state check before the reply, or a refresh before acting."""
        steps, action = self.t.steps, self.t.steps[i].action
        changes = [s for s in steps[earlier + 1:i] if self.changed(s)]
        last = _action(changes[-1].action) if changes else "everything"
        if i + 1 < len(steps) and not is_call(steps[i + 1]):  # the plan's next step is the final reply
            return self.pick(VERIFY, subject=_subject(action), last=last)
        message = changes[-1].result.get("message") if changes else None
        if message:
            done = f"Done: {_shown(message.split(';')[0])}"  # a result's message: its first clause says what happened
        else:
            done = f"After {last}" if changes else "Some time has passed"
        return self.pick(REFRESH, done=done, subject=_subject(action))
