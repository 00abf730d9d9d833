"""Judging impossible tasks: the evidence-based rule judge (``rule``), and a chat model's (``llm``, loaded when used)."""

from sttgym.judge.rule import (Impossibility, RuleJudge, claims_success, forbidden_checks, is_refusal,
                               looks_like_a_list, names_fact)

__all__ = ["Impossibility", "RuleJudge", "is_refusal", "claims_success", "looks_like_a_list", "names_fact",
           "forbidden_checks"]
