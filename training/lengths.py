"""Token lengths of what training feeds a model, and the checks that a run's budgets hold them.

A rendered arena episode runs to thousands of tokens, most of its prompt being the tool
listing. When a row is longer than SFT's ``max_length``, TRL's ``SFTTrainer`` keeps its start
and drops the rows left without an assistant token: at a ``max_length`` the prompts alone
fill, it drops every row and fails later with an ``IndexError``. In RL an episode past
``max_episode_tokens`` or a turn past ``max_turn_tokens`` is cut without a word. So the
trainers check first: :func:`check_sft` refuses rows that would be cut, saying how many and
what length fits; :func:`check_rl` refuses prompts that leave no room for a turn and an
episode budget past the model's context, and warns when the expert's own episodes (the
oracle's, with the reasoning text SFT teaches) would not fit the budgets.

``python -m sttgym.training.lengths --tokenizer NAME`` prints the lengths per domain as a
Markdown table (docs/training.md, "Lengths"). ``NAME`` is a checkpoint or hub name, or a
``qwen.tiktoken`` vocabulary file, from which :func:`qwen_tokenizer` builds Qwen3's tokenizer
offline.
"""

from __future__ import annotations

import argparse
import json
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from sttgym.training.config import RLSettings
from sttgym.training.render import prepare_tokenizer, render, render_prompt, spelled

__all__ = ["Lengths", "measure", "expert_row", "check_sft", "check_rl", "qwen_tokenizer", "length_table", "main"]


@dataclass(frozen=True)
class Lengths:
    """One rendered conversation, in tokens."""

    prompt: int  # system turn with the tool listing, the request, and the opening of the first assistant turn
    episode: int  # the whole row, up to the last assistant token (what SFT trains on)
    turn: int  # the longest assistant turn (what one RL turn must generate)
    turns: int  # assistant turns


def measure(tokenizer: Any, messages: list[dict], tools: str | list | None) -> Lengths:
    """The :class:`Lengths` of a conversation rendered as training renders it."""
    _, mask = render(tokenizer, messages, tools)
    spans, run = [], 0
    for bit in [*mask, 0]:
        if bit:
            run += 1
        elif run:
            spans.append(run)
            run = 0
    return Lengths(prompt=mask.index(1) if spans else len(mask), episode=len(mask), turn=max(spans, default=0),
                   turns=len(spans))


def expert_row(env_id: str, seed: int) -> dict:
    """The oracle's episode on an instance as an SFT row, with the reasoning text SFT rows carry."""
    import gymnasium as gym

    from sttgym.agents import OracleAgent
    from sttgym.rollout import rollout
    from sttgym.training.reasoning import narrate
    from sttgym.training.transcripts import from_trajectory

    env = gym.make(env_id)
    trajectory = rollout(env, OracleAgent(), seed=seed)
    env.close()
    return narrate(from_trajectory(trajectory)).record()


def check_sft(dataset: Any, max_length: int | None) -> None:
    """Refuse tokenized SFT rows (``input_ids``, maybe ``assistant_masks``) that ``SFTTrainer`` would cut.

    Raises ``ValueError`` saying how many rows are longer than ``max_length``, how many of them
    TRL would drop (no assistant token before the cut), and the ``max_length`` that keeps every row.
    """
    if max_length is None:
        return
    lengths = [len(ids) for ids in dataset["input_ids"]]
    longer = [i for i, n in enumerate(lengths) if n > max_length]
    if not longer:
        return
    masks = dataset.select(longer)["assistant_masks"] if "assistant_masks" in dataset.column_names else []
    dropped = sum(1 not in mask[:max_length] for mask in masks)
    dropping = (f", and drop the {dropped:,} whose prompt alone fills it (dropping every row ends in an IndexError)"
                if dropped else "")
    raise ValueError(
        f"{len(longer):,} of {len(lengths):,} SFT rows are longer than max_length={max_length:,} tokens "
        f"(median {int(np.median(lengths)):,}, longest {max(lengths):,}): SFTTrainer would cut them there, "
        f"losing their later turns{dropping}. Set max_length to {max(lengths):,} or more "
        f"(--max_length {max(lengths)}), or train on shorter rows (docs/training.md, \"Lengths\")")


def check_rl(tokenizer: Any, dataset: Any, settings: RLSettings, context: int | None) -> None:
    """Check RL instances (rows with ``env_id``, ``seed``, ``prompt``, ``tools``) against a run's budgets.

    Raises ``ValueError`` when ``max_episode_tokens`` is past the model's ``context`` or a prompt
    leaves no room for a turn (its episode would end before it began). Warns when the expert's
    episode on an instance (one per env id) is longer than ``max_episode_tokens``, has a turn
    longer than ``max_turn_tokens`` or more turns than ``max_turns``: the policy's would be cut there.
    """
    episode_budget, turn_budget = settings.max_episode_tokens, settings.max_turn_tokens
    if context and episode_budget > context:
        raise ValueError(f"max_episode_tokens={episode_budget:,} is past the model's context of {context:,} tokens "
                         f"(max_position_embeddings): set max_episode_tokens to {context:,} or less")
    prompts = [len(render_prompt(tokenizer, row["prompt"], row["tools"])) for row in dataset]
    full = sum(n >= episode_budget for n in prompts)
    if full:
        raise ValueError(f"{full:,} of {len(prompts):,} RL prompts are max_episode_tokens={episode_budget:,} tokens "
                         f"or longer (longest {max(prompts):,}): their episodes would end before the first turn; "
                         f"set max_episode_tokens well above {max(prompts):,} (docs/training.md, \"Lengths\")")
    first: dict[str, int] = {}
    for env_id, seed in zip(dataset["env_id"], dataset["seed"]):
        first.setdefault(env_id, int(seed))
    experts = [measure(tokenizer, r["messages"], r["tools"]) for r in (expert_row(*i) for i in first.items())]
    problems = []
    if over := [e.episode for e in experts if e.episode >= episode_budget]:
        problems.append(f"{len(over)} episodes reach max_episode_tokens={episode_budget:,} (longest {max(over):,} "
                        f"tokens)")
    if over := [e.turn for e in experts if e.turn > turn_budget]:
        problems.append(f"{len(over)} have a turn longer than max_turn_tokens={turn_budget:,} (longest {max(over):,} "
                        f"tokens; a cut turn is read as a violation)")
    if over := [e.turns for e in experts if e.turns > settings.max_turns]:
        problems.append(f"{len(over)} take more than max_turns={settings.max_turns} turns (most {max(over)})")
    if problems:
        warnings.warn(f"of the expert's episodes on {len(experts)} RL instances (one per env id), "
                      f"{'; '.join(problems)}: a policy playing like the expert is cut off there before the task "
                      "is done (docs/training.md, \"Lengths\")", stacklevel=2)


def qwen_tokenizer(vocabulary: str) -> Any:
    """Qwen3's tokenizer, built offline from Qwen's ``qwen.tiktoken`` vocabulary file.

    Qwen3 keeps the byte-level BPE of Qwen (151,643 tokens, one digit a token) and adds the chat
    markers; this adds them as Qwen3 does (``<|im_start|>`` and ``<|im_end|>`` special, the tool and
    thinking tags plain but atomic) and gives it Qwen3's chat template, as a Qwen3-*-Base checkpoint has it.
    """
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter
    from trl.chat_template_utils import qwen3_chat_template

    pattern = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"
               r"\s+(?!\S)|\s+")
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=TikTokenConverter(vocab_file=vocabulary,
                                                                           pattern=pattern).converted())
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]})
    tokenizer.add_tokens(["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"])
    tokenizer.eos_token = tokenizer.pad_token = "<|endoftext|>"
    tokenizer.chat_template = qwen3_chat_template
    return tokenizer


def _listing_saving(tokenizer: Any, row: dict) -> int:
    """Tokens :func:`~sttgym.models.template.compact_tools` saves on a row's prompt."""
    opening = spelled(tokenizer, row["messages"][:2])
    full = tokenizer.apply_chat_template(opening, tools=json.loads(row["tools"]), tokenize=True, return_dict=False,
                                         add_generation_prompt=True)
    return len(full) - len(render_prompt(tokenizer, row["messages"][:2], row["tools"]))


def length_table(tokenizer: Any, domains: list[str] | None = None, seeds: int = 1) -> str:
    """Markdown table of the expert's rows per domain: every arena id of the domain on ``seeds`` training seeds."""
    from sttgym.manifests import TRAINING_SEED_START
    from sttgym.registry import DOMAINS, arena_ids, parse_arena_id

    stats = (np.median, lambda v: np.percentile(v, 90), np.max)

    def row(name: str, lengths: list[Lengths], saved: list[int]) -> str:
        prompt, episode = [x.prompt for x in lengths], [x.episode for x in lengths]
        cells = [name, len(lengths), *(int(f(prompt)) for f in stats), *(int(f(episode)) for f in stats),
                 max(x.turn for x in lengths), max(x.turns for x in lengths), round(float(np.mean(saved)))]
        return "| " + " | ".join(f"{c:,}" if isinstance(c, int) else c for c in cells) + " |"

    lines = ["| domain | rows | prompt median | p90 | max | episode median | p90 | max | longest turn | most turns "
             "| saved by compact tools |", "| --- |" + " ---: |" * 10]
    every, every_saved = [], []
    for domain in domains or sorted(DOMAINS):
        rows = [expert_row(env_id, TRAINING_SEED_START + k) for env_id in arena_ids()
                if parse_arena_id(env_id)[0] == domain for k in range(seeds)]
        lengths = [measure(tokenizer, r["messages"], r["tools"]) for r in rows]
        saved = [_listing_saving(tokenizer, r) for r in rows]
        lines.append(row(domain, lengths, saved))
        every += lengths
        every_saved += saved
    lines.append(row("all", every, every_saved))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", default="Qwen/Qwen3-4B-Base",
                        help="a checkpoint or hub name, or a qwen.tiktoken vocabulary file")
    parser.add_argument("--domains", nargs="*", help="default: every registered domain")
    parser.add_argument("--seeds", type=int, default=1, help="training seeds per arena id")
    args = parser.parse_args(argv)
    if args.tokenizer.endswith(".tiktoken"):
        tokenizer = qwen_tokenizer(args.tokenizer)
    else:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    print(length_table(prepare_tokenizer(tokenizer), args.domains, args.seeds))


if __name__ == "__main__":
    main()
