"""The 20 templates: solvable by their procedure, four functions each, answers from the state."""

from __future__ import annotations

import numpy as np
import pytest

from sttgym.clock import Clock
from sttgym.envs.scramble.machine import Machine
from sttgym.envs.scramble.templates import TEMPLATES, parse_goal
from sttgym.envs.scramble.terminal import FUNCTIONS, Terminal
from sttgym.tools import collect_tools

from tests.scramble.scripted import run_procedure

SEEDS = range(12)


def _machine(seed: int) -> tuple[Machine, dict]:
    """A machine holding one instance of every template (more crowded than any episode)."""
    machine = Machine(np.random.default_rng(seed))
    machine.populate()
    return machine, {name: template.instantiate(machine) for name, template in TEMPLATES.items()}


def _caller(machine: Machine):
    tools = collect_tools(Terminal(machine.state, Clock("2025-03-14T09:00")))
    return lambda name, arguments: tools[name].func(**arguments)


def test_twenty_templates_cover_all_28_functions_with_four_each():
    assert len(TEMPLATES) == 20 and len(FUNCTIONS) == 28
    assert all(len(set(t.requires)) == 4 for t in TEMPLATES.values())
    assert set().union(*(t.requires for t in TEMPLATES.values())) == set(FUNCTIONS)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_template_is_solved_by_exactly_its_four_functions(seed):
    machine, slots = _machine(seed)
    call = _caller(machine)
    for name, template in TEMPLATES.items():
        answer, called = run_procedure(template.text(slots[name]), call)
        assert tuple(called) == template.requires, name
        assert answer == template.truth(machine.state, slots[name]), name


@pytest.mark.parametrize("seed", SEEDS)
def test_regeneration_changes_the_answer_and_keeps_the_task_solvable(seed):
    machine, slots = _machine(seed)
    call = _caller(machine)
    for name, template in TEMPLATES.items():
        before = template.truth(machine.state, slots[name])
        template.regenerate(machine, slots[name])
        answer, _ = run_procedure(template.text(slots[name]), call)
        assert answer == template.truth(machine.state, slots[name]) != before, name


def test_goals_differ_between_seeds_and_parse_back_to_their_template():
    goals = {}
    for seed in (1, 2):
        _, slots = _machine(seed)
        goals[seed] = {name: TEMPLATES[name].text(s) for name, s in slots.items()}
    for name, template in TEMPLATES.items():
        for seed in (1, 2):
            found, given = parse_goal(goals[seed][name])
            assert found is template and given == template.match(goals[seed][name])
        if "{" in template.goal:
            assert goals[1][name] != goals[2][name], name
    assert parse_goal("Find the answer.") is None


def test_same_seed_same_machine():
    assert _machine(5)[0].state == _machine(5)[0].state
    assert _machine(5)[0].state != _machine(6)[0].state
