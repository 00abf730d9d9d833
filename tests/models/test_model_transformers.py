"""The local transformers backend on the tiny offline Qwen3 model: templating, parsing, batching, an evaluation."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")
from tests.evaluation.evaltoy import register

from sttgym.evaluation.runner import EvalConfig, Runner
from sttgym.evaluation.summary import summarise
from sttgym.models import TransformersModel, load_model
from sttgym.models.tiny import build_tiny_model
from sttgym.models.transformers_backend import template_messages

TOOLS = [{"type": "function", "function": {"name": "get_locker", "description": "Read a locker.",
                                           "parameters": {"type": "object", "properties": {
                                               "locker_id": {"type": "string"}}, "required": ["locker_id"]}}}]
ASK = [{"role": "system", "content": "Rules."}, {"role": "user", "content": "Reserve locker L1 for parcel P2."}]
HISTORY = ASK + [{"role": "assistant", "content": "", "tool_calls": [{"id": "call_1_0", "type": "function", "function": {
    "name": "get_locker", "arguments": '{"locker_id": "L1"}'}}]},
    {"role": "tool", "tool_call_id": "call_1_0", "name": "get_locker", "content": '{"success": true}'}]


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory):
    register()
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="module")
def backend(tiny_path):
    return TransformersModel(str(tiny_path), max_new_tokens=12, temperature=0.0, max_batch=2)


def test_loads_lazily_from_a_path_and_counts_tokens(backend):
    assert backend._model is None
    responses = backend.chat([ASK, HISTORY, ASK], TOOLS)
    assert backend._model is not None and len(responses) == 3
    tokenizer = backend._tokenizer
    for conversation, response in zip([ASK, HISTORY, ASK], responses):
        prompt = tokenizer.apply_chat_template(template_messages(conversation), tools=TOOLS,
                                               add_generation_prompt=True, tokenize=False)
        assert response.error is None
        assert response.prompt_tokens == len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
        assert 1 <= response.completion_tokens <= 12
    assert responses[0].raw == responses[2].raw  # greedy: the same conversation gets the same answer


def test_prompt_holds_the_tools_and_the_earlier_call_as_an_object(backend):
    prompt = backend._load()[1].apply_chat_template(template_messages(HISTORY), tools=TOOLS,
                                                    add_generation_prompt=True, tokenize=False)
    assert '"name": "get_locker"' in prompt and '"arguments": {"locker_id": "L1"}' in prompt


def test_the_template_gets_the_compact_tool_listing_training_renders(backend, monkeypatch):
    """A checkpoint is evaluated on the listing it was trained on (training/render.py compacts it too)."""
    from sttgym.models.template import compact_tools

    tokenizer = backend._load()[1]
    given = []
    render = tokenizer.apply_chat_template
    monkeypatch.setattr(tokenizer, "apply_chat_template", lambda *a, tools=None, **k: given.append(tools) or render(
        *a, tools=tools, **k))
    backend.chat([ASK], TOOLS, max_new_tokens=1)
    given = [tools for tools in given if tools is not None]  # the end-of-turn probe renders without tools
    assert given == [compact_tools(TOOLS)] and "type" not in given[0][0]
    assert given[0][0]["function"]["name"] == "get_locker" and "type" not in given[0][0]["function"]["parameters"]


def test_generated_text_is_cut_at_the_end_of_turn_and_parsed(backend, monkeypatch):
    import torch

    model, tokenizer = backend._load()  # loaded here too: under xdist this test may run before the others
    said = '<tool_call>{"name": "get_locker", "arguments": {"locker_id": "L4"}}</tool_call><|im_end|>junk'
    tail = tokenizer(said, add_special_tokens=False)["input_ids"]

    def generate(input_ids, attention_mask, **options):
        return torch.cat([input_ids, torch.tensor([tail] * len(input_ids))], dim=1)

    monkeypatch.setattr(model, "generate", generate)
    (response,) = backend.chat([ASK], TOOLS)
    assert response.tool_calls == [{"name": "get_locker", "arguments": {"locker_id": "L4"}}]
    assert response.content == "" and "junk" not in response.raw
    assert response.completion_tokens == tail.index(tokenizer.convert_tokens_to_ids("<|im_end|>")) + 1


def test_a_prompt_that_cannot_fit_is_an_error_not_a_crash(tiny_path):
    big = TransformersModel(str(tiny_path), max_new_tokens=9000)
    (response,) = big.chat([ASK], TOOLS)
    assert response.error.startswith("context full") and response.context_full
    (missing,) = load_model(str(tiny_path / "does-not-exist")).chat([ASK])
    assert missing.error.startswith("could not load")


def test_sampling_with_a_seed_repeats(tiny_path):
    sampler = TransformersModel(str(tiny_path), max_new_tokens=10, temperature=1.0)
    first = sampler.chat([ASK, ASK], TOOLS, seed=7)
    again = sampler.chat([ASK, ASK], TOOLS, seed=7)
    assert [r.raw for r in first] == [r.raw for r in again]


@pytest.mark.parametrize("agent", ["llm", "memory"])
def test_evaluation_end_to_end_with_the_tiny_model(tiny_path, tmp_path, agent):
    config = EvalConfig(agent=agent, model=str(tiny_path), domains=["EvalToy"], runs=1, limit=3, workers=3,
                        max_new_tokens=16, env_kwargs={"max_turns": 4})
    records = Runner(config, tmp_path / "run").run()
    assert len(records) == 3
    for record in records:
        assert record["error"] is None and 1 <= record["turns"] <= 4
        assert len(record["turn_log"]) == record["turns"]
        assert record["usage"]["prompt_tokens"] > 0 and record["usage"]["completion_tokens"] > 0
        assert record["violations"] == sum(t["violation"] is not None for t in record["turn_log"])
        assert record["messages"][0]["role"] == "system" and record["messages"][1]["role"] == "user"
    summary = summarise(records, "arena", label=config.label)
    assert 0.0 <= summary["overall"] <= 1.0
    json.dumps(summary)


def test_turns_are_read_by_the_templates_own_response_parser(tiny_path):
    """A GLM-4 tool call (arguments as key/value tags, no JSON) is read through transformers' parse_response with
    TRL's schema; a template without a parser falls back to the Qwen/Hermes reader."""
    import copy

    pytest.importorskip("trl")
    from trl.chat_template_utils import glm4moe_chat_template

    from sttgym.models.transformers_backend import read_response, with_response_parser

    from transformers import AutoTokenizer

    base = AutoTokenizer.from_pretrained(tiny_path)
    glm = copy.deepcopy(base)
    glm.chat_template = glm4moe_chat_template
    with_response_parser(glm)
    prompt = glm.apply_chat_template([{"role": "user", "content": "reserve L1"}], tokenize=False,
                                     add_generation_prompt=True)
    raw = "<think>plan</think>\n<tool_call>get_locker\n<arg_key>locker_id</arg_key>\n<arg_value>L1</arg_value>\n</tool_call>"
    assert read_response(glm, raw, prompt) == ("", [{"name": "get_locker", "arguments": {"locker_id": "L1"}}], "plan")
    hermes = '<tool_call>{"name": "get_locker", "arguments": {"locker_id": "L2"}}</tool_call>'
    assert read_response(base, hermes, "")[1] == [{"name": "get_locker", "arguments": {"locker_id": "L2"}}]


def test_a_checkpoint_reading_entity_slots_is_shown_slots_and_its_slots_reach_the_world_as_ids(backend, monkeypatch):
    import copy

    import torch

    from sttgym.models.slots import slot_tokens

    model, plain = backend._load()
    tokenizer = copy.deepcopy(plain)
    tokenizer.add_tokens(slot_tokens(4))
    tokenizer.init_kwargs["entity_slots"] = 4
    slotted = TransformersModel(model=model, tokenizer=tokenizer, max_new_tokens=12, temperature=0.0)
    ask = [{"role": "user", "content": "Reserve locker LK-204 (not LK-311) for parcel PC-77."}]
    said = ('<tool_call>{"name": "get_locker", "arguments": {"locker_id": "LK-<e1>", "parcel": "PC-<e0>", '
            '"guess": "LK-<e3>"}}</tool_call><|im_end|>')
    tail = tokenizer(said, add_special_tokens=False)["input_ids"]
    prompts = []

    def generate(input_ids, attention_mask, **options):
        prompts.extend(tokenizer.batch_decode(input_ids))
        return torch.cat([input_ids, torch.tensor([tail] * len(input_ids))], dim=1)

    monkeypatch.setattr(model, "generate", generate)
    (response,) = slotted.chat([ask], TOOLS)
    assert "LK-<e0> (not LK-<e1>) for parcel PC-<e0>" in prompts[0] and "204" not in prompts[0]
    assert response.tool_calls == [{"name": "get_locker",
                                    "arguments": {"locker_id": "LK-311", "parcel": "PC-77", "guess": "LK-<e3>"}}]
    assert "LK-311" in response.raw
