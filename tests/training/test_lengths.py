"""Lengths: rows and budgets are checked before TRL sees them, the tiny configs fit, the tool listing is compact."""

from __future__ import annotations

import base64
import json
import warnings

import pytest

from sttgym.training.config import CONFIG_DIR, RLSettings, SFTSettings, load_settings, resolve_model
from sttgym.training.data import build_rl_dataset, sft_records
from sttgym.training.lengths import check_rl, check_sft, expert_row, length_table, measure, qwen_tokenizer
from sttgym.training.render import compact_tools, prepare_tokenizer, render, render_prompt

CPU = {"bf16": False, "use_cpu": True, "report_to": "none"}


def _toy_tools(toy_ids):
    return json.loads(expert_row(toy_ids[0], 1_000_000)["tools"])


def _measured(tokenizer, row):
    return measure(tokenizer, row["messages"], row["tools"])


@pytest.fixture
def byte_qwen(tmp_path):
    """Qwen3's tokenizer and template over a vocabulary of single bytes (Qwen's file has the same form, with
    151,643 ranked tokens): a token a character."""
    vocabulary = tmp_path / "bytes.tiktoken"
    vocabulary.write_text("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256)))
    return prepare_tokenizer(qwen_tokenizer(str(vocabulary)))


def test_the_compact_listing_drops_only_the_keys_every_tool_has_alike(toy_ids):
    tools = _toy_tools(toy_ids)
    compact = compact_tools(tools)
    assert compact_tools(compact) == compact  # the engine compacts a listing it already compacted
    for full, short in zip(tools, compact):
        assert "type" not in short and "type" not in short["function"]["parameters"]
        assert {**short["function"]["parameters"], "type": "object"} == full["function"]["parameters"]
        assert {**short["function"], "parameters": full["function"]["parameters"]} == full["function"]
    assert compact_tools([tools[0]["function"]]) == [compact[0]["function"]]  # a bare schema stays bare


def test_the_compact_listing_shortens_a_json_template_and_leaves_the_tiny_one_alone(tiny, byte_qwen, toy_ids):
    row = expert_row(toy_ids[0], 1_000_000)
    opening, tools = row["messages"][:2], json.loads(row["tools"])

    def full(tokenizer):
        return tokenizer.apply_chat_template(opening, tools=tools, tokenize=True, return_dict=False,
                                             add_generation_prompt=True)

    saved = len(full(byte_qwen)) - len(render_prompt(byte_qwen, opening, row["tools"]))
    assert saved == len(tools) * (len('"type": "function", ') + len('"type": "object", '))
    assert render_prompt(tiny[0], opening, row["tools"]) == full(tiny[0])  # signatures: nothing to drop


def _tokenized(lengths_and_starts):
    from datasets import Dataset

    return Dataset.from_list([{"input_ids": [7] * n, "assistant_masks": [0] * start + [1] * (n - start)}
                              for n, start in lengths_and_starts])


def test_sft_check_counts_the_rows_trl_would_cut_and_drop():
    rows = _tokenized([(10, 2), (30, 12), (50, 25)])
    check_sft(rows, 50)
    check_sft(rows, None)  # no truncation at all
    with pytest.raises(ValueError, match=r"2 of 3 SFT rows are longer than max_length=20 tokens .*longest 50\).*"
                                         r"drop the 1 whose prompt alone fills it.*--max_length 50"):
        check_sft(rows, 20)


def test_sft_refuses_a_max_length_the_rows_do_not_fit_before_trl_sees_them(tiny_path, toy_ids, tmp_path):
    from sttgym.training.sft import train_sft

    settings = SFTSettings(model=str(tiny_path), data={"count": 2, "env_ids": [toy_ids[0]]},
                           trainer={**CPU, "max_steps": 1, "max_length": 64})
    with pytest.raises(ValueError, match="every row ends in an IndexError"):  # the prompts alone fill 64 tokens
        train_sft(settings, tmp_path)
    assert not (tmp_path / "final").exists()


def _rl(**budgets):
    return RLSettings(model="tiny", data={"count": 4}, **budgets)


def test_rl_check_refuses_prompts_that_fill_the_episode_and_budgets_past_the_context(tiny, toy_ids):
    instances = build_rl_dataset(4, [toy_ids[0]])
    with pytest.raises(ValueError, match=r"4 of 4 RL prompts are max_episode_tokens=64 tokens or longer"):
        check_rl(tiny[0], instances, _rl(max_episode_tokens=64), context=8192)
    with pytest.raises(ValueError, match=r"max_episode_tokens=32,768 is past the model's context of 8,192"):
        check_rl(tiny[0], instances, _rl(), context=8192)


def test_rl_check_warns_when_the_experts_episode_would_be_cut(tiny, toy_ids):
    instances = build_rl_dataset(4, list(toy_ids))
    longest = max(_measured(tiny[0], expert_row(i["env_id"], i["seed"])).turn for i in instances.select([0, 1]))
    with pytest.warns(UserWarning, match=rf"on 2 RL instances .*max_turn_tokens=4 \(longest {longest} tokens"
                                         r".*max_turns=1 turns"):
        check_rl(tiny[0], instances, _rl(max_turn_tokens=4, max_turns=1, max_episode_tokens=8192), context=8192)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_rl(tiny[0], instances, _rl(max_episode_tokens=8192), context=8192)


@pytest.fixture(scope="module")
def config_tokenizer(tmp_path_factory):
    """The tokenizer of the tiny configs' model, built as a run builds it."""
    from transformers import AutoTokenizer

    tiny = load_settings(CONFIG_DIR / "tiny-sft.yaml").tiny
    assert load_settings(CONFIG_DIR / "tiny-rl.yaml").tiny == tiny
    path = resolve_model("tiny", tmp_path_factory.mktemp("config-model"), tiny)
    return path, prepare_tokenizer(AutoTokenizer.from_pretrained(path))


def test_the_tiny_sft_config_trains_on_every_real_row_whole(config_tokenizer, tmp_path):
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    from sttgym.training.sft import tokenize

    path, tokenizer = config_tokenizer
    settings = load_settings(CONFIG_DIR / "tiny-sft.yaml")
    data = settings.data
    rows = Dataset.from_list(list(sft_records(data.count, data.ids(), seed=data.seed, start=data.start)))
    dataset = tokenize(rows, tokenizer)
    check_sft(dataset, settings.trainer["max_length"])
    args = SFTConfig(output_dir=str(tmp_path), assistant_only_loss=False,
                     **{k: v for k, v in settings.trainer.items() if k != "max_steps"}, max_steps=1)
    kept = SFTTrainer(model=str(path), args=args, train_dataset=dataset, processing_class=tokenizer).train_dataset
    assert len(kept) == data.count  # none dropped
    assert sorted(map(len, kept["input_ids"])) == sorted(map(len, dataset["input_ids"]))  # none cut


def test_the_tiny_rl_config_fits_the_experts_episodes(config_tokenizer):
    settings = load_settings(CONFIG_DIR / "tiny-rl.yaml")
    data = settings.data
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_rl(config_tokenizer[1], build_rl_dataset(data.count, data.ids(), start=data.start), settings,
                 context=8192)


def test_lengths_split_a_rendered_row_into_prompt_and_turns(tiny, toy_ids):
    row = expert_row(toy_ids[0], 1_000_000)
    ids, mask = render(tiny[0], row["messages"], row["tools"])
    lengths = _measured(tiny[0], row)
    assert lengths.episode == len(ids)
    assert lengths.prompt == len(render_prompt(tiny[0], row["messages"][:2], row["tools"]))
    assert lengths.turns == sum(m["role"] == "assistant" for m in row["messages"])
    assert 0 < lengths.turn <= sum(mask)


def test_the_length_table_has_a_row_per_domain_and_one_for_all(tiny, toy_ids):
    table = length_table(tiny[0], ["Toy"]).splitlines()
    assert table[0].startswith("| domain | rows | prompt median | p90 | max | episode median |")
    rows = [line.split(" | ") for line in table[2:]]
    assert [r[0] for r in rows] == ["| Toy", "| all"] and rows[0][1:] == rows[1][1:]
    assert rows[0][1] == "2"  # its two arena ids, one seed each


def test_qwen_tokenizer_builds_from_a_tiktoken_vocabulary(byte_qwen):
    ids, mask = render(byte_qwen, [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}])
    assert byte_qwen.convert_ids_to_tokens(ids[-1]) == "<|im_end|>" and mask[-1] == 1
    assert "<|im_start|>" in byte_qwen.all_special_tokens
