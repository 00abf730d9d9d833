"""A tiny, offline chat model for tests and CPU demonstrations.

:func:`build_tiny_model` trains a small byte-level BPE on text made from the suite itself
(every registered environment's tool schemas, queries and oracle transcripts; a token may
span spaces but never crosses an identifier or a line break, and digits go in runs of at
most three), wraps it as a ``transformers`` fast tokenizer with a Qwen-style chat template,
and saves it next to a randomly initialised ``Qwen3ForCausalLM``. The directory loads with
``AutoTokenizer`` and ``AutoModelForCausalLM`` like any checkpoint; nothing is downloaded.

The chat template is the one contract training relies on:

- ``<|im_start|>role\\n ... <|im_end|>`` turns; the tools are listed in the system turn, one
  signature ``name(arg, optional?)`` a line;
- an assistant tool call renders as ``<tool_call>{"name": ..., "arguments": ...}</tool_call>``
  and a tool result as a user turn holding ``<tool_response>...</tool_response>``;
- it is *prefix-preserving*: rendering a conversation and then the same conversation with
  more messages gives a token sequence that starts with the first one;
- ``{% generation %}`` marks exactly the tokens an assistant produces (its content, its tool
  call and its closing ``<|im_end|>``), so ``return_assistant_tokens_mask=True`` yields the
  loss mask, and a policy that stops at ``<|im_end|>`` generates exactly the masked span.

torch, transformers and tokenizers are imported inside the functions: importing this
module costs nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterable, Iterator

from sttgym.models.slots import EntitySlots, slot_tokens

__all__ = ["CHAT_TEMPLATE", "SPECIAL_TOKENS", "MARKUP_TOKENS", "build_tiny_model", "copy_probe", "holds_digit",
           "pretrain_copying", "suite_corpus", "train_steps"]

PAD, BOS, EOS = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
SPECIAL_TOKENS = [PAD, BOS, EOS]
# Atomic but not "special": decoding with skip_special_tokens keeps them, so calls stay parseable.
MARKUP_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]

TOOL_INSTRUCTIONS = ('Call exactly one tool per turn, as <tool_call>{"name": <tool name>, "arguments": '
                     '<JSON object>}</tool_call>, or reply to the user in plain text to finish.')

# The newline after an assistant's <|im_end|> sits outside the generation markers: a policy
# stops at <|im_end|>, so the newline belongs to whatever the environment appends next.
CHAT_TEMPLATE = (
    "{%- if messages and messages[0].role == 'system' -%}"
    "{%- set system = messages[0].content -%}{%- set turns = messages[1:] -%}"
    "{%- else -%}{%- set system = '' -%}{%- set turns = messages -%}{%- endif -%}"
    "{%- if system or tools -%}"
    "{{- '<|im_start|>system\\n' + system -}}"
    "{%- if tools -%}"
    "{%- if system -%}{{- '\\n\\n' -}}{%- endif -%}"
    "{{- '# Tools\\n<tools>' -}}"
    "{%- for tool in tools -%}"
    "{%- set f = tool.function if tool.function is defined else tool -%}"
    "{%- set required = f.parameters.required or [] -%}"
    "{{- '\\n' + f.name + '(' -}}"
    "{%- for arg in f.parameters.properties -%}"
    "{{- (', ' if not loop.first else '') + arg + ('' if arg in required else '?') -}}"
    "{%- endfor -%}"
    "{{- ')' -}}"
    "{%- endfor -%}"
    "{{- '\\n</tools>\\n" + TOOL_INSTRUCTIONS.replace("'", "\\'") + "' -}}"
    "{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- for message in turns -%}"
    "{%- set content = message.content if message.content is string else '' -%}"
    "{%- if message.role == 'assistant' -%}"
    "{{- '<|im_start|>assistant\\n' -}}"
    "{%- generation -%}"
    "{{- content -}}"
    "{%- for call in message.tool_calls or [] -%}"
    "{%- set call = call.function if call.function is defined else call -%}"
    "{{- '<tool_call>{\"name\": \"' + call.name + '\", \"arguments\": ' -}}"
    "{{- call.arguments if call.arguments is string else (call.arguments | tojson) -}}"
    "{{- '}</tool_call>' -}}"
    "{%- endfor -%}"
    "{{- '<|im_end|>' -}}"
    "{%- endgeneration -%}"
    "{{- '\\n' -}}"
    "{%- elif message.role == 'tool' -%}"
    "{{- '<|im_start|>user\\n<tool_response>' + content + '</tool_response><|im_end|>\\n' -}}"
    "{%- else -%}"
    "{{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)

_BUILD_FILE = "sttgym_build.json"


def suite_corpus(seeds_per_env: int = 2) -> Iterator[str]:
    """Text the suite's agents read and write: schemas, queries and oracle transcripts.

    Uses every registered arena environment on training seeds, in registry order, so the
    corpus (and a tokenizer trained on it) is the same on every run with the same domains.
    """
    import gymnasium as gym

    from sttgym.agents import OracleAgent
    from sttgym.manifests import TRAINING_SEED_START
    from sttgym.registry import arena_ids
    from sttgym.rollout import rollout

    yield TOOL_INSTRUCTIONS
    yield "Task Completed"
    for env_id in arena_ids():
        env = gym.make(env_id)
        for k in range(seeds_per_env):
            traj = rollout(env, OracleAgent(), seed=TRAINING_SEED_START + k)
            if k == 0:
                yield env.unwrapped.world.description
                yield from (json.dumps(schema) for schema in env.unwrapped.tool_schemas)
            for message in traj.messages:
                yield message.get("content") or ""
                for call in message.get("tool_calls", []):
                    yield f'{{"name": "{call["function"]["name"]}", "arguments": {call["function"]["arguments"]}}}'
        env.close()


# Identifiers (``DEP-MS-70``) and newlines are cut out before BPE, so an id tokenizes the same
# wherever it appears and a turn boundary never falls inside a token; everything else may merge
# across spaces, which folds JSON boilerplate into a few tokens. Digits go in runs of at most
# three, each run one token (all 1,110 of them are in the vocabulary, as in Llama 3): an unseen
# id then splits into tokens the model has met, and a run is rarely repeated elsewhere in the
# context, so copying an id takes a few look-ups that are rarely ambiguous.
_IDENTIFIER = r"[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+"
_DIGITS_OR_NEWLINE = r"\d{1,3}|\n"
_DIGIT_RUNS = [str(n).zfill(width) for width in (1, 2, 3) for n in range(10 ** width)]


def _train_tokenizer(texts: Iterable[str], vocab_size: int, max_token_length: int):
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(_IDENTIFIER), "isolated"),
        pre_tokenizers.Split(Regex(_DIGITS_OR_NEWLINE), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  max_token_length=max_token_length)
    tokenizer.train_from_iterator(texts, trainer=trainer)
    tokenizer.add_tokens(_DIGIT_RUNS + MARKUP_TOKENS)
    return tokenizer


def build_tiny_model(path: str | os.PathLike, *, vocab_size: int = 4096, max_token_length: int = 24,
                     hidden_size: int = 64, num_layers: int = 2, num_heads: int = 4, num_kv_heads: int = 2,
                     intermediate_size: int = 192, max_positions: int = 8192, seeds_per_env: int = 2,
                     copy_steps: int = 0, entity_slots: int = 0, number_slots: bool = False, seed: int = 0) -> Path:
    """Build (or reuse) a tiny Qwen3 chat model and its tokenizer in the directory ``path``.

    The directory is reused when it already holds a model built from the same arguments
    and the same corpus (the registered domains may have changed since); otherwise it is
    rebuilt, written to a temporary sibling first so a concurrent reader never sees half a
    model. The BPE learns at most ``vocab_size`` tokens of at most ``max_token_length``
    characters from :func:`suite_corpus` (``seeds_per_env`` oracle episodes per id). The
    weights are drawn from a generator seeded with ``seed``, then trained for ``copy_steps``
    steps of :func:`pretrain_copying`; the global torch RNG is left as it was. With
    ``entity_slots=N`` the tokenizer reads ids as slots ``<e0>`` to ``<e{N-1}>``
    (:mod:`sttgym.models.slots`): everything that renders through
    :mod:`sttgym.training.render` or runs the local transformers backend spells them so;
    ``number_slots=True`` makes standalone integers slots too (``#<e0>``). Returns ``path``.
    """
    import torch
    from transformers import GenerationConfig, PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    if number_slots and not entity_slots:
        raise ValueError("number_slots needs entity_slots: the slot tokens numbers are spelled with")
    path = Path(path)
    texts = list(suite_corpus(seeds_per_env))
    args = {"vocab_size": vocab_size, "max_token_length": max_token_length, "hidden_size": hidden_size,
            "num_layers": num_layers, "num_heads": num_heads, "num_kv_heads": num_kv_heads,
            "intermediate_size": intermediate_size, "max_positions": max_positions, "copy_steps": copy_steps,
            "entity_slots": entity_slots, **({"number_slots": True} if number_slots else {}), "seed": seed,
            "template": CHAT_TEMPLATE, "corpus": hashlib.sha256("\x00".join(texts).encode()).hexdigest()}
    stamp = path / _BUILD_FILE
    if stamp.exists() and json.loads(stamp.read_text()) == args:
        return path

    if entity_slots:  # the merges go to what the model will read: slots, not the names they stand for
        slots = EntitySlots(entity_slots, numbers=number_slots)
        texts = [slots.encode([{"role": "user", "content": text}])[0]["content"] for text in texts]
    bpe = _train_tokenizer(texts, vocab_size, max_token_length)
    bpe.add_tokens(slot_tokens(entity_slots))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token=EOS, pad_token=PAD, bos_token=None,
                                        unk_token=None)
    if entity_slots:
        tokenizer.init_kwargs["entity_slots"] = entity_slots  # saved with the tokenizer: the checkpoint says how it reads
        if number_slots:
            tokenizer.init_kwargs["number_slots"] = True
    tokenizer.chat_template = CHAT_TEMPLATE
    config = Qwen3Config(vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=intermediate_size,
                         num_hidden_layers=num_layers, num_attention_heads=num_heads, num_key_value_heads=num_kv_heads,
                         head_dim=hidden_size // num_heads, max_position_embeddings=max_positions,
                         tie_word_embeddings=True, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, bos_token_id=None)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen3ForCausalLM(config)
    if copy_steps:
        pretrain_copying(model, tokenizer, copy_steps, seed=seed)
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id,
                                               pad_token_id=tokenizer.pad_token_id, do_sample=False)

    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}-", dir=path.parent))
    tokenizer.save_pretrained(staging)
    model.save_pretrained(staging)
    (staging / _BUILD_FILE).write_text(json.dumps(args))
    if path.exists():
        shutil.rmtree(path)
    staging.rename(path)
    return path


def holds_digit(tokenizer) -> list[bool]:
    """For each token id of ``tokenizer``, whether its text holds a digit (a piece of an id, an entity slot, a time,
    a number: what an agent copies)."""
    return [any(c.isdigit() for c in token) for token in tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))]


def _random_tokens(tokenizer, generator):
    """A sampler of random token ids, half of them digit runs (the tokens ids and times are made of)."""
    import torch

    specials = set(tokenizer.all_special_ids)
    kinds = [(i, digit) for i, digit in enumerate(holds_digit(tokenizer)) if i not in specials]
    digits = torch.tensor([i for i, digit in kinds if digit])
    others = torch.tensor([i for i, digit in kinds if not digit])

    def draw(*shape: int):
        digit = digits[torch.randint(len(digits), shape, generator=generator)]
        other = others[torch.randint(len(others), shape, generator=generator)]
        return torch.where(torch.rand(shape, generator=generator) < 0.5, digit, other)

    return draw


def pretrain_copying(model, tokenizer, steps: int, *, batch_size: int = 32, length: int = 96,
                     learning_rate: float = 3e-3, seed: int = 0) -> list[float]:
    """Train ``model`` in place to repeat random token strings; returns the loss of each step.

    Each row is ``length`` random tokens shown twice, half of them digit runs, with the loss on
    the second showing only. The model learns to copy *at that distance*: it reads the token
    ``length`` places back, a positional shortcut, not the content look-up (find the earlier
    occurrence of the current token, read on) that copying an id from a transcript takes;
    :func:`copy_probe` tells the two apart, and docs/training.md has the measurements. What it
    does train is the path that turns an attended token into the same output token, for every
    token of the vocabulary. Draws from a torch generator seeded with ``seed``.
    """
    import torch

    draw = _random_tokens(tokenizer, torch.Generator().manual_seed(seed))

    def loss_of(step: int):
        first = draw(batch_size, length)
        rows = torch.cat([first, first], dim=1)
        logits = model(rows).logits[:, length:-1]
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), rows[:, length + 1:].reshape(-1))

    losses = train_steps(model, steps, loss_of, learning_rate=learning_rate)
    model.eval()
    return losses


def train_steps(model, steps: int, loss_of, *, learning_rate: float = 3e-3, report=None) -> list[float]:
    """Train ``model`` for ``steps`` steps on ``loss_of(step)``; returns the loss of each step.

    AdamW without weight decay, betas 0.9/0.98 (a synthetic task's loss sits at chance until a
    circuit forms, then drops within a few dozen steps), a linear warmup over a tenth of the
    steps, gradients clipped at norm 1. ``report(step, loss)``, if given, runs after each step.
    """
    import torch

    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, betas=(0.9, 0.98), weight_decay=0.0)
    warmup = max(1, steps // 10)
    losses = []
    model.train()
    for step in range(steps):
        loss = loss_of(step)
        for group in optimizer.param_groups:
            group["lr"] = learning_rate * min(1.0, (step + 1) / warmup)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        if report is not None:
            report(step, losses[-1])
    return losses


def copy_probe(model, tokenizer, *, rows: int = 64, length: int = 96, seed: int = 1) -> dict[str, float]:
    """How well ``model`` repeats random strings, as the share of repeated tokens it predicts right.

    ``fixed``: ``length`` random tokens shown twice, as :func:`pretrain_copying` trains.
    ``variable``: rows of ``2 * length`` random tokens in which a string of 8 to ``length - 1``
    tokens, starting at a random place, is shown again right after itself; the distance to
    the first showing changes from row to row, so only a content look-up predicts the repeat.
    The first token of each repeat is unpredictable and not scored.
    """
    import torch

    generator = torch.Generator().manual_seed(seed)
    draw = _random_tokens(tokenizer, generator)
    first = draw(rows, length)
    fixed = torch.cat([first, first], dim=1)
    fixed_mask = torch.zeros_like(fixed, dtype=torch.bool)
    fixed_mask[:, length + 1:] = True
    variable = draw(rows, 2 * length)
    variable_mask = torch.zeros_like(variable, dtype=torch.bool)
    for row in range(rows):
        span = int(torch.randint(8, length, (1,), generator=generator))
        start = int(torch.randint(0, 2 * length - 2 * span + 1, (1,), generator=generator))
        variable[row, start + span:start + 2 * span] = variable[row, start:start + span]
        variable_mask[row, start + span + 1:start + 2 * span] = True

    def share_right(tokens, mask) -> float:
        with torch.no_grad():
            predicted = model(tokens).logits[:, :-1].argmax(-1)
        return round(float((predicted == tokens[:, 1:])[mask[:, 1:]].float().mean()), 4)

    return {"fixed": share_right(fixed, fixed_mask), "variable": share_right(variable, variable_mask)}
