"""The tiny offline model: loads with the Auto classes, and its chat template keeps its contract."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")

from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

from sttgym.models.tiny import build_tiny_model  # noqa: E402

CALL = {"type": "function", "function": {"name": "get_locker", "arguments": json.dumps({"locker_id": "L123"})}}
CONVERSATION = [
    {"role": "system", "content": "You operate parcel lockers."},
    {"role": "user", "content": "Please reserve locker L123 for parcel P4411."},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "name": "get_locker", "content": '{"success": true, "data": {"status": "taken"}}'},
    {"role": "assistant", "content": "Task Completed"},
]
TOOLS = [{"type": "function", "function": {"name": "get_locker", "description": "Read a locker.",
                                           "parameters": {"type": "object", "properties": {}}}}]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")
    return AutoTokenizer.from_pretrained(path), AutoModelForCausalLM.from_pretrained(path), path


def test_loads_with_auto_classes_and_is_tiny(tiny):
    tokenizer, model, _ = tiny
    assert model.config.model_type == "qwen3"
    assert model.config.vocab_size == len(tokenizer)
    assert sum(p.numel() for p in model.parameters()) < 1_000_000
    assert tokenizer.eos_token == "<|im_end|>"


def test_rebuild_with_same_arguments_reuses_the_directory(tiny):
    _, _, path = tiny
    before = (path / "model.safetensors").stat().st_mtime_ns
    assert build_tiny_model(path) == path
    assert (path / "model.safetensors").stat().st_mtime_ns == before


def test_template_is_prefix_preserving(tiny):
    tokenizer, _, _ = tiny
    for cut in range(2, len(CONVERSATION)):
        head = tokenizer.apply_chat_template(CONVERSATION[:cut], tools=TOOLS, return_dict=False)
        longer = tokenizer.apply_chat_template(CONVERSATION[:cut + 1], tools=TOOLS, return_dict=False,
                                               add_generation_prompt=True)
        assert longer[:len(head)] == head


def test_assistant_mask_covers_exactly_what_the_assistant_says(tiny):
    tokenizer, _, _ = tiny
    out = tokenizer.apply_chat_template(CONVERSATION, tools=TOOLS, return_dict=True,
                                        return_assistant_tokens_mask=True)
    said = tokenizer.decode([t for t, m in zip(out["input_ids"], out["assistant_masks"]) if m])
    assert said == ('<tool_call>{"name": "get_locker", "arguments": {"locker_id": "L123"}}</tool_call><|im_end|>'
                    "Task Completed<|im_end|>")
    text = tokenizer.apply_chat_template(CONVERSATION, tools=TOOLS, tokenize=False)
    assert "<tool_response>" in text and "\nget_locker()\n" in text.split("<|im_end|>")[0]


def test_tools_are_listed_as_signatures_with_optional_arguments_marked(tiny):
    tokenizer, _, _ = tiny
    tool = {"type": "function", "function": {"name": "book", "description": "Book a slot.", "parameters": {
        "type": "object", "properties": {"slot_id": {"type": "string"}, "note": {"type": "string"}},
        "required": ["slot_id"]}}}
    text = tokenizer.apply_chat_template(CONVERSATION[1:2], tools=[tool], tokenize=False)
    assert "\nbook(slot_id, note?)\n" in text


@pytest.mark.parametrize("number", ["7", "42", "931", "9311", "2025", "1234567", "000120"])
def test_digits_tokenize_in_runs_of_three_each_one_token(tiny, number):
    tokenizer, _, _ = tiny
    for text in (number, f"CUS-{number}", f"at {number}h"):
        pieces = [p for p in tokenizer.tokenize(text) if p.isdigit()]
        assert pieces == [number[i:i + 3] for i in range(0, len(number), 3)]


def test_copy_pretraining_teaches_the_model_to_repeat_what_it_saw(tiny):
    import math

    from sttgym.models.tiny import copy_probe, pretrain_copying

    tokenizer, model, _ = tiny
    model = AutoModelForCausalLM.from_config(model.config)  # fresh weights: the fixture's model stays untouched
    before = copy_probe(model, tokenizer, rows=16, length=24)
    losses = pretrain_copying(model, tokenizer, 300, batch_size=16, length=24)
    # A random token is unpredictable, so anything well under log(vocab) is read off the first showing.
    chance = math.log(len(tokenizer))
    assert losses[0] > 0.9 * chance
    assert sum(losses[-10:]) / 10 < 0.3 * chance
    # The skill carries to strings it never saw (the probe draws its own rows) at the trained distance.
    after = copy_probe(model, tokenizer, rows=16, length=24)
    assert before["fixed"] < 0.1 and after["fixed"] > 0.5


def test_copy_probe_scores_only_the_predictable_part_of_a_repeat(tiny):
    import torch

    from sttgym.models.tiny import copy_probe

    tokenizer, model, _ = tiny

    class Oracle(torch.nn.Module):
        """Predicts each token from the last earlier occurrence of the current one: a perfect content look-up."""

        def forward(self, tokens):
            logits = torch.zeros(*tokens.shape, len(tokenizer))
            for row, seq in enumerate(tokens.tolist()):
                for t in range(1, len(seq)):
                    earlier = [j for j in range(t) if seq[j] == seq[t]]
                    if earlier and earlier[-1] + 1 < len(seq):
                        logits[row, t, seq[earlier[-1] + 1]] = 1.0
            return type("Out", (), {"logits": logits})

    scores = copy_probe(Oracle(), tokenizer, rows=8, length=16)
    # Random tokens rarely repeat by chance, so a content look-up predicts nearly every scored token.
    assert scores["fixed"] > 0.9 and scores["variable"] > 0.9


def test_copy_steps_are_part_of_the_build(tmp_path):
    plain = build_tiny_model(tmp_path / "plain", hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1,
                             intermediate_size=64)
    copied = build_tiny_model(tmp_path / "copied", hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1,
                              intermediate_size=64, copy_steps=2)
    assert json.loads((copied / "sttgym_build.json").read_text())["copy_steps"] == 2
    weights = [AutoModelForCausalLM.from_pretrained(p).model.embed_tokens.weight for p in (plain, copied)]
    assert not weights[0].equal(weights[1])  # same seed, so only the copy steps can tell them apart


def test_a_tokenizer_built_with_number_slots_reads_the_request_s_quantity_as_a_slot(tmp_path):
    from sttgym.models.slots import slots_of
    from sttgym.training.render import spelled

    path = build_tiny_model(tmp_path / "numbers", vocab_size=512, hidden_size=32, num_layers=1, num_heads=2,
                            num_kv_heads=1, intermediate_size=64, entity_slots=8, number_slots=True)
    tokenizer = AutoTokenizer.from_pretrained(path)
    assert slots_of(tokenizer).numbers and json.loads((path / "sttgym_build.json").read_text())["number_slots"]
    (message,) = spelled(tokenizer, [{"role": "user", "content": "Ship 650 doses of LOT-OPV-6244 at 11:50."}])
    assert message["content"] == "Ship #<e0> doses of LOT-<e0> at 11:50."
    assert tokenizer.convert_ids_to_tokens(tokenizer("#<e0>")["input_ids"])[-1] == "<e0>"  # one token for the slot
    with pytest.raises(ValueError, match="number_slots needs entity_slots"):
        build_tiny_model(tmp_path / "none", number_slots=True)
