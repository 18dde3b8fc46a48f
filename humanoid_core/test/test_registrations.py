"""The stack's one reader of what the installed packages register gives what
importlib.metadata gives (the reference reader, whose import this one avoids), for each of
the stack's plug-in points and a standard group."""

from __future__ import annotations

import importlib.metadata

import pytest

from humanoid_core import MOTION_FORMATS, NODES, VERBS, Registration, registered


@pytest.mark.parametrize("group", [VERBS, NODES, MOTION_FORMATS, "console_scripts"])
def test_the_registrations_are_read_as_importlib_metadata_reads_them(group):
    ours = registered(group)
    reference = importlib.metadata.entry_points(group=group)
    assert ours, f"nothing registered under {group}: is the workspace built?"
    assert sorted((e.name, e.value) for e in ours) == sorted((e.name, e.value) for e in reference)
    assert all(e.group == group for e in ours)
    first = sorted(ours, key=lambda e: e.name)[0]
    (same,) = importlib.metadata.entry_points(group=group, name=first.name)
    assert first.module == same.module
    if group != "console_scripts":  # loading a console script's module may have side effects
        assert first.load() is same.load()


def test_a_name_selects_its_entries_only():
    (container_host,) = registered(NODES, "balance_monitor")
    assert container_host.name == "balance_monitor" and container_host.group == NODES
    assert registered(NODES, "no_such_node") == []


def test_a_value_that_is_not_an_entry_point_is_said_with_its_name():
    broken = Registration("broken", "not a module path!", VERBS)
    with pytest.raises(ValueError, match=r"not an entry point value: 'not a module path!' \(humanoid.verbs broken\)"):
        broken.load()
