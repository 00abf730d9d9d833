"""Judging impossible tasks: the evidence-based rule judge (``rule``), and a chat model's (``llm``, loaded when used)."""

from sttgym.judge.rule import (LANGUAGES, REFUSAL, Impossibility, RuleJudge, claims_success, declines, forbidden_checks,
                               is_refusal, looks_like_a_list, names_fact, observed_facts, reports_done, truthful_check)

__all__ = ["Impossibility", "REFUSAL", "RuleJudge", "LANGUAGES", "is_refusal", "claims_success", "reports_done",
           "declines", "looks_like_a_list", "names_fact", "observed_facts", "forbidden_checks", "truthful_check"]
