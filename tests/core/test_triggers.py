import pytest

from sttgym.triggers import Context, Mutation, Trigger, get_path, set_path


def ctx(tool="read", minutes=0, **arguments):
    return Context(now="2024-01-01T00:00", minutes=minutes, tool=tool, arguments=arguments)


def state():
    return {"doors": {"D1": {"open": True, "note": None}}}


def test_paths():
    s = state()
    assert get_path(s, ("doors", "D1", "open")) is True
    assert get_path(s, ("doors", "D9", "open")) is None
    set_path(s, ("doors", "D2", "open"), False)
    assert s["doors"]["D2"] == {"open": False}


def test_always_once_fires_once_on_its_activation_operation():
    t = Trigger("close", "door closes", condition=lambda s, c: c.minutes >= 10,
                mutations=[Mutation(("doors", "D1", "open"), True, False)], observable_via="read", activation=["read"])
    s = state()
    assert t.check(s, ctx(minutes=5), "before") is None  # condition false
    assert t.check(s, ctx(tool="write", minutes=20), "before") is None  # not an activation operation
    assert t.check(s, ctx(minutes=20), "after") is None  # wrong timing
    event = t.check(s, ctx(minutes=20), "before")
    assert event["changes"] == [{"path": "doors.D1.open", "old": True, "new": False}] and event["consistent"]
    s["doors"]["D1"]["open"] = True
    assert t.check(s, ctx(minutes=30), "before") is None
    assert s["doors"]["D1"]["open"] is True


def test_guarded_trigger_refires_until_recovered():
    t = Trigger("jam", "door jams until a note is left", mode="conditional_guarded",
                condition=lambda s, c: True, recovery=lambda s, c: s["doors"]["D1"]["note"] == "fixed",
                mutations=[Mutation(("doors", "D1", "open"), True, False)], observable_via="read")
    s = state()
    assert t.check(s, ctx(), "before")["changes"]
    assert t.check(s, ctx(), "before") is None  # already in effect: nothing to change, no event
    s["doors"]["D1"]["open"] = True  # the agent undoes the effect
    again = t.check(s, ctx(), "before")
    assert again["changes"][0]["old"] is True and s["doors"]["D1"]["open"] is False and t.fired == 2
    s["doors"]["D1"].update(open=True, note="fixed")
    assert t.check(s, ctx(), "before") is None and s["doors"]["D1"]["open"] is True


def test_old_value_mismatch_is_reported():
    t = Trigger("close", "", condition=lambda s, c: True,
                mutations=[Mutation(("doors", "D1", "open"), "ajar", False)], observable_via="read")
    assert t.check(state(), ctx(), "before")["consistent"] is False


def test_condition_reading_missing_fields_does_not_hold():
    t = Trigger("x", "", condition=lambda s, c: s["nothing"]["here"], mutations=[], observable_via="read")
    assert t.check(state(), ctx(), "before") is None


def test_guarded_needs_recovery():
    with pytest.raises(ValueError):
        Trigger("x", "", condition=lambda s, c: True, mutations=[], observable_via="r", mode="conditional_guarded")


def test_mutation_values_are_copied_into_state():
    new = {"items": [1]}
    t = Trigger("x", "", condition=lambda s, c: True, mutations=[Mutation(("doors", "D1", "note"), None, new)],
                observable_via="read")
    s = state()
    t.check(s, ctx(), "before")
    s["doors"]["D1"]["note"]["items"].append(2)
    assert new == {"items": [1]}
