"""sttgym play: an episode played one shell command at a time, or at a prompt, recorded as sttgym eval records it."""

import json

import gymnasium as gym
import pytest
from typer.testing import CliRunner

import sttgym
from sttgym.agents import OracleAgent
from sttgym.cli import app
from sttgym.play import ActionError, parse_action, replay

ENV_ID = "STTArena/ColdChain-S1-easy"


def oracle_actions(env_id=ENV_ID, seed=0):
    """The oracle's episode as the actions a player would type (its references resolved)."""
    traj = sttgym.rollout(gym.make(env_id), OracleAgent(), seed=seed)
    return [s["action"] for s in traj.steps], traj


@pytest.fixture
def play(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def run(*args, input=None):
        result = runner.invoke(app, ["play", *args], input=input)
        return result.exit_code, result.output
    return run


def test_a_shell_session_plays_the_episode_the_env_plays_and_records_it_like_eval(play, tmp_path):
    actions, oracle = oracle_actions()
    code, briefing = play("start", ENV_ID, "--seed", "0")
    assert code == 0 and "exactly one tool call" in briefing and oracle.messages[0]["content"] in briefing
    assert "create_new_shipment(goods_id: string" in briefing  # the tools in a readable form
    outputs = [play("step", json.dumps(a))[1] for a in actions]
    assert [o.splitlines()[0] for o in outputs] == [s["observation"] for s in oracle.steps]
    assert "Score: 1.000" in outputs[-1] and "[x]" in outputs[-1]
    from sttgym.evaluation.runner import load_records
    from sttgym.viewer import load_run

    (record,) = load_records(tmp_path / "runs/play/trajectories.jsonl").values()
    assert record["reward"] == 1.0 and record["agent"] == "player" and record["key"] == f"dynamic|{ENV_ID}|0|0"
    assert record["steps"] == json.loads(json.dumps(oracle.steps))
    assert load_run(tmp_path / "runs/play")["episodes"][0]["reward"] == 1.0
    result = CliRunner().invoke(app, ["report", str(tmp_path / "runs/play")])
    assert result.exit_code == 0, result.output
    assert play("step", "Task Completed")[1].startswith("The episode has ended")  # nothing more to play


def test_a_blind_session_never_shows_the_score_and_a_typing_slip_costs_no_turn(play):
    play("start", ENV_ID, "--seed", "1", "--blind", "--player", "tester")
    code, said = play("step", "list_lots product=nothing")
    assert code == 0 and json.loads(said)["success"] is True
    code, said = play("step", "lst_lots product=x")  # not a tool: refused before the env sees it
    assert code == 2 and "not a tool" in said
    code, said = play("step", "{not json")
    assert code == 2 and "not valid JSON" in said
    code, said = play("step", "Task Completed")
    assert code == 0 and "ended" in said and "Score" not in said and "milestone" not in said
    session = json.loads(open("play-session.json").read())
    assert len(session["actions"]) == 2 and session["recorded"]


def test_the_short_form_reads_values_by_the_tool_s_schema():
    tools = replay(ENV_ID, 0, []).tools
    assert parse_action('create_new_shipment goods_id=LOT-1 origin_site_id=HUB-A destination_site_id="CLINIC X" '
                        'quantity=450', tools) == {"name": "create_new_shipment", "arguments": {
                            "goods_id": "LOT-1", "origin_site_id": "HUB-A", "destination_site_id": "CLINIC X",
                            "quantity": 450}}
    assert parse_action("chat_with_user message='I can\u2019t: it is \"closed\"'", tools)["arguments"] == {
        "message": 'I can\u2019t: it is "closed"'}
    assert parse_action('add_or_update_route_plan vehicle_id=007 route_plan=["A","B"]', tools)["arguments"] == {
        "vehicle_id": "007", "route_plan": ["A", "B"]}  # text stays text where the tool wants text
    assert parse_action("  task completed. ", tools) == {"content": "task completed."}
    for bad in ("", "hello there", "list_lots product", "chat_with_user message='unclosed", 'list_lots product=["x"'):
        with pytest.raises(ActionError):
            parse_action(bad, tools)


def test_at_the_prompt_the_same_episode_plays_and_ends(play):
    actions, _ = oracle_actions()
    lines = [":tools", "get_vehicle_status vehicle_id=nope", *(json.dumps(a) for a in actions), ":quit"]
    code, out = play("start", ENV_ID, "--seed", "0", "-i", input="\n".join(lines) + "\n")
    assert code == 0 and "Score: 1.000" in out and '"success": false' in out  # results shown indented


def test_a_review_shows_the_episode_and_what_changed_but_never_the_score(play, tmp_path):
    actions, _ = oracle_actions()
    play("start", ENV_ID, "--seed", "0", "--blind")
    for a in actions:
        play("step", json.dumps(a))
    code, text = play("review", str(tmp_path / "runs/play"))
    assert code == 0 and "Ground truth: a valid completion exists" in text and "What the world did by itself" in text
    assert "goods_inventory." in text and "Score" not in text and "milestone" not in text.lower()
    assert "## The tools the agent had" in text and "create_new_shipment(" in text  # what it could not do, too
    key = f"dynamic|{ENV_ID}|0|0"
    assert f"Episode key (for sttgym play label): {key}" in text  # what label takes
    code, said = play("review", str(tmp_path / "runs/play"), "--episode", "nope")
    assert code == 2 and key in said  # a wrong key is answered with the run's keys


def test_unknown_ids_and_missing_sessions_are_clear_errors(play):
    assert play("start", "STTArena/Nope-T1-easy")[0] == 2
    code, said = play("step", "Task Completed", "--session", "missing.json")
    assert code == 2 and "no session" in said


def test_a_label_adds_a_reviewed_row_and_a_failure_must_name_the_agent_s_mistake(play, tmp_path):
    actions, _ = oracle_actions()
    play("start", ENV_ID, "--seed", "0", "--blind", "--player", "p1")
    for a in actions:
        play("step", json.dumps(a))
    run, key, corpus = str(tmp_path / "runs/play"), f"dynamic|{ENV_ID}|0|0", tmp_path / "corpus.jsonl"

    def label(*extra):
        return play("label", run, "--episode", key, "--reason", "delivered on time", "--corpus", str(corpus), *extra)

    assert label("--verdict", "met", "--reviewer", "p1")[0] == 2  # the player never reviews their own episode
    code, said = label("--verdict", "not_met", "--reviewer", "r1")
    assert code == 2 and "--category" in said  # a failure says why
    assert label("--verdict", "not_met", "--reviewer", "r1", "--category", "bad_luck")[0] == 2
    assert label("--verdict", "met", "--reviewer", "r1", "--category", "stale_state")[0] == 2
    assert not corpus.exists()  # nothing refused was written
    code, said = label("--verdict", "met", "--reviewer", "r1")
    assert code == 0 and "agrees with the review" in said
    code, said = label("--verdict", "not_met", "--reviewer", "r2", "--category", "stale_state")
    assert code == 0 and "DISAGREES" in said
    first, second = (json.loads(line) for line in corpus.read_text().splitlines())
    assert "category" not in first and second["category"] == "stale_state" and second["player"] == "p1"
    from sttgym.play import FAILURES

    code, helped = play("label", "--help")
    assert all(name in " ".join(helped.split()) for name in FAILURES)  # the help names every category there is


def test_corpus_stats_give_each_level_its_wilson_interval_and_the_paper_weighted_overall(play, tmp_path):
    import math

    from sttgym.manifests import load_manifest

    pinned = {(e, s): d for e, s, d in load_manifest("arena-v9")["instances"]}
    plan = {"easy": [True, True, True, False], "medium": [True, False], "hard": [False, False],
            "impossible": [True, True]}
    rows = []
    for level, outcomes in plan.items():
        for seed, won in enumerate(outcomes):
            env_id = f"STTArena/Hotel-S1-{level}"
            verdict = ("met" if won else "not_met") if level != "impossible" else "correct_refusal"
            rows.append({"env_id": env_id, "seed": seed, "digest": pinned[(env_id, seed)], "player": f"p{seed}",
                         "actions": [], "verdict": verdict, "reason": "r", "reviewer": "r",
                         **({} if won else {"category": "too_slow"})})
    rows.append({**rows[0], "seed": 42, "digest": "0" * 16})  # no instance of the manifest
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, text = play("stats", str(corpus), "--manifest", "arena-v9", "--json", str(tmp_path / "s.json"))
    figures = json.loads((tmp_path / "s.json").read_text())
    assert code == 0 and figures["episodes"] == 10 and figures["levels"]["easy"]["passed"] == 3

    def wilson(k, n, z=1.96):  # written out here, apart from the code under test
        p = k / n
        scale = 1 + z * z / n
        mid, half = (p + z * z / (2 * n)) / scale, z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / scale
        return max(0.0, mid - half), min(1.0, mid + half)

    for level, outcomes in plan.items():
        cell = figures["levels"][level]
        assert cell["pass_at_1"] == sum(outcomes) / len(outcomes)
        assert cell["ci"] == pytest.approx(wilson(sum(outcomes), len(outcomes)), abs=1e-9)
    assert figures["overall"]["paper_weights"] == pytest.approx((71 * 0.75 + 67 * 0.5 + 59 * 0 + 30 * 1) / 227)
    assert figures["failures"] == {"too_slow": 4} and figures["domains"]["Hotel"]["episodes"] == 10
    assert "| hard | 2 | 0 | 0.0 |" in text and "41.8" in text  # beside the paper's strongest model
    code, text = play("stats", str(corpus))
    assert code == 0 and "11 reviewed episodes" in text  # without a manifest, every row
    corpus.write_text('{"env_id": "STTArena/Hotel-S1-easy", "seed": 0, "verdict": "met"}\n')  # no digest
    code, said = play("stats", str(corpus), "--manifest", "arena-v10")
    assert code == 2 and "no rows" in said  # no digest, no instance of the manifest, and no crash
    corpus.write_text('{"env_id": "os:system", "seed": 0, "verdict": "met"}\n')
    code, said = play("stats", str(corpus))
    assert code == 2 and "not an STTArena id" in said
