"""Entity slots: a model-side spelling of a conversation's ids, as one token each.

An agent copies identifiers (``LOT-OPV-6244``, ``VH-273``, ``HUB-SUMMIT``) from the request and
the tool results into its calls. They are drawn per instance, yet a model reads each as a
string of tokens it must reproduce exactly; a small model trained from scratch learns *where*
an id goes long before it learns to copy it (docs/training.md measures it). Entity slots move
that copying into the tokenizer, the way a pointer does: in the text a model reads, every
identifier keeps its kind (its first part) and the rest, its name, is replaced by ``<eN>``,
its rank among the conversation's identifiers of that kind, counted in order of first
appearance. What a name may say beside being unique (a lot's product, ``OPV``) the tools'
results say too.

    "ship LOT-OPV-6244 from HUB-SUMMIT in VH-273"  ->  "ship LOT-<e0> from HUB-<e0> in VH-<e0>"

The spelling is a function of the conversation alone and never renumbers what it has
numbered, so a longer conversation spells its beginning as a shorter one did (rendering stays
prefix-preserving), and what the model writes is spelled back against the conversation it read
(:meth:`EntitySlots.decode`): the environment only ever sees real ids. A slot the conversation
does not hold (a guess) stays as written, and the world refuses it like any unknown id. An
identifier whose rank passes the last slot keeps its name. Text that already reads like a
slot (``VH-<e1>``) is taken for one.

With ``numbers=True`` the standalone integers of a conversation (``650 doses``,
``"quantity": 650``; not the digits of a time, a date, a decimal or an id) are slots too, of
the kind ``#``: the request's first number is ``#<e0>``. A model that writes one memorised
quantity instead of the request's (docs/training.md) then has one token to copy, with a role.

A tokenizer carries the scheme as ``entity_slots`` (the number of slot tokens) and
``number_slots`` (true when numbers are slots) in its configuration, so a checkpoint says how
it reads; :func:`slots_of` gives the codec or None. The tiny model builds with it
(``build_tiny_model(..., entity_slots=N, number_slots=...)``); a pretrained model copies well
and has no use for it.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["EntitySlots", "slot_tokens", "slots_of"]

# The identifiers the tiny tokenizer isolates: ids drawn per instance (VH-273) and names of places (HUB-EAST) alike.
_ID = re.compile(r"(?<![A-Za-z0-9-])[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+(?![A-Za-z0-9-])")
# Standalone integers: not part of a word or id (B60563, VH-273), a time (07:31), a date or a decimal (2.5).
_NUMBER = re.compile(r"(?<![\w.:+-])\d+(?![\w:-]|\.\d)")
NUMBER = "#"  # the kind of a number slot: #<e0>
_SLOT = re.compile(r"(?<![A-Za-z0-9-])(#|[A-Z][A-Z0-9]*-)<e(\d+)>")


def slot_tokens(count: int) -> list[str]:
    """The ``count`` slot tokens, ``<e0>`` to ``<e{count-1}>``."""
    return [f"<e{n}>" for n in range(count)]


def _split(identifier: str) -> tuple[str, str]:
    """An identifier's kind (its first part) and its name: ``LOT-OPV-6244`` -> ``("LOT-", "OPV-6244")``."""
    kind, name = identifier.split("-", 1)
    return kind + "-", name


class EntitySlots:
    """Spells a conversation's ids as slots and back; see the module docstring.

    Args:
        count: how many slot tokens the tokenizer has (ranks from ``count`` on keep their names).
        numbers: whether standalone integers are slots too (of the kind ``#``).
    """

    def __init__(self, count: int, numbers: bool = False):
        if count < 1:
            raise ValueError(f"entity slots need at least one slot token, got {count}")
        self.count, self.numbers = count, numbers

    def _found(self, text: str) -> list[tuple[re.Match, str, str]]:
        """The identifiers (and numbers) in ``text``: each match with its kind and name, in order."""
        found = [(m, *_split(m.group())) for m in _ID.finditer(text)]
        if self.numbers:
            found += [(m, NUMBER, m.group()) for m in _NUMBER.finditer(text)]
        return sorted(found, key=lambda item: item[0].start())

    def table(self, messages: list[dict]) -> dict[str, list[str]]:
        """For each kind of identifier, the names of that kind, in order of first appearance."""
        table: dict[str, list[str]] = {}

        def note(text: str) -> str:
            for _, kind, name in self._found(text):
                if name not in table.setdefault(kind, []):
                    table[kind].append(name)
            return text

        for message in messages:  # the texts in the order a model reads them
            _map_texts(message, note)
        return table

    def encode(self, messages: list[dict]) -> list[dict]:
        """A copy of ``messages`` with every identifier spelled as a slot."""
        table = self.table(messages)

        def spell(text: str) -> str:
            out, end = [], 0
            for match, kind, name in self._found(text):
                rank = table[kind].index(name)
                out += [text[end:match.start()], f"{kind}<e{rank}>" if rank < self.count else match.group()]
                end = match.end()
            return "".join(out) + text[end:]

        return [_map_texts(message, spell) for message in messages]

    def decode(self, text: str, messages: list[dict]) -> str:
        """``text`` written by a model that read ``messages`` (real ids), with its slots spelled as real ids."""
        table = self.table(messages)

        def spell(match: re.Match) -> str:
            known = table.get(match.group(1), [])
            rank = int(match.group(2))
            if rank >= min(len(known), self.count):
                return match.group()
            return known[rank] if match.group(1) == NUMBER else match.group(1) + known[rank]

        return _SLOT.sub(spell, text)


def slots_of(tokenizer: Any) -> EntitySlots | None:
    """The entity slots ``tokenizer`` reads with, or None for a tokenizer that reads ids as they are."""
    config = getattr(tokenizer, "init_kwargs", {})
    count = config.get("entity_slots")
    return EntitySlots(int(count), numbers=bool(config.get("number_slots"))) if count else None


def _map_texts(message: dict, change) -> dict:
    """A copy of ``message`` with ``change`` applied to its content and its calls' arguments."""
    out = dict(message)
    if isinstance(message.get("content"), str):
        out["content"] = change(message["content"])
    if message.get("tool_calls"):
        calls = []
        for call in message["tool_calls"]:
            function = call.get("function", call)
            arguments = function.get("arguments")
            text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
            spelled = change(text)
            # A dict of arguments is written by the template with tojson; once spelled it stays that JSON, as a string.
            changed = {**function, "arguments": spelled if spelled != text else arguments}
            calls.append({**call, "function": changed} if "function" in call else changed)
        out["tool_calls"] = calls
    return out
