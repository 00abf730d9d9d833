"""``chat_with_user``: the tool through which an agent talks to the simulated user."""

from __future__ import annotations

from typing import Any

from sttgym.checklist import EpisodeLog
from sttgym.tools import ok, tool

__all__ = ["UserChannel", "USER_TOOL"]

USER_TOOL = "chat_with_user"


class UserChannel:
    """The ``chat_with_user`` tool: the agent's only way to talk to the user before it ends."""

    def __init__(self, user: Any, log: EpisodeLog):
        self.user, self.log = user, log

    @tool(cost=2)
    def chat_with_user(self, message: str) -> dict:
        """Send a message to the user and read their reply. Use it to ask for missing details or to report a problem.
        Told that the request is done, a user with nothing to add replies ###TASK_COMPLETE###.

        Args:
            message: What to say to the user.
        """
        if not message.strip():
            return {"success": False, "error": "the message is empty"}
        self.log.said.append(message)
        return ok({"reply": self.user.reply(message)})
