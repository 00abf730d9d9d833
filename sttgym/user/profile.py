"""What a simulated user knows and will say: the profile both simulators answer from."""

from __future__ import annotations

from pydantic import Field

from sttgym.schema import Schema

__all__ = ["Answer", "UserProfile"]


class Answer(Schema):
    """A reply the user gives when the question mentions any of ``keywords``."""

    keywords: list[str]
    text: str


class UserProfile(Schema):
    """Who the user is and what they will say."""

    persona: str
    request: str = ""  # what the user asked for; the env fills it in from the task's query
    known_facts: list[str] = Field(default_factory=list)
    clarifications: list[Answer] = Field(default_factory=list)
    withheld: list[Answer] = Field(default_factory=list)  # revealed only when asked about directly
    insist: str | None = None  # impossible tasks: the answer to any proposed change of plan
    fallback: str = "I'm not sure what you mean. Everything I know is in my request."
