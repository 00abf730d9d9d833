"""A local chat model through Hugging Face transformers, generating for many conversations in one batch.

The checkpoint (a local path or a hub name already in the cache) is loaded on first use.
Prompts are rendered by the tokenizer's own chat template with the tool schemas, so any
model whose template understands ``tools`` works; output is read as Qwen/Hermes text
(``<think>`` reasoning, ``<tool_call>{...}</tool_call>`` calls; see :mod:`sttgym.models.parsing`).
A checkpoint whose tokenizer reads ids as entity slots (:mod:`sttgym.models.slots`) is shown
them so and its turns are spelled back before they are read.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from sttgym.models.base import ChatResponse
from sttgym.models.parsing import parse_assistant_text
from sttgym.models.slots import slots_of
from sttgym.models.template import compact_tools, stop_token_ids

__all__ = ["TransformersModel"]


def template_messages(conversation: list[dict]) -> list[dict]:
    """``conversation`` as chat templates expect it: tool-call arguments as objects, not JSON strings."""
    out = []
    for message in conversation:
        calls = message.get("tool_calls")
        if calls:
            message = {**message, "tool_calls": [_template_call(c) for c in calls]}
        out.append(message)
    return out


def _template_call(call: dict) -> dict:
    function = call.get("function", call)
    arguments = function.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (json.JSONDecodeError, RecursionError):
            arguments = {"raw": arguments}
    return {"type": "function", "function": {"name": function.get("name", ""), "arguments": arguments}}


class TransformersModel:
    """A :class:`~sttgym.models.base.ChatModel` over a local causal LM.

    Args:
        name_or_path: checkpoint directory or hub name (loaded lazily, never downloaded by the
            suite itself: an offline machine needs it on disk or in the cache).
        model, tokenizer: already loaded objects to use instead (tests, training loops).
        device: ``"cuda"``, ``"cpu"``, ...; by default the first GPU when there is one.
        dtype: passed to ``from_pretrained`` (``"auto"`` keeps the checkpoint's).
        max_new_tokens, temperature, top_p: generation defaults; ``chat`` may override them.
        max_batch: conversations generated together; more are processed in successive batches.

    ``chat`` never raises: a conversation that cannot be rendered, does not fit the context
    or fails in generation comes back as ``ChatResponse(error=...)``.
    """

    batched = True  # one call generates for many conversations: the runner steps episodes in lock-step

    def __init__(self, name_or_path: str = "", *, model: Any = None, tokenizer: Any = None,
                 device: str | None = None, dtype: str = "auto", max_new_tokens: int = 1024,
                 temperature: float = 0.7, top_p: float = 1.0, max_batch: int = 16):
        if not name_or_path and (model is None or tokenizer is None):
            raise ValueError("give a checkpoint path/name, or both a model and a tokenizer")
        self.name = name_or_path or type(model).__name__
        self._model, self._tokenizer = model, tokenizer
        self.device, self.dtype = device, dtype
        self.max_new_tokens, self.temperature, self.top_p = max_new_tokens, temperature, top_p
        self.max_batch = max_batch
        self._ready = False

    def _load(self) -> tuple[Any, Any]:
        if self._ready:
            return self._model, self._tokenizer
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if self._tokenizer is None:
            self._tokenizer = AutoTokenizer.from_pretrained(self.name)
        with_response_parser(self._tokenizer)
        if self._model is None:
            self._model = AutoModelForCausalLM.from_pretrained(self.name, dtype=self.dtype)
            self._model.eval()
        if self.device is None:
            self.device = "cuda" if torch.cuda.is_available() else str(self._model.device)
        self._model.to(self.device)
        if self._tokenizer.pad_token_id is None:
            self._tokenizer.pad_token = self._tokenizer.eos_token
        self._ready = True
        return self._model, self._tokenizer

    def chat(self, conversations: list[list[dict]], tools: list[dict] | None = None,
             **generation: Any) -> list[ChatResponse]:
        """One assistant turn per conversation.

        ``generation`` may set ``thinking`` (passed to the template as ``enable_thinking``),
        ``temperature`` (0: greedy), ``top_p``, ``max_new_tokens`` and ``seed`` (seeds torch
        before each batch, so a run with the same batches samples the same tokens).
        """
        try:
            model, tokenizer = self._load()
        except Exception as exc:  # a missing checkpoint must show in the run, not kill it
            return [ChatResponse(error=f"could not load {self.name}: {type(exc).__name__}: {exc}")
                    for _ in conversations]
        template_kwargs = {}
        if generation.get("thinking") is not None:
            template_kwargs["enable_thinking"] = bool(generation["thinking"])
        slots = slots_of(tokenizer)
        prompts: list[str | None] = []
        responses: list[ChatResponse | None] = []
        for conversation in conversations:
            try:
                prompts.append(tokenizer.apply_chat_template(
                    template_messages(slots.encode(conversation) if slots else conversation), tools=compact_tools(tools) if tools else None,
                    add_generation_prompt=True, tokenize=False, **template_kwargs))
                responses.append(None)
            except Exception as exc:  # templates raise on shapes they do not know
                prompts.append(None)
                responses.append(ChatResponse(error=f"chat template failed: {type(exc).__name__}: {exc}"))
        pending = [i for i, p in enumerate(prompts) if p is not None]
        for start in range(0, len(pending), self.max_batch):
            chunk = pending[start:start + self.max_batch]
            for i, response in zip(chunk, self._generate(model, tokenizer, [prompts[i] for i in chunk], generation)):
                if slots is not None and response.raw:
                    raw = slots.decode(response.raw, conversations[i])
                    content, calls, reasoning = read_response(tokenizer, raw, prompts[i])
                    response = replace(response, content=content, tool_calls=calls, reasoning=reasoning, raw=raw)
                responses[i] = response
        return responses

    def _generate(self, model: Any, tokenizer: Any, prompts: list[str], generation: dict) -> list[ChatResponse]:
        import torch

        max_new = int(generation.get("max_new_tokens", self.max_new_tokens))
        temperature = float(generation.get("temperature", self.temperature))
        encoded = tokenizer(prompts, return_tensors="pt", padding=True, padding_side="left",
                            add_special_tokens=False)
        lengths = encoded["attention_mask"].sum(dim=1).tolist()
        limit = getattr(model.config, "max_position_embeddings", None)
        if limit is not None and encoded["input_ids"].shape[1] + max_new > limit:
            fits = [n + max_new <= limit for n in lengths]
            if not all(fits):  # generate for the ones that fit, report the others
                keep = [p for p, f in zip(prompts, fits) if f]
                done = iter(self._generate(model, tokenizer, keep, generation) if keep else [])
                return [next(done) if f else ChatResponse(
                    error=f"context full: {n} prompt tokens + {max_new} new exceed {limit}",
                    prompt_tokens=n, context_full=True) for n, f in zip(lengths, fits)]
        sample = temperature > 0
        stops = stop_token_ids(tokenizer, model)
        # A base checkpoint's generation config stops only at end-of-sequence, not at the template's end of turn.
        options: dict[str, Any] = {"max_new_tokens": max_new, "do_sample": sample, "eos_token_id": stops,
                                   "pad_token_id": tokenizer.pad_token_id}
        if sample:
            options.update(temperature=temperature, top_p=float(generation.get("top_p", self.top_p)))
        else:  # greedy: silence sampling defaults a checkpoint's generation config may carry
            options.update(temperature=None, top_p=None, top_k=None)
        try:
            if generation.get("seed") is not None:
                torch.manual_seed(int(generation["seed"]))
            with torch.no_grad():
                output = model.generate(**{k: v.to(self.device) for k, v in encoded.items()}, **options)
        except Exception as exc:  # out of memory, a bad config: recorded per conversation
            return [ChatResponse(error=f"generation failed: {type(exc).__name__}: {exc}", prompt_tokens=n)
                    for n in lengths]
        stops = {*stops, tokenizer.pad_token_id}
        width = encoded["input_ids"].shape[1]
        responses = []
        for row, n, prompt in zip(output[:, width:].tolist(), lengths, prompts):
            cut = next((j for j, t in enumerate(row) if t in stops), len(row))
            raw = tokenizer.decode(row[:cut], skip_special_tokens=False)
            content, calls, reasoning = read_response(tokenizer, raw, prompt)
            responses.append(ChatResponse(content=content, tool_calls=calls, reasoning=reasoning, raw=raw,
                                          prompt_tokens=int(n), completion_tokens=min(cut + 1, len(row))))
        return responses


def with_response_parser(tokenizer: Any) -> Any:
    """``tokenizer`` with the response parser of its chat template where TRL knows one (Qwen3, Llama 3.1/3.2,
    GLM-4, GPT-OSS, Gemma 4, ...) and it has none of its own; needs TRL, else unchanged."""
    if getattr(tokenizer, "response_template", None) or getattr(tokenizer, "response_schema", None):
        return tokenizer
    try:
        from trl.chat_template_utils import add_response_schema
    except ImportError:
        return tokenizer
    try:
        return add_response_schema(tokenizer)
    except Exception:  # an unknown template: the Qwen/Hermes reader below still applies
        return tokenizer


def read_response(tokenizer: Any, raw: str, prompt: str) -> tuple[str, list[dict], str]:
    """A generated turn as ``(content, tool calls, reasoning)``: by the template's own response parser
    (transformers' ``parse_response``) when the tokenizer has one and it reads the turn, else as Qwen/Hermes text."""
    if getattr(tokenizer, "response_template", None) or getattr(tokenizer, "response_schema", None):
        try:
            parsed = tokenizer.parse_response(raw, prefix=prompt)
        except Exception:  # a turn the model wrote out of format: the text reader decides what it holds
            parsed = None
        if isinstance(parsed, dict):
            calls = [{"name": c["function"]["name"], "arguments": c["function"].get("arguments") or {}}
                     for c in parsed.get("tool_calls") or [] if isinstance(c, dict) and "function" in c]
            if calls or "tool_call" not in raw:
                reasoning = parsed.get("reasoning_content") or parsed.get("thinking") or ""
                return str(parsed.get("content") or ""), calls, str(reasoning)
    return parse_assistant_text(raw)

