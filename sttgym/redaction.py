"""Secrets kept out of everything sttgym writes.

The values of the environment variables in :data:`SECRET_VARIABLES` (the API keys sttgym's backends were configured
to read; a backend adds its own with :func:`watch`) are replaced by ``[redacted]``: in a model's reply as it
arrives (a server may echo the request's headers in a successful reply as well as in an error), in error texts,
and in every trajectory line and log row before it is written. Reports and summaries are computed from those.
"""

from __future__ import annotations

import os

__all__ = ["SECRET_VARIABLES", "REDACTED", "watch", "redact"]

SECRET_VARIABLES: set[str] = {"OPENAI_API_KEY"}
REDACTED = "[redacted]"
MIN_SECRET = 8  # shorter values ("EMPTY", "x") are placeholders: replacing them would mangle ordinary text


def watch(variable: str) -> None:
    """Redact the value of environment variable ``variable`` too, from now on."""
    SECRET_VARIABLES.add(variable)


def _secrets() -> list[str]:
    values = {os.environ.get(name) or "" for name in SECRET_VARIABLES}
    return sorted((v for v in values if len(v) >= MIN_SECRET), key=len, reverse=True)  # a key inside another: both


def redact(text: str) -> str:
    """``text`` with every configured secret replaced by ``[redacted]``."""
    for secret in _secrets():
        text = text.replace(secret, REDACTED)
    return text
