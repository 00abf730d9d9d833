"""One chat rendering for SFT and RL: a conversation becomes token ids and an assistant mask.

SFT renders a whole stored conversation with :func:`render`. The RL rollout engine builds
the same sequence turn by turn: :func:`render_prompt` for the opening, the tokens the policy
generates (each turn ending with the end-of-turn token), and :func:`followup_ids` for what
the environment says next. Turns end at the template's end-of-turn token
(:func:`~sttgym.models.template.end_of_turn_id`), which for a base checkpoint is not its
end-of-sequence token. With a prefix-preserving template the two agree token for token
(``tests/training/test_render.py`` checks it), so the policy is trained on exactly the
context it acts in, and the loss mask is the same in both: the assistant's tokens up to and
including its end-of-turn token, nothing else.

A tokenizer that reads ids as entity slots (:mod:`sttgym.models.slots`) gets every
conversation spelled that way here, in all three functions, so SFT and RL see the same tokens.
"""

from __future__ import annotations

import json
from typing import Any

from sttgym.models.slots import slots_of
from sttgym.models.template import compact_tools, end_of_turn_id

__all__ = ["prepare_tokenizer", "compact_tools", "decode_tools", "spelled", "render", "render_prompt", "followup_ids"]


def prepare_tokenizer(tokenizer: Any) -> Any:
    """``tokenizer`` with a template fit for training, and a pad token.

    The template must mark the assistant's tokens (``{% generation %}``) and preserve
    prefixes; TRL's training variant of a known template (Qwen3, Llama 3, ...) replaces
    one that does not. Raises ``ValueError`` when neither holds.
    """
    from trl.chat_template_utils import get_training_chat_template

    replacement = get_training_chat_template(tokenizer)
    if replacement is not None:
        tokenizer.chat_template = replacement
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def decode_tools(tools: str | list | None) -> list | None:
    """Tool schemas as the template is given them: datasets store them as a JSON string, and the
    listing is compacted (:func:`compact_tools`) alike for SFT, RL and the engine's evaluation."""
    if isinstance(tools, str):
        tools = json.loads(tools) if tools else None
    return compact_tools(tools) if tools else tools


def spelled(tokenizer: Any, messages: list[dict], history: list[dict] = ()) -> list[dict]:
    """``messages`` as ``tokenizer`` reads them, following ``history``: ids as entity slots where it uses them."""
    slots = slots_of(tokenizer)
    if slots is None:
        return messages
    return slots.encode([*history, *messages])[len(history):]


def render(tokenizer: Any, messages: list[dict], tools: str | list | None = None) -> tuple[list[int], list[int]]:
    """Token ids of a conversation and its assistant mask (1 on tokens the assistant produced).

    Each assistant span ends at its end-of-turn token (some templates mark the newline after
    it too, which a policy stopping at end-of-turn never generates), and the sequence ends
    with the last assistant token: nothing after it can be learned.
    """
    out = tokenizer.apply_chat_template(spelled(tokenizer, messages), tools=decode_tools(tools), tokenize=True, return_dict=True,
                                        return_assistant_tokens_mask=True)
    ids, mask = list(out["input_ids"]), list(out["assistant_masks"])
    end_of_turn = end_of_turn_id(tokenizer)
    closed = False
    for i, token in enumerate(ids):
        if not mask[i]:
            closed = False
        elif closed:
            mask[i] = 0
        elif token == end_of_turn:
            closed = True
    end = max((i for i, m in enumerate(mask) if m), default=-1) + 1
    return ids[:end], mask[:end]


def render_prompt(tokenizer: Any, messages: list[dict], tools: str | list | None = None) -> list[int]:
    """Token ids of a conversation followed by the opening of the assistant's next turn."""
    return list(tokenizer.apply_chat_template(spelled(tokenizer, messages), tools=decode_tools(tools), tokenize=True,
                                              return_dict=False, add_generation_prompt=True))


def followup_ids(tokenizer: Any, messages: list[dict], history: list[dict] = ()) -> list[int]:
    """The tokens that follow an assistant's end-of-turn token when ``messages`` answer the conversation ``history``.

    Everything up to and including the opening of the assistant's next turn, found by
    rendering a stand-in exchange with and without ``messages`` (``history`` only numbers
    the entity slots of a tokenizer that uses them).
    """
    messages = spelled(tokenizer, messages, history)
    exchange = [{"role": "user", "content": "?"}, {"role": "assistant", "content": "."}]
    head = list(tokenizer.apply_chat_template(exchange, tokenize=True, return_dict=False))
    full = list(tokenizer.apply_chat_template(exchange + messages, tokenize=True, return_dict=False,
                                              add_generation_prompt=True))
    end_of_turn = end_of_turn_id(tokenizer)
    cut = max(i for i, token in enumerate(head) if token == end_of_turn) + 1
    if full[:cut] != head[:cut]:
        raise ValueError("the chat template is not prefix-preserving; see prepare_tokenizer")
    return full[cut:]
