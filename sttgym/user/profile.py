"""What a simulated user knows and will say: the profile both simulators answer from."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from sttgym.schema import Schema

__all__ = ["Answer", "UserProfile", "COMPLETION_SIGNAL", "words"]

# What the user answers, and nothing else, once told the request is done (the paper's completion signal).
COMPLETION_SIGNAL = "###TASK_COMPLETE###"


_WORD = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*")


def words(text: str) -> set[str]:
    """The lower-case words of a message, as the user and the ``asked_user`` check read it."""
    return set(_WORD.findall(text.lower()))


class Answer(Schema):
    """A reply the user gives when the question mentions any of ``keywords``."""

    keywords: list[str]
    text: str

    def hits(self, said: set[str]) -> int:
        """How many of the keywords a message's :func:`words` contain."""
        return sum(k.lower() in said for k in self.keywords)


class UserProfile(Schema):
    """Who the user is and what they will say: the STT-Arena paper's profile fields.

    ``persona``, ``context`` and ``tone`` say who is speaking and how; ``task_goal`` what they
    want (by default their request); ``known_facts`` what they know and may say,
    ``clarifications`` their answers to likely questions, ``withheld`` what they reveal only
    when asked about their topic (a withheld fact is a requirement, "the group needs a hearing loop", never the
    id of the option that meets it); ``insist`` states the user's hard constraints, the answer to any proposed
    change of plan, on every task alike (so how the user answers never tells whether the request can be met);
    ``fallback`` is the answer when nothing else fits;
    ``frustration_threshold`` and ``flexibility`` shape an LLM user's manner; ``fidelity_rules``
    and ``helpfulness_rules`` bound what it may say.
    """

    persona: str
    request: str = ""  # what the user asked for; the env fills it in from the task's query
    task_goal: str = ""
    context: str = ""
    tone: str = "Brief and polite."
    known_facts: list[str] = Field(default_factory=list)
    clarifications: list[Answer] = Field(default_factory=list)
    withheld: list[Answer] = Field(default_factory=list)  # revealed only when asked about directly
    insist: str | None = None  # the hard constraints: the answer to any proposed change of plan
    fallback: str = "I'm not sure what you mean. Everything I know is in my request."
    frustration_threshold: Literal["low", "medium", "high"] = "medium"
    flexibility: Literal["low", "medium", "high"] = "medium"
    fidelity_rules: list[str] = Field(default_factory=lambda: [
        "Do not invent ids, times or quantities that your profile does not give.",
        "Do not agree to anything your request rules out."])
    helpfulness_rules: list[str] = Field(default_factory=lambda: [
        "Answer the question asked, with the facts you know.",
        "Do not volunteer what the assistant should find out with its tools."])
