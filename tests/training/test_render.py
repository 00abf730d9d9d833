"""SFT and RL render an episode to the same tokens and the same loss mask."""

from __future__ import annotations

import copy

import pytest

from sttgym.agents import OracleAgent
from sttgym.rollout import rollout
from sttgym.training.engine import RolloutEngine
from sttgym.training.render import followup_ids, render, render_prompt
from sttgym.training.transcripts import from_trajectory

SEEDS = (1_000_000, 1_000_001, 1_000_002)


def _oracle_transcripts(env_ids):
    import gymnasium as gym

    return [from_trajectory(rollout(gym.make(env_id), OracleAgent(), seed=seed))
            for env_id in env_ids for seed in SEEDS]


def _replaying_policy(rendered):
    """A policy that writes, token for token, the assistant turns of the rendered transcripts."""
    def generate(prompts, max_new_tokens):
        out = []
        for prompt in prompts:
            ids, mask = next((i, m) for i, m in rendered if i[:len(prompt)] == prompt)
            end = len(prompt)
            while end < len(ids) and mask[end]:
                end += 1
            out.append(ids[len(prompt):end])
        return out
    return generate


def _qwen3_training_tokenizer(tokenizer):
    from trl.chat_template_utils import qwen3_training_chat_template

    qwen = copy.deepcopy(tokenizer)
    qwen.chat_template = qwen3_training_chat_template
    return qwen


def _qwen3_base_tokenizer(tokenizer):
    """A tokenizer shaped like Qwen3-*-Base's: Qwen3's own chat template, which closes turns with <|im_end|>,
    and <|endoftext|> as end-of-sequence (and pad) token."""
    from trl.chat_template_utils import qwen3_chat_template

    from sttgym.training.render import prepare_tokenizer

    base = copy.deepcopy(tokenizer)
    base.chat_template = qwen3_chat_template
    base.eos_token = base.pad_token = "<|endoftext|>"
    return prepare_tokenizer(base)


TOKENIZERS = {"tiny": lambda t: t, "qwen3-training": _qwen3_training_tokenizer, "qwen3-base": _qwen3_base_tokenizer}


@pytest.mark.parametrize("template", list(TOKENIZERS))
def test_engine_tokens_equal_the_sft_rendering(tiny, toy_ids, template):
    tokenizer = TOKENIZERS[template](tiny[0])
    transcripts = _oracle_transcripts(toy_ids)
    rendered = [render(tokenizer, t.messages, t.tools) for t in transcripts]
    engine = RolloutEngine(tokenizer, _replaying_policy(rendered))
    episodes = engine.run([(t.env_id, t.seed) for t in transcripts])
    for transcript, episode, (ids, mask) in zip(transcripts, episodes, rendered):
        assert episode.prompt_ids + episode.completion_ids == ids
        assert [0] * len(episode.prompt_ids) + episode.policy_mask == mask
        assert episode.reward == transcript.reward == 1.0
        assert episode.actions == transcript.actions
        assert episode.messages == transcript.messages


@pytest.mark.parametrize("template", ["qwen3-training", "qwen3-base"])
def test_assistant_spans_end_at_the_end_of_turn_token(tiny, toy_ids, template):
    tokenizer = TOKENIZERS[template](tiny[0])  # the Qwen3 template also marks the newline after <|im_end|>
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    transcript = _oracle_transcripts(toy_ids[:1])[0]
    ids, mask = render(tokenizer, transcript.messages, transcript.tools)
    spans, current = [], []
    for token, m in zip(ids, mask):
        if m:
            current.append(token)
        elif current:
            spans.append(current)
            current = []
    spans.append(current)
    assert len(spans) == len(transcript.steps)
    assert all(span[-1] == end and end not in span[:-1] for span in spans)
    assert ids[-1] == end


def test_followup_and_prompt_pieces(tiny, toy_ids):
    tokenizer = tiny[0]
    transcript = _oracle_transcripts(toy_ids[:1])[0]
    prompt = render_prompt(tokenizer, transcript.messages[:2], transcript.tools)
    assert tokenizer.decode(prompt).endswith("<|im_start|>assistant\n")
    tool_turn = followup_ids(tokenizer, [transcript.messages[3]])
    assert tokenizer.decode(tool_turn) == ("\n<|im_start|>user\n<tool_response>" + transcript.messages[3]["content"]
                                           + "</tool_response><|im_end|>\n<|im_start|>assistant\n")


def _slotted(tokenizer, count=64):
    """``tokenizer`` reading ids as entity slots, as ``build_tiny_model(..., entity_slots=count)`` makes it."""
    from sttgym.models.slots import slot_tokens

    slotted = copy.deepcopy(tokenizer)
    slotted.add_tokens(slot_tokens(count))
    slotted.init_kwargs["entity_slots"] = count
    return slotted


def test_with_entity_slots_the_policy_reads_and_writes_slots_and_the_world_gets_real_ids(tiny):
    tokenizer = _slotted(tiny[0])
    transcripts = _oracle_transcripts(["STTArena/ColdChain-S2-easy", "STTArena/CarRental-T1-easy"])
    rendered = [render(tokenizer, t.messages, t.tools) for t in transcripts]
    engine = RolloutEngine(tokenizer, _replaying_policy(rendered))
    episodes = engine.run([(t.env_id, t.seed) for t in transcripts])
    slot = tokenizer.convert_tokens_to_ids("<e0>")
    for transcript, episode, (ids, mask) in zip(transcripts, episodes, rendered):
        assert episode.prompt_ids + episode.completion_ids == ids
        assert [0] * len(episode.prompt_ids) + episode.policy_mask == mask
        written = [token for token, own in zip(episode.completion_ids, episode.policy_mask) if own]
        assert slot in written and slot in episode.prompt_ids
        request = transcript.messages[1]["content"]
        assert "<e0>" in tokenizer.decode(episode.prompt_ids) and "<e0>" not in request
        assert episode.actions == transcript.actions  # spelled back: the world saw the real ids
        assert episode.reward == transcript.reward == 1.0
