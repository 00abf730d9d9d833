"""The data a task is made of: the base model, and predicates and operations named with JSON arguments.

Loaded with the first task, not by ``import sttgym``: the world engine (``sttgym.world``) refers
to these by name.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Schema", "Pred", "Op"]


class Schema(BaseModel):
    """Base of the data a task is made of. Validators are built when a class is first used, not
    when sttgym is imported (building them all took longer than importing gymnasium)."""

    model_config = ConfigDict(defer_build=True)


class Pred(Schema):
    """A predicate of the world named with its arguments, e.g. ``Pred(name="road_open", args={"road_id": "RD-12"})``."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class Op(Schema):
    """An operation of the world named with its arguments: one step of a trigger's effect."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
