"""LLM agents: a chat model playing by the benchmark's rules, and its memory-augmented variant.

:class:`LLMAgent` follows the tested-model rules of the STT-Arena evaluation: one tool call
per turn, look before changing, ask the user through ``chat_with_user``, finish with exactly
``Task Completed``, never invent results. A turn that breaks the form (no call and no
finish, several calls, an unreadable call) is a *violation*: the agent sends the env an
action it rejects without touching the world, so the turn counts toward the env's turn cap
(50) and shows in the trajectory, and the model reads an error that names the rule it broke.

A backend failure (``ChatResponse.error``: the server is down, a reply cannot be read) ends
the episode: through the env's ``end_episode`` meta-command where it has one, else with an
empty reply (repeated without asking the model again, should an env go on); the error is kept
in :attr:`LLMAgent.error` and in the turn log so a runner can tell it from a model's own failure.
A conversation that outgrows the model's context (``ChatResponse.context_full``) ends the
episode the same way, but it is the model's limit, not a fault: :attr:`LLMAgent.overflowed` is
set instead of :attr:`LLMAgent.error`, and the episode is scored as it stands.

:class:`MemoryAgent` is the ScrambleToolBench memory baseline (its Appendix A): two
databases, task recipes and tool knowledge, are injected into the system prompt at every
step, and the model updates them through a ``memory_update`` object in its JSON answer.

The model is any :class:`~sttgym.models.base.ChatModel`; nothing here imports a backend.
A runner that batches many episodes uses :meth:`LLMAgent.begin` and :meth:`LLMAgent.finish`
around one ``model.chat`` call; :meth:`LLMAgent.act` does both for a single episode.
"""

from __future__ import annotations

import json
import re
from typing import Any

import gymnasium as gym

from sttgym.agents.base import Agent
from sttgym.models.base import ChatModel, ChatResponse
from sttgym.models.parsing import extract_json_object, has_malformed_call
from sttgym.user import USER_TOOL
from sttgym.world import json_copy

__all__ = ["LLMAgent", "MemoryAgent", "FINAL_REPLY", "RULES", "DYNAMICS_HINT", "SCRAMBLE_RULES", "is_final_reply"]

FINAL_REPLY = "Task Completed"
END_TOOL = "end_episode"  # the ScrambleTool meta-command that stops an episode

RULES = """You are an assistant that carries out a user's request by calling the tools of an environment.

Rules:
1. Every turn contains exactly one tool call. Never call two or more tools in one turn.
2. Do not answer in plain text, except for the final reply described in rule 6.
3. Prefer querying the environment's state before you change it.{hint}
4. {user_rule}
5. Never invent tool results, identifiers or hidden state: you know only what tools have returned.
6. When the request is done, or you have established that it cannot be done, reply with exactly: Task Completed"""

SCRAMBLE_RULES = """You are operating a simulated computer terminal through tools, to solve a sequence of tasks.

Rules:
1. Every turn contains exactly one tool call. Never call two or more tools in one turn.
2. Do not answer in plain text: everything happens through tools.
3. Tool names, parameters and outputs may be disguised: find out what each tool does by calling it; an error may tell you which parameters a tool expects.
4. Submit each task's answer with submit_solution. Use skip_task to set a task aside and end_episode to stop for good.
5. Never invent tool results: you know only what tools have returned."""

# The STT-Arena rules name no dynamics: telling the model the world changes would hint at the skill under test.
# The hint is an ablation (sttgym eval --hint), not the default.
DYNAMICS_HINT = " Read it again when a result surprises you: the world can change while you work."

USER_RULE = "When you need a detail from the user, or must tell them something (for instance that their request cannot be met), use the chat_with_user tool."
NO_USER_RULE = "The user cannot be reached during the task: work from the request and the environment alone."

_FINAL = re.compile(r"^[\s*_`\"'.!]*task completed[\s*_`\"'.!]*$", re.IGNORECASE)


def is_final_reply(text: str) -> bool:
    """Whether ``text`` ends the task: its last non-empty line reads ``Task Completed``.

    Markdown emphasis, quotes and a closing full stop around the words are tolerated; any
    explanation for the user may stand on the lines before.
    """
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return bool(lines) and bool(_FINAL.match(lines[-1]))


def violation_action(reason: str) -> dict:
    """The action that stands for a broken turn: every env rejects it without changing the world."""
    return {"violation": reason}


class LLMAgent(Agent):
    """A chat model acting in an sttgym env under the benchmark's turn rules.

    Args:
        model: the :class:`~sttgym.models.base.ChatModel` that writes each turn.
        thinking: ask the model to reason before answering (``enable_thinking`` in Qwen-style
            templates); None leaves the template's default.
        temperature: sampling temperature (the paper evaluates at 0.7).
        max_new_tokens: tokens one turn may generate.
        seed: base of the per-turn sampling seeds, so a run can be repeated.
        rules: the system prompt's rules; ``{user_rule}`` is filled in with how to reach the user.
            ``RULES`` (the default) are the STT-Arena rules, ``SCRAMBLE_RULES`` the terminal's.
        hint: add ``DYNAMICS_HINT`` (that the world can change) to the rules: an ablation, off by
            default, since naming the skill under test would inflate the score.

    After an episode, :attr:`messages` is the conversation exactly as the model saw it (system
    prompt included) and :attr:`turns` logs each turn's reasoning, tokens, violation and error.
    """

    def __init__(self, model: ChatModel, thinking: bool | None = None, temperature: float = 0.7,
                 max_new_tokens: int = 2048, seed: int = 0, rules: str = RULES, hint: bool = False):
        self.model, self.thinking, self.hint = model, thinking, hint
        self.temperature, self.max_new_tokens, self.base_seed, self.rules = temperature, max_new_tokens, seed, rules
        self.messages: list[dict] = []
        self.turns: list[dict] = []

    # ------------------------------------------------------------------ episode

    def reset(self, observation: str, info: dict, env: gym.Env | None = None, seed: int | None = None) -> None:
        self.tools = list(info.get("tools", []))
        self.tool_names = {t.get("function", t).get("name") for t in self.tools}
        self.context = {"world": info.get("world", ""), "clock": info.get("clock", "")}
        self.episode_seed = 0 if seed is None else int(seed)
        self.messages = [{"role": "system", "content": ""}, {"role": "user", "content": observation}]
        self.turns, self.violation, self.error, self.overflowed = [], None, None, False

    def act(self, observation: str, info: dict) -> dict[str, Any]:
        if self.error is not None or self.overflowed:  # an env that went on after a stop gets no more model calls
            return self.stop()
        conversation = self.begin(observation, info)
        return self.finish(self.model.chat([conversation], self.chat_tools, **self.generation())[0])

    def begin(self, observation: str, info: dict) -> list[dict]:
        """Take in the last observation; return the conversation the model answers next."""
        if self.turns:  # the first observation is the user's request, already in place
            self.messages.extend(self._results(observation))
        self.messages[0] = {"role": "system", "content": self.system_prompt()}
        return json_copy(self.messages)  # messages are JSON: several times faster than deepcopy

    def finish(self, response: ChatResponse) -> dict[str, Any]:
        """Record the model's turn and return the env action it amounts to."""
        turn = {"reasoning": response.reasoning, "prompt_tokens": response.prompt_tokens,
                "completion_tokens": response.completion_tokens, "violation": None, "error": response.error}
        self.turns.append(turn)
        if response.context_full:
            self.overflowed = True
            return self.stop()
        if response.error is not None:
            self.error = response.error
            return self.stop()
        action, self.violation = self.decide(response)
        turn["violation"] = self.violation
        self.messages.append(self.assistant_message(response, len(self.turns)))
        return action if self.violation is None else violation_action(self.violation)

    def stop(self) -> dict[str, Any]:
        """The action that ends the episode after a backend error: the env's ``end_episode`` tool, else a reply."""
        return {"name": END_TOOL, "arguments": {}} if END_TOOL in self.tool_names else {"content": ""}

    def generation(self) -> dict[str, Any]:
        """Keyword arguments of this turn's ``model.chat`` call."""
        return {"thinking": self.thinking, "temperature": self.temperature, "max_new_tokens": self.max_new_tokens,
                "seed": (self.base_seed * 1_000_003 + self.episode_seed * 1_009 + len(self.turns)) % 2**31}

    @property
    def usage(self) -> dict[str, int]:
        """Tokens read and written over the episode so far."""
        return {"prompt_tokens": sum(t["prompt_tokens"] for t in self.turns),
                "completion_tokens": sum(t["completion_tokens"] for t in self.turns)}

    # ------------------------------------------------------------ prompt and form

    @property
    def chat_tools(self) -> list[dict] | None:
        """The tool schemas passed natively to the model."""
        return self.tools

    def system_prompt(self) -> str:
        user_rule = USER_RULE if USER_TOOL in self.tool_names else NO_USER_RULE
        lines = [self.rules.format(user_rule=user_rule, hint=DYNAMICS_HINT if self.hint else "")]
        if self.context["world"]:
            lines.append(f"Environment: {self.context['world']}")
        if self.context["clock"]:
            lines.append(f"The task starts at {self.context['clock']}.")
        return "\n\n".join(lines)

    def decide(self, response: ChatResponse) -> tuple[dict | None, str | None]:
        """The action ``response`` stands for, or why it breaks the rules."""
        calls = response.tool_calls
        if len(calls) > 1:
            return None, (f"you made {len(calls)} tool calls in one turn and none was run; "
                          "make exactly one tool call per turn")
        if len(calls) == 1:
            return {"name": calls[0]["name"], "arguments": calls[0]["arguments"]}, None
        if has_malformed_call(response.content):
            return None, ('your tool call could not be read; write it as <tool_call>{"name": "<tool>", '
                          '"arguments": {...}}</tool_call> with valid JSON')
        if is_final_reply(response.content):
            return {"content": response.content}, None
        return None, (f"your turn had no tool call; call exactly one tool, or reply with exactly "
                      f"'{FINAL_REPLY}' when the task is done")

    def assistant_message(self, response: ChatResponse, number: int) -> dict:
        message: dict[str, Any] = {"role": "assistant", "content": response.content}
        if response.reasoning:
            message["reasoning_content"] = response.reasoning
        if response.tool_calls:
            message["tool_calls"] = [
                {"id": c.get("id") or f"call_{number}_{i}", "type": "function",
                 "function": {"name": c["name"], "arguments": json.dumps(c["arguments"], ensure_ascii=False)}}
                for i, c in enumerate(response.tool_calls)]
        return message

    def _results(self, observation: str) -> list[dict]:
        """What the model reads about its last turn: the tool result, or the rule it broke."""
        last = self.messages[-1]
        calls = last.get("tool_calls", []) if last.get("role") == "assistant" else []
        if self.violation is not None:
            error = f"Error: {self.violation}."
            if calls:  # every call id needs an answer, or chat APIs reject the conversation
                return [self.tool_message(c, error) for c in calls]
            return [{"role": "user", "content": error}]
        if calls:
            return [self.tool_message(calls[0], observation)]
        return [{"role": "user", "content": observation}]

    @staticmethod
    def tool_message(call: dict, content: str) -> dict:
        return {"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"], "content": content}


# ----------------------------------------------------------------------------- memory

MEMORY_FORMAT = """Answer every turn with one JSON object and nothing else:
{"action": {"command": "<tool name>", "arguments": {...}}, "memory_update": {...}}
or, to finish, {"action": {"reply": "Task Completed"}, "memory_update": {...}}.

"memory_update" is optional. It is merged into your memory before the action runs: give
"Task_Recipes" (task name -> list of steps) and "Tool_Knowledge" (tool name ->
{"inferred_behavior", "parameters", "confidence"}) entries to add or replace; set an entry
to null to delete it. Keep the memory short and correct: remove what turned out wrong."""

MAX_MEMORY_CHARS = 20_000  # a model that hoards would otherwise crowd out the conversation


def merge(memory: dict, update: dict) -> dict:
    """``memory`` with ``update`` applied: nested dicts merge, None deletes, anything else replaces."""
    out = dict(memory)
    for key, value in update.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


class MemoryAgent(LLMAgent):
    """:class:`LLMAgent` with the ScrambleToolBench persistent memory (paper Appendix A).

    The memory holds ``Task_Recipes`` and ``Tool_Knowledge``; it lasts for the whole episode
    (across the curriculum's tasks and any state reset inside it) and starts empty at
    :meth:`reset`. Each step the system prompt carries the tool list and the memory as JSON;
    the model answers with one JSON object (see ``MEMORY_FORMAT``), not a native tool call.
    An update that would grow the memory past ``MAX_MEMORY_CHARS`` is refused and the model
    is told so with its next observation.
    """

    def reset(self, observation: str, info: dict, env: gym.Env | None = None, seed: int | None = None) -> None:
        super().reset(observation, info, env, seed)
        self.memory: dict = {"Task_Recipes": {}, "Tool_Knowledge": {}}
        self.memory_note = ""

    @property
    def chat_tools(self) -> list[dict] | None:
        return None  # the tools are listed in the prompt; the answer is a JSON object

    def system_prompt(self) -> str:
        tools = "\n".join(json.dumps(t.get("function", t), ensure_ascii=False) for t in self.tools)
        state = json.dumps({"system_state": {"memory": self.memory}}, ensure_ascii=False, indent=1)
        return "\n\n".join([super().system_prompt().replace("exactly one tool call", "exactly one action"),
                            "Tools:\n" + tools, MEMORY_FORMAT, "Your memory:\n" + state])

    def decide(self, response: ChatResponse) -> tuple[dict | None, str | None]:
        if response.tool_calls or has_malformed_call(response.content):
            return super().decide(response)  # a native call is read as such; memory stays as it was
        answer = extract_json_object(response.content)
        if answer is None:
            if is_final_reply(response.content):
                return {"content": response.content}, None
            return None, 'your answer was not a JSON object {"action": ..., "memory_update": ...}'
        self._update_memory(answer.get("memory_update"))
        action = answer.get("action")
        if not isinstance(action, dict):
            return None, 'your JSON answer needs an "action" object'
        if isinstance(action.get("reply"), str):
            if is_final_reply(action["reply"]):
                return {"content": action["reply"]}, None
            return None, f"a reply must read exactly '{FINAL_REPLY}'; talk to the user through a tool"
        name = action.get("command", action.get("name"))
        arguments = action.get("arguments", {})
        if not isinstance(name, str) or not name or not isinstance(arguments, dict):
            return None, 'an action is {"command": "<tool name>", "arguments": {...}} or {"reply": "Task Completed"}'
        return {"name": name, "arguments": arguments}, None

    def _update_memory(self, update: Any) -> None:
        if update is None:
            return
        if not isinstance(update, dict):
            self.memory_note = "memory_update ignored: it must be a JSON object"
            return
        merged = merge(self.memory, update)
        if len(json.dumps(merged, ensure_ascii=False)) > MAX_MEMORY_CHARS:
            self.memory_note = f"memory_update refused: memory would exceed {MAX_MEMORY_CHARS} characters; prune it"
            return
        self.memory = merged

    def _results(self, observation: str) -> list[dict]:
        text = f"Error: {self.violation}." if self.violation is not None else f"Observation: {observation}"
        if self.memory_note:
            text, self.memory_note = f"{text}\n({self.memory_note})", ""
        if self.messages[-1].get("tool_calls"):  # a native call slipped through: answer it natively
            return [self.tool_message(c, text) for c in self.messages[-1]["tool_calls"]]
        return [{"role": "user", "content": text}]
