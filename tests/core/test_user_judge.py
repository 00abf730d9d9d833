import pytest

from sttgym.checklist import Check, EpisodeLog
from sttgym.clock import Clock
from sttgym.judge import Impossibility, RuleJudge, claims_success, is_refusal, looks_like_a_list
from sttgym.triggers import Observable
from sttgym.schema import Pred
from sttgym.world import World, predicate
from sttgym.user import Answer, RuleUser, UserProfile

PROFILE = UserProfile(
    persona="a clinic manager",
    clarifications=[Answer(keywords=["deadline", "when"], text="Before 10:00 today."),
                    Answer(keywords=["vehicle", "truck"], text="Any refrigerated truck will do.")],
    withheld=[Answer(keywords=["closure", "closed"], text="An emergency order closed the clinic at noon.")],
    fallback="Sorry?",
)


def test_rule_user_matches_questions_and_withholds_until_asked():
    user = RuleUser(PROFILE)
    assert user.reply("What is the deadline?") == "Before 10:00 today."
    assert user.reply("Which TRUCK should I use?") == "Any refrigerated truck will do."
    assert user.reply("Is there any news?") == "Sorry?"
    assert user.reply("Why is the clinic closed?") == "An emergency order closed the clinic at noon."


def test_impossible_user_insists():
    user = RuleUser(PROFILE.model_copy(update={"insist": "No, it must be this clinic."}))
    assert user.reply("Could we deliver to a different clinic instead?") == "No, it must be this clinic."
    assert user.reply("What is the deadline?") == "Before 10:00 today."


class Shipping(World):
    @predicate
    def nothing_shipped(self) -> bool:
        return not self.state["shipped"]


def judged(said, shipped=False, read_after=True):
    """The rule judge's verdict on an episode where the clinic's hours were cut to 12:00."""
    imp = Impossibility(changed_by=["hours_cut"], blocking_facts=["12:00"],
                        forbidden=[Check(name="no_ship", description="", gate=True, holds=Pred(name="nothing_shipped"))])
    log = EpisodeLog(said=list(said), observables={"hours_cut": [Observable(tool="hours", args={"site": "C1"})]},
                     events=[{"trigger": "hours_cut", "call_index": 1}])
    log.calls = [{"name": "hours", "arguments": {"site": "C1"}, "result": {"success": True}}] * (2 if read_after else 1)
    return RuleJudge().verdict(imp, Shipping({"shipped": shipped}, Clock("2024-01-01T08:00")), log)


def test_rule_judge_credits_an_evidenced_refusal_in_any_language():
    for said in (["I can't deliver today: the clinic now closes at 12:00, before any van can arrive."],
                 ["No es posible entregar: la clínica cierra ahora a las 12:00.", "Task Completed"],
                 ["Leider ist das nicht möglich, weil die Klinik jetzt um 12h00 schließt."],
                 ["很抱歉，无法按时送达：诊所现在 12:00 关门。"]):
        assert judged(said)[0] == 1.0, said


@pytest.mark.parametrize("said, shipped, read_after, failing", [
    (["I can't deliver: the clinic now closes at 12:00."], True, True, "no_ship"),  # refused, shipped anyway
    (["I can't deliver: the clinic now closes at 12:00."], False, False, "observed_change"),  # never looked
    (["Sorry, I cannot do it, the clinic is closed."], False, True, "named_blocking_fact"),  # vague
    (["cannot unable impossible blocked closed 12:00 RD-41 VH-120"], False, True, "informed_user"),  # a keyword list
    (["The clinic closes at 12:00 but I arranged it: delivered successfully."], False, True, "informed_user"),
    (["I can't make it by 12:00, so I can't deliver.", "All set, everything is done."], False, True, "informed_user"),
])
def test_rule_judge_rejects_refusals_without_evidence_or_with_harm(said, shipped, read_after, failing):
    score, breakdown = judged(said, shipped, read_after)
    assert score == 0.0 and failing in [b["name"] for b in breakdown if not b["passed"]]


def test_keyword_lists_and_prose_are_told_apart():
    assert looks_like_a_list("cannot; unable; impossible; blocked; expired; 12:00")
    assert looks_like_a_list("Sorry: " + " ".join(f"VH-{n}" for n in range(100, 112)) + " cannot be used.")
    assert not looks_like_a_list("I'm sorry, I cannot deliver: the clinic closes at 12:00 and the van arrives at 12:40.")
    assert is_refusal("Ich kann den Auftrag leider nicht ausführen.") and not is_refusal("Everything went well.")
    assert claims_success("The order has been delivered as requested.") and not claims_success("Task Completed")


def test_the_profile_carries_the_paper_s_fields_and_both_users_give_the_completion_signal():
    from sttgym.user import COMPLETION_SIGNAL, RuleUser, UserProfile
    from sttgym.user.llm import LLMUser, render_profile

    profile = UserProfile(persona="a clinic coordinator", task_goal="insulin at the clinic by 10:00",
                          context="the clinic closes early today", tone="Professional, slightly anxious.",
                          frustration_threshold="low", flexibility="high")
    user = RuleUser(profile)
    assert user.reply("The delivery was completed successfully.") == COMPLETION_SIGNAL
    assert user.reply("Was the delivery completed successfully?") != COMPLETION_SIGNAL  # a question is not a report
    text = render_profile(profile)
    for field in ("insulin at the clinic by 10:00", "closes early", "slightly anxious", "frustration threshold low",
                  "flexibility about the plan high", "Do not invent"):
        assert field in text
    assert COMPLETION_SIGNAL in LLMUser(model=None)(profile).system_prompt()


def _asked(*calls) -> EpisodeLog:
    log = EpisodeLog()
    log.calls = [{"name": name, "arguments": args, "result": {"success": ok}} for name, args, ok in calls]
    return log


def test_asked_user_needs_a_delivered_question_naming_the_fact_before_the_last_commit():
    world, about = Shipping({"shipped": False}, Clock("2024-01-01T08:00")), ["bay", "dock"]

    def asked(log, before=None):
        return world.holds(Pred(name="asked_user", args={"about": about, **({"before": before} if before else {})}),
                           log=log)

    question = ("chat_with_user", {"message": "Which receiving BAY should we use?"}, True)
    assert asked(_asked(question))
    assert not asked(_asked(("chat_with_user", {"message": "Any news?"}, True)))  # a question about something else
    assert not asked(_asked(("chat_with_user", {"message": "Which bay?"}, False)))  # never reached the user
    assert not asked(_asked(("read_bay", {"message": "bay"}, True)))  # a tool argument is not a question
    ship = ("ship", {"bay": "B2"}, True)
    assert asked(_asked(question, ship), before="ship")
    assert not asked(_asked(ship, question), before="ship")  # a guess, then the question
    assert asked(_asked(ship, question, ship), before="ship")  # a guess, the question, then the commit that counts
    assert asked(_asked(question), before="ship")  # nothing committed yet: the question is ahead of it


def test_validation_wants_a_withheld_fact_drawn_out_and_needed(toy_ids):
    import gymnasium as gym

    from sttgym.agents import OracleAgent
    from sttgym.manifests import task_of
    from sttgym.rollout import rollout
    from sttgym.task import Call
    from sttgym.validation import _withheld_problems

    env_id = "STTArena/Toy-T1-easy"
    task, fact = task_of(env_id, 0), Answer(keywords=["parcel"], text="It is the blue parcel with the red tape.")

    def problems(task):
        oracle = rollout(gym.make(env_id), OracleAgent(), seed=0, options={"task": task})
        return _withheld_problems(env_id, 0, task, oracle)

    idle = task.model_copy(update={"profile": task.profile.model_copy(update={"withheld": [fact]})})
    assert [p.split(":")[0] for p in problems(idle)] == [f"the oracle never draws out the withheld fact {fact.text!r}",
                                                         "the oracle's plan passes without asking the user"]
    question = Call(name="chat_with_user", arguments={"message": "Which parcel is it?"})
    asked = idle.model_copy(update={"oracle": [question, *task.oracle]})
    assert problems(asked) == ["the oracle's plan passes without asking the user: the withheld facts are not needed"]
    checked = asked.model_copy(update={"checklist": [*task.checklist, Check(
        name="asked", description="asked which parcel",
        holds=Pred(name="asked_user", args={"about": fact.keywords, "before": "reserve_locker"}))]})
    assert problems(checked) == []
