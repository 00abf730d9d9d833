"""A user simulated by a chat model, from the same profile the rule-based user answers from."""

from __future__ import annotations

from typing import Any

from sttgym.user.profile import COMPLETION_SIGNAL, UserProfile
from sttgym.user.rule import RuleUser

__all__ = ["LLMUser", "USER_PROMPT", "render_profile"]

USER_PROMPT = """You are playing the user of an assistant that works on your request with tools.

Rules:
- Reply as this user, in plain natural language only, briefly.
- Stay consistent with your profile and with everything you have already said.
- Do not invent facts your profile does not give you; if you do not know, say so.
- Reveal a withheld detail only when the assistant asks for it directly.
- If the assistant tells you your request is fully done, reply with exactly {signal} and nothing else.
{insist}
Your profile:
{profile}"""


def render_profile(profile: UserProfile) -> str:
    """The profile as the simulator's system prompt states it."""
    lines = [f"Who you are: {profile.persona}"]
    if profile.request:
        lines.append(f"What you asked the assistant: {profile.request}")
    if profile.task_goal:
        lines.append(f"What you need: {profile.task_goal}")
    if profile.context:
        lines.append(f"Context: {profile.context}")
    lines += [f"How you speak: {profile.tone}", f"Your patience: frustration threshold {profile.frustration_threshold}; "
              f"flexibility about the plan {profile.flexibility}"]
    lines += [f"You know: {fact}" for fact in profile.known_facts]
    lines += [f"If asked about {', '.join(a.keywords)}: {a.text}" for a in profile.clarifications]
    lines += [f"Withheld (only if asked directly about {', '.join(a.keywords)}): {a.text}" for a in profile.withheld]
    lines.append(f"When nothing above answers the question: {profile.fallback}")
    lines += [f"Rule: {rule}" for rule in profile.fidelity_rules + profile.helpfulness_rules]
    return "\n".join(lines)


class LLMUser:
    """A user simulated by a chat model, at temperature 0 as in the STT-Arena evaluation.

    Pass an unbound instance as the env's user factory: ``gym.make(id, user=LLMUser(model))``;
    the env calls it with each episode's profile and gets a fresh simulator with its own
    conversation. A model failure (error or empty answer) falls back to the rule-based
    answer for that message, counted in :attr:`fallbacks`, so an episode never stops on it.
    """

    def __init__(self, model: Any, profile: UserProfile | None = None, temperature: float = 0.0,
                 max_new_tokens: int = 256):
        self.model, self.profile = model, profile
        self.temperature, self.max_new_tokens = temperature, max_new_tokens
        self.history: list[dict] = []
        self.fallbacks = 0

    def __call__(self, profile: UserProfile) -> "LLMUser":
        return LLMUser(self.model, profile, self.temperature, self.max_new_tokens)

    def system_prompt(self) -> str:
        insist = (f"- You accept a change to your request that the assistant proposes only if it keeps these: "
                  f"{self.profile.insist}\n" if self.profile.insist else "")
        return USER_PROMPT.format(insist=insist, profile=render_profile(self.profile), signal=COMPLETION_SIGNAL)

    def reply(self, message: str) -> str:
        if self.profile is None:
            raise RuntimeError("LLMUser has no profile: pass it to the env as a factory, user=LLMUser(model)")
        conversation = [{"role": "system", "content": self.system_prompt()}, *self.history,
                        {"role": "user", "content": message}]
        try:
            response = self.model.chat([conversation], None, temperature=self.temperature,
                                       max_new_tokens=self.max_new_tokens, thinking=False)[0]
            text = "" if response.error else response.content.strip()
        except Exception:  # a misbehaving backend must not end the episode
            text = ""
        if not text:
            self.fallbacks += 1
            text = RuleUser(self.profile).reply(message)
        self.history += [{"role": "user", "content": message}, {"role": "assistant", "content": text}]
        return text
