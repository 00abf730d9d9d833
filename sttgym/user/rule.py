"""The rule-based user simulator, the default behind ``chat_with_user``.

It is deterministic: it answers from the task's user
profile, matching the agent's question against keyword sets. Withheld facts come out only
when the question names their topic (and then whatever else it says); to any other proposed
change of plan the user answers with its hard constraints (the same kind of answer whether or
not the request can be met); told that the request is done, it answers with the completion
signal.
"""

from __future__ import annotations

import re

from sttgym.user.profile import COMPLETION_SIGNAL, Answer, UserProfile, words

__all__ = ["RuleUser"]

_ALTERNATIVE = {"instead", "alternative", "alternatively", "another", "different", "other", "change", "switch",
                "substitute", "later", "earlier", "replace", "swap", "move", "reschedule", "cancel", "drop"}

# The sign-off a report often ends with ("... recorded on both. Anything else?") asks nothing about the request.
_SIGN_OFF = re.compile(r"\s*(?:is there |do you need |would you like |can i (?:help|do) (?:you )?with )?anything else"
                       r"[^.!?]*\?\s*$", re.IGNORECASE)


def _best(answers: list[Answer], said: set[str]) -> Answer | None:
    scored = [(a.hits(said), i, a) for i, a in enumerate(answers)]
    scored = [s for s in scored if s[0] > 0]
    return max(scored, key=lambda s: (s[0], -s[1]))[2] if scored else None


class RuleUser:
    """Answers from a :class:`UserProfile`; the same question always gets the same answer."""

    def __init__(self, profile: UserProfile):
        self.profile = profile

    def reply(self, message: str) -> str:
        from sttgym.judge import reports_done  # a user's reading of "it is done"

        said = words(message)
        # A report that it is done comes first: one that names the route it took ("booked the other room instead")
        # is still a report, not a proposal to change the plan.
        report = _SIGN_OFF.sub("", message)
        if reports_done(report) and "?" not in report:
            return COMPLETION_SIGNAL
        # A question on a withheld fact's topic gets that fact even when it proposes a change ("may I switch to the
        # other pump house?"): answering it with the hard constraints alone hid the fact from players who asked.
        withheld = _best(self.profile.withheld, said)
        if withheld:
            return withheld.text
        if self.profile.insist and said & _ALTERNATIVE:
            return self.profile.insist
        answer = _best(self.profile.clarifications, said)
        return answer.text if answer else self.profile.fallback
