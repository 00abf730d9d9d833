"""The simulated user: its profile, the ``chat_with_user`` channel, the rule-based simulator
(``rule``) and a chat model's (``llm``, loaded when used)."""

from sttgym.user.channel import USER_TOOL, UserChannel
from sttgym.user.profile import COMPLETION_SIGNAL, Answer, UserProfile, words
from sttgym.user.rule import RuleUser

__all__ = ["Answer", "UserProfile", "RuleUser", "UserChannel", "USER_TOOL", "COMPLETION_SIGNAL", "words"]
