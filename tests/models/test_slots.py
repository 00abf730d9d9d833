"""Entity slots: ids spelled as per-conversation slot tokens, and back."""

from __future__ import annotations

import json
import re

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sttgym  # noqa: F401  (registers the ids)
from sttgym.agents import OracleAgent
from sttgym.models.slots import EntitySlots, slot_tokens, slots_of
from sttgym.rollout import rollout
from sttgym.training.transcripts import from_trajectory

ASK = [{"role": "user", "content": "Ship LOT-OPV-6244 and LOT-OPV-1520 from HUB-EAST in VH-273 to "
                                   "CLINIC-OLD-TOWN; session IMM-7798 at 11:50."}]


def test_identifiers_become_their_kind_and_a_rank_among_identifiers_of_that_kind():
    (message,) = EntitySlots(8).encode(ASK)
    assert message["content"] == ("Ship LOT-<e0> and LOT-<e1> from HUB-<e0> in VH-<e0> to "
                                  "CLINIC-<e0>; session IMM-<e0> at 11:50.")
    assert ASK[0]["content"].startswith("Ship LOT-OPV-6244")  # the input is not changed


def test_words_times_and_numbers_keep_their_spelling():
    text = "Hub East, 200 doses, 2025-08-20T10:38, batch B50987, COVID vaccine, T-shirt, x-ray, FAST"
    assert EntitySlots(8).encode([{"role": "user", "content": text}])[0]["content"] == text


def test_tool_call_arguments_are_spelled_as_text_or_as_objects():
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "go", "arguments": '{"v": "VH-273", "s": "HUB-WEST"}'}},
        {"type": "function", "function": {"name": "go", "arguments": {"v": "VH-999"}}},
        {"type": "function", "function": {"name": "go", "arguments": {"s": "east"}}}]}
    calls = EntitySlots(8).encode(ASK + [call])[1]["tool_calls"]
    assert calls[0]["function"]["arguments"] == '{"v": "VH-<e0>", "s": "HUB-<e1>"}'
    assert json.loads(calls[1]["function"]["arguments"]) == {"v": "VH-<e1>"}
    assert calls[2]["function"]["arguments"] == {"s": "east"}  # nothing to spell: left as it was


def test_decoding_spells_known_slots_back_and_leaves_guesses_as_written():
    slots = EntitySlots(8)
    said = ('{"lot": "LOT-<e1>", "van": "VH-<e0>", "to": "CLINIC-<e0>", "guess": "VH-<e3>", '
            '"wrong kind": "SHP-<e0>", "raw": "VH-12", "no kind": "<e0>"}')
    assert json.loads(slots.decode(said, ASK)) == {"lot": "LOT-OPV-1520", "van": "VH-273", "to": "CLINIC-OLD-TOWN",
                                                   "guess": "VH-<e3>", "wrong kind": "SHP-<e0>", "raw": "VH-12",
                                                   "no kind": "<e0>"}


def test_ranks_past_the_last_slot_keep_their_names():
    many = [{"role": "user", "content": " ".join(f"RD-{n}" for n in range(10, 15))}]
    slots = EntitySlots(3)
    assert slots.encode(many)[0]["content"] == "RD-<e0> RD-<e1> RD-<e2> RD-13 RD-14"
    assert slots.decode("RD-<e2> RD-<e3> RD-13", many) == "RD-12 RD-<e3> RD-13"


def test_with_numbers_standalone_integers_are_slots_and_times_dates_decimals_and_ids_are_not():
    slots = EntitySlots(8, numbers=True)
    ask = [{"role": "user", "content": "Ship 650 doses of LOT-OPV-6244 in VH-273 on 2025-08-20 at 11:50 (2.5 h, "
                                       "batch B50987, -20 C); 650 is the session's need, not 700."}]
    assert slots.encode(ask)[0]["content"] == ("Ship #<e0> doses of LOT-<e0> in VH-<e0> on 2025-08-20 at 11:50 (2.5 h, "
                                               "batch B50987, -20 C); #<e0> is the session's need, not #<e1>.")
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "ship", "arguments": {"lot": "LOT-OPV-6244", "quantity": 650}}}]}
    spelled = slots.encode(ask + [call])[1]["tool_calls"][0]["function"]["arguments"]
    assert spelled == '{"lot": "LOT-<e0>", "quantity": #<e0>}'
    assert json.loads(slots.decode(spelled, ask)) == {"lot": "LOT-OPV-6244", "quantity": 650}
    assert slots.decode('{"quantity": #<e7>}', ask) == '{"quantity": #<e7>}'  # a guess stays, and the call is unreadable
    assert EntitySlots(8).encode(ask)[0]["content"].startswith("Ship 650 doses of LOT-<e0>")  # off unless asked for


def test_a_tokenizer_says_whether_it_reads_slots():
    class Plain:
        init_kwargs: dict = {}

    class Slotted:
        init_kwargs = {"entity_slots": 16}

    class Numbered:
        init_kwargs = {"entity_slots": 16, "number_slots": True}

    assert slots_of(Plain()) is None and slots_of(object()) is None
    assert slots_of(Slotted()).count == 16 and not slots_of(Slotted()).numbers and slots_of(Numbered()).numbers
    assert slot_tokens(3) == ["<e0>", "<e1>", "<e2>"]
    with pytest.raises(ValueError):
        EntitySlots(0)


@pytest.mark.parametrize("numbers", [False, True])
@pytest.mark.parametrize("env_id", ["STTArena/ColdChain-S3-easy", "STTArena/CarRental-T1-easy",
                                    "STTArena/Airline-ST2-medium", "STTArena/Warehouse-S2-hard"])
def test_oracle_transcripts_spell_back_exactly_and_prefixes_keep_their_spelling(env_id, numbers):
    transcript = from_trajectory(rollout(gym.make(env_id), OracleAgent(), seed=1_000_000))
    slots = EntitySlots(64, numbers=numbers)
    spelled = slots.encode(transcript.messages)
    assert spelled != transcript.messages  # every domain's requests name ids
    unspelled = re.findall(r"\b[A-Z][A-Z0-9]*-(?!<e)", json.dumps(spelled[1:]))
    assert not unspelled  # every identifier, numbered or named
    for k, (message, original) in enumerate(zip(spelled, transcript.messages)):
        assert slots.encode(transcript.messages[:k + 1]) == spelled[:k + 1]  # numbering never changes later
        for call, raw in zip(message.get("tool_calls") or [], original.get("tool_calls") or []):
            assert slots.decode(call["function"]["arguments"], transcript.messages[:k]) == raw["function"]["arguments"]


_IDS = st.builds(lambda letters, name: f"{letters}-{name}", st.sampled_from(["VH", "LOT-OPV", "RD", "HUB"]),
                 st.one_of(st.integers(0, 99999).map(str), st.sampled_from(["EAST", "WEST", "OLD-TOWN"])))
_TEXT = st.lists(st.one_of(_IDS, st.integers(0, 999).map(str),
                           st.sampled_from([" ", ", ", "ship", "12:30", "-", "<e1>", "2.5", ".", "\n"])))


@settings(max_examples=200, deadline=None)
@given(st.lists(_TEXT.map("".join), min_size=1, max_size=4), st.integers(1, 6), st.booleans())
def test_any_text_spells_back_to_itself(texts, count, numbers):
    messages = [{"role": "user", "content": text} for text in texts]
    slots = EntitySlots(count, numbers=numbers)
    for k, message in enumerate(slots.encode(messages)):
        assert slots.decode(message["content"], messages[:k + 1]) == messages[k]["content"]
