"""What a chat template says about where an assistant turn ends.

A chat model stops generating at the token its template closes an assistant turn with, which
need not be the tokenizer's end-of-sequence token: Qwen3's *base* checkpoints end sequences
with ``<|endoftext|>`` (and their generation config stops only there), while the chat template
they are fine-tuned on closes every turn with ``<|im_end|>``. Reading the end of turn from the
template, not from ``eos_token``, keeps generation, loss masks and environment turns right for
both kinds of checkpoint.
"""

from __future__ import annotations

import weakref
from typing import Any

__all__ = ["compact_tools", "end_of_turn_id", "stop_token_ids"]

_SENTINEL = "sttgym-turn-sentinel"
_CACHE: "weakref.WeakKeyDictionary[Any, tuple[str, int]]" = weakref.WeakKeyDictionary()


def end_of_turn_id(tokenizer: Any) -> int:
    """The id of the token the template writes right after an assistant's words.

    Found by rendering a short exchange and taking the first added (atomic) token that follows
    the assistant's text; a template that writes none there ends turns with ``eos_token``.
    """
    template = str(tokenizer.chat_template)
    cached = _CACHE.get(tokenizer)
    if cached is not None and cached[0] == template:
        return cached[1]
    exchange = [{"role": "user", "content": "?"}, {"role": "assistant", "content": _SENTINEL},
                {"role": "user", "content": "?"}]
    text = tokenizer.apply_chat_template(exchange, tokenize=False)
    after = text[text.rindex(_SENTINEL) + len(_SENTINEL):]
    added = [token for token in tokenizer.get_added_vocab() if token and token in after]
    if added:
        first = min(added, key=lambda token: (after.index(token), -len(token)))
        found = tokenizer.convert_tokens_to_ids(first)
    elif tokenizer.eos_token_id is not None:
        found = tokenizer.eos_token_id
    else:
        raise ValueError("the chat template closes assistant turns with no atomic token and the tokenizer has no "
                         "end-of-sequence token: nothing to stop generation at")
    _CACHE[tokenizer] = (template, found)
    return found


def stop_token_ids(tokenizer: Any, model: Any = None) -> list[int]:
    """Every id generation should stop at: the end of turn first, then end-of-sequence ids of the
    tokenizer and of ``model``'s generation config."""
    ids = [end_of_turn_id(tokenizer), tokenizer.eos_token_id]
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids += configured if isinstance(configured, list) else [configured]
    return list(dict.fromkeys(i for i in ids if i is not None))


def compact_tools(tools: list[dict]) -> list[dict]:
    """Tool schemas without the two keys every tool has alike: ``"type": "function"`` and the
    parameters' ``"type": "object"``.

    The tool listing is most of every prompt, and a template that prints schemas as JSON prints
    these on every tool for no meaning (about 12 Qwen tokens a tool: docs/training.md, "Lengths").
    The ``function`` wrapper stays, since templates read ``tool.function``; names, descriptions,
    property types, ``required`` and ``additionalProperties`` stay as the environment wrote them.
    """
    def compact(tool: dict) -> dict:
        function = tool.get("function", tool)
        parameters = function.get("parameters")
        if isinstance(parameters, dict) and parameters.get("type") == "object":
            function = {**function, "parameters": {k: v for k, v in parameters.items() if k != "type"}}
        if "function" not in tool:
            return function
        return {**{k: v for k, v in tool.items() if k != "type"}, "function": function}

    return [compact(tool) for tool in tools]
