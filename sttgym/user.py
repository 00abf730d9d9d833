"""The simulated user behind ``chat_with_user``.

The default simulator is rule-based and deterministic: it answers from the task's user
profile, matching the agent's question against keyword sets. Withheld facts come out only
when the question names them; on impossible tasks the user refuses any change to the
original requirement.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

__all__ = ["Answer", "UserProfile", "RuleUser"]

_WORD = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*")
_ALTERNATIVE = {"instead", "alternative", "alternatively", "another", "different", "other", "change", "switch",
                "substitute", "later", "earlier", "replace", "swap", "move", "reschedule", "cancel", "drop"}


class Answer(BaseModel):
    """A reply the user gives when the question mentions any of ``keywords``."""

    keywords: list[str]
    text: str


class UserProfile(BaseModel):
    """Who the user is and what they will say."""

    persona: str
    known_facts: list[str] = Field(default_factory=list)
    clarifications: list[Answer] = Field(default_factory=list)
    withheld: list[Answer] = Field(default_factory=list)  # revealed only when asked about directly
    insist: str | None = None  # impossible tasks: the answer to any proposed change of plan
    fallback: str = "I'm not sure what you mean. Everything I know is in my request."


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _best(answers: list[Answer], words: set[str]) -> Answer | None:
    scored = [(sum(k.lower() in words for k in a.keywords), i, a) for i, a in enumerate(answers)]
    scored = [s for s in scored if s[0] > 0]
    return max(scored, key=lambda s: (s[0], -s[1]))[2] if scored else None


class RuleUser:
    """Answers from a :class:`UserProfile`; the same question always gets the same answer."""

    def __init__(self, profile: UserProfile):
        self.profile = profile

    def reply(self, message: str) -> str:
        words = _words(message)
        if self.profile.insist and words & _ALTERNATIVE:
            return self.profile.insist
        answer = _best(self.profile.withheld, words) or _best(self.profile.clarifications, words)
        return answer.text if answer else self.profile.fallback
