"""Iterative trajectory refinement (STT-Arena §4.2) as edits of message blocks, verified by replay.

A *block* is one assistant turn with what came back: a tool call and its result, or the
final reply. Refinement edits the list of blocks with four operators (:class:`Delete`,
:class:`Reorder`, :class:`Modify` a block's call, :class:`Insert` a new one), whose indices
always refer to the blocks as they were before the edit, and the final reply stays last.

It runs in three stages, each aimed at one failure mode:

1. ``diagnose``: after a refusal, keep the block that shows the failure and drop the blind
   retries of it that follow before anything changed;
2. ``refresh``: after a trigger changed the world, re-read what changed before acting again
   (the refused stale attempt becomes the re-read, or the re-read is inserted);
3. ``verify``: after the last change, read the changed state back before finishing.

A block's reasoning text (see :mod:`sttgym.training.reasoning`) belongs to the block: when the
transcript carries text, every replayed stage that is kept is narrated again, so a deleted retry takes
its text with it, the turn that now follows a refusal interprets it, and an inserted re-read
says what it re-checks. The LLM refiner reads the text with the calls.

After each stage the edited actions are replayed in the environment (tool results, trigger
firings and reward all come from the replay, see :mod:`sttgym.training.transcripts`); a
stage whose replay scores below the original transcript is dropped, so a refined
transcript is kept only if its reward is at least the original's.

:class:`RuleRefiner` proposes the edits with rules; :class:`LLMRefiner` asks a chat model
(any :class:`~sttgym.models.ChatModel`) for them as JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Union

from sttgym.agents.llm import USER_TOOL
from sttgym.models.base import ChatModel
from sttgym.models.parsing import extract_json_object
from sttgym.training.reasoning import narrate
from sttgym.training.transcripts import Step, Transcript, failed, is_call, replay

__all__ = ["Delete", "Reorder", "Modify", "Insert", "Operation", "apply_operations", "STAGES", "Refinement",
           "Refiner", "RuleRefiner", "LLMRefiner", "parse_operations"]

STAGES = ("diagnose", "refresh", "verify")


@dataclass(frozen=True)
class Delete:
    """Drop block ``index``."""

    index: int


@dataclass(frozen=True)
class Reorder:
    """Move block ``index`` to just before block ``before``."""

    index: int
    before: int


@dataclass(frozen=True)
class Modify:
    """Replace the call (or the reply) of block ``index`` with ``action``."""

    index: int
    action: dict


@dataclass(frozen=True)
class Insert:
    """Put a new block with ``action`` just before block ``before``."""

    before: int
    action: dict


Operation = Union[Delete, Reorder, Modify, Insert]


def apply_operations(actions: list[dict], operations: list[Operation]) -> list[dict]:
    """``actions`` edited by ``operations`` (indices into ``actions`` as given).

    An operation naming a block that no longer exists, moving or deleting the final reply,
    or turning a call into a reply (or back) is skipped: edits never raise.
    """
    has_reply = bool(actions) and "name" not in actions[-1]
    reply = len(actions) - 1 if has_reply else None
    items: list[tuple[int | None, dict]] = list(enumerate(actions))

    def position(index: int) -> int | None:
        return next((p for p, (i, _) in enumerate(items) if i == index), None)

    for op in operations:
        if isinstance(op, Insert):
            where = position(op.before)
            if where is not None and "name" in op.action:
                items.insert(where, (None, op.action))
            continue
        where = position(op.index)
        if where is None or (op.index == reply and not isinstance(op, Modify)):
            continue
        if isinstance(op, Delete):
            items.pop(where)
        elif isinstance(op, Modify):
            if ("name" in op.action) == ("name" in items[where][1]):
                items[where] = (op.index, op.action)
        else:
            target = position(op.before)
            if target is not None and op.before != op.index:
                moved = items.pop(where)
                items.insert(position(op.before), moved)
    return [action for _, action in items]


@dataclass
class Refinement:
    """What refinement did to one transcript."""

    original: Transcript
    refined: Transcript
    operations: list[tuple[str, Operation]] = field(default_factory=list)  # (stage, operation) kept

    @property
    def changed(self) -> bool:
        return bool(self.operations)


class Refiner:
    """Runs the three stages; subclasses say which operations each stage proposes."""

    def propose(self, stage: str, transcript: Transcript) -> list[Operation]:
        raise NotImplementedError

    def refine(self, transcript: Transcript) -> Refinement:
        """Refine ``transcript`` stage by stage, keeping each stage only if its replay scores at least the original."""
        current, kept = transcript, []
        for stage in STAGES:
            operations = self.propose(stage, current)
            if not operations:
                continue
            actions = apply_operations(current.actions, operations)
            if actions == current.actions:
                continue
            candidate = replay(current.env_id, current.seed, actions, current.env_kwargs)
            if candidate.reward >= transcript.reward:
                current = narrate(candidate) if transcript.reasoning else candidate
                kept += [(stage, op) for op in operations]
        return Refinement(transcript, current, kept)


def _scalars(arguments: dict) -> set[str]:
    return {json.dumps(v) for v in arguments.values() if isinstance(v, (str, int, float, bool))}


class RuleRefiner(Refiner):
    """The three stages as rules over the replayed blocks and the triggers that fired."""

    def propose(self, stage: str, transcript: Transcript) -> list[Operation]:
        return {"diagnose": self.diagnose, "refresh": self.refresh, "verify": self.verify}[stage](transcript)

    @staticmethod
    def diagnose(t: Transcript) -> list[Operation]:
        """Delete a refused call of a tool already refused since the world last changed."""
        refused: set[str] = set()
        ops: list[Operation] = []
        for i, step in enumerate(t.steps):
            if step.events or (t.mutates(step) and not failed(step)):
                refused.clear()  # after a change a second attempt is no longer blind
            if failed(step):
                if step.action["name"] in refused:
                    ops.append(Delete(i))
                refused.add(step.action["name"])
        return ops

    @staticmethod
    def refresh(t: Transcript) -> list[Operation]:
        """After each change, make sure its observable tool is read before the next attempt to act."""
        ops: list[Operation] = []
        seen: set[tuple[int, str]] = set()
        for i, step in enumerate(t.steps):
            for event in step.events:
                tool, wanted = event["observable_via"], event.get("observable_args", {})

                def shows(s: Step) -> bool:  # a call of the read that reveals this change
                    arguments = s.action.get("arguments", {})
                    return s.action.get("name") == tool and all(arguments.get(k) == v for k, v in wanted.items())

                if event.get("timing") == "before" and shows(step):
                    continue  # this very read already shows the change
                j = next((k for k in range(i + 1, len(t.steps)) if t.mutates(t.steps[k]) or not is_call(t.steps[k])),
                         None)
                if j is None or (j, tool) in seen:
                    continue
                if any(shows(t.steps[k]) and not failed(t.steps[k]) for k in range(i + 1, j)):
                    continue
                source = next((s for s in reversed(t.steps[:i + 1]) if shows(s)), None)
                seen.add((j, tool))
                refresh = {"name": tool, "arguments": dict(source.action.get("arguments", {}) if source else wanted)}
                ops.append(Modify(j, refresh) if failed(t.steps[j]) else Insert(j, refresh))
        return ops

    @staticmethod
    def verify(t: Transcript) -> list[Operation]:
        """Before the final reply, read back the state the last change touched, if nothing did."""
        if not t.steps or is_call(t.steps[-1]):
            return []
        changes = [i for i, s in enumerate(t.steps) if t.mutates(s) and not failed(s) and s.action["name"] != USER_TOOL]
        if not changes:
            return []
        last = changes[-1]
        reply = len(t.steps) - 1
        if any(t.steps[k].action.get("name") in t.reads and not failed(t.steps[k]) for k in range(last + 1, reply)):
            return []
        touched = _scalars(t.steps[last].action.get("arguments", {}))
        reads = [s for s in reversed(t.steps[:last]) if s.action.get("name") in t.reads and not failed(s)]
        check = next((s for s in reads if _scalars(s.action.get("arguments", {})) & touched), None)
        return [Insert(reply, dict(check.action))] if check is not None else []


REFINER_SYSTEM = """You edit the transcript of a tool-using agent so that it becomes a clean example to learn from.
The transcript is a numbered list of blocks: each block is one tool call with its result (and the agent's
note about it, when it wrote one), and the last one is the agent's final reply. Lines starting with "!" mark moments when the world changed by itself during that
call (the agent did not see this directly).

Answer with a JSON object {"operations": [...]} and nothing else. Each operation is one of:
{"op": "delete", "block": i}
{"op": "move", "block": i, "before": j}
{"op": "modify", "block": i, "call": {"name": "<tool>", "arguments": {...}}}
{"op": "insert", "before": j, "call": {"name": "<tool>", "arguments": {...}}}
Block numbers always refer to the list as shown. Never delete or move the final reply. Use only tools and
identifiers that appear in the transcript. Return {"operations": []} when nothing should change. Every edit is
replayed in the real environment and discarded if the outcome gets worse."""

STAGE_GOALS = {
    "diagnose": "Goal: after a call fails, keep the block that shows why it failed and delete blind retries of the "
                "same call (repeats, or guesses at identifiers) that follow it before anything changed.",
    "refresh": "Goal: after the world changed, the agent must re-read the changed state before acting again. Insert "
               "that read (or turn a failed attempt made on stale state into it), or move an existing read earlier.",
    "verify": "Goal: before the final reply, the agent must read back the state its last change produced to confirm "
              "the request is met. Insert one such read if there is none.",
}


def describe(t: Transcript, width: int = 400) -> str:
    """The transcript as the LLM refiner reads it."""
    lines = [f"User request: {t.messages[1]['content'] if len(t.messages) > 1 else ''}",
             "Tools: " + ", ".join(call["function"]["name"] for call in t.tools), ""]
    for i, (step, text) in enumerate(zip(t.steps, t.texts)):
        if is_call(step):
            if text:
                lines.append(f"[{i}] note: {text}")
            lines.append(f"[{i}] call {step.action['name']} {json.dumps(step.action.get('arguments', {}))}"
                         f" -> {step.observation[:width]}")
        else:
            lines.append(f"[{i}] final reply: {step.action.get('content', '')[:width]}")
        for event in step.events:
            changes = "; ".join(f"{c['path']}: {c['old']} -> {c['new']}" for c in event.get("changes", []))
            lines.append(f"  ! {event['trigger']}: {changes} (visible through {event['observable_via']})")
    return "\n".join(lines)


def parse_operations(text: str) -> list[Operation]:
    """The operations in a refiner model's answer; anything malformed is left out."""
    answer = extract_json_object(text) or {}
    ops: list[Operation] = []
    for item in answer.get("operations", []) if isinstance(answer.get("operations"), list) else []:
        if not isinstance(item, dict):
            continue
        kind, block, before, call = item.get("op"), item.get("block"), item.get("before"), item.get("call")
        valid_call = isinstance(call, dict) and isinstance(call.get("name"), str) and isinstance(
            call.get("arguments", {}), dict)
        action = {"name": call["name"], "arguments": call.get("arguments", {})} if valid_call else None
        if kind == "delete" and isinstance(block, int):
            ops.append(Delete(block))
        elif kind == "move" and isinstance(block, int) and isinstance(before, int):
            ops.append(Reorder(block, before))
        elif kind == "modify" and isinstance(block, int) and action:
            ops.append(Modify(block, action))
        elif kind == "insert" and isinstance(before, int) and action:
            ops.append(Insert(before, action))
    return ops


class LLMRefiner(Refiner):
    """Asks a chat model for each stage's edits.

    Args:
        model: any :class:`~sttgym.models.ChatModel`.
        generation: keyword arguments for ``model.chat`` (temperature, max_new_tokens, ...).
    """

    def __init__(self, model: ChatModel, **generation: Any):
        self.model, self.generation = model, generation

    def propose(self, stage: str, transcript: Transcript) -> list[Operation]:
        conversation = [{"role": "system", "content": REFINER_SYSTEM},
                        {"role": "user", "content": f"{STAGE_GOALS[stage]}\n\n{describe(transcript)}"}]
        response = self.model.chat([conversation], None, **self.generation)[0]
        return [] if response.error else parse_operations(response.content)
