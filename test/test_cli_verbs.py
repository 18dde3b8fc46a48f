"""The ``humanoid`` command on a workstation, every package installed: each verb it had when
the bring-up listed them by name is still there, now registered by the package that does
the work, each naming a module with the functions it says; ``humanoid --help`` lists them
all, the bring-up's first."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
from pathlib import Path

from humanoid_bringup.cli import verbs
from humanoid_core import Section

#: Every verb, by the package that registers it (humanoid.verbs entry points).
REGISTERED = {
    "humanoid_bringup": ["describe", "real"],
    "humanoid_hw": ["emulate"],
    "humanoid_sim": ["sim"],
    "humanoid_tools": ["record", "plot", "compare", "view", "pose", "play-gait", "identify-masses", "generate-srdf"],
    "humanoid_experiments": ["demo", "walk", "push", "getup", "postures", "balance-poses", "gaits", "optimize-gait",
                             "bench", "identify"],
}
#: Every verb: those the bring-up listed by name before the packages registered them, and
#: those added since.
BEFORE = ["describe", "sim", "real", "emulate", "record", "plot", "compare", "view", "pose", "demo", "walk", "push",
          "getup", "postures", "balance-poses", "gaits", "play-gait", "optimize-gait", "bench", "identify",
          "identify-masses", "generate-srdf"]


def test_every_verb_is_found_in_the_package_that_registers_it():
    found = verbs()
    assert sorted(verb.name for verb in found) == sorted(BEFORE)
    assert {verb.name: verb.package for verb in found} == \
        {name: package for package, names in REGISTERED.items() for name in names}
    # bring-up first: what a robot's computer runs
    assert [verb.name for verb in found][:4] == ["describe", "real", "emulate", "sim"]
    assert all(verb.section is Section.BRING_UP for verb in found[:4])
    assert all(verb.section is not Section.BRING_UP for verb in found[4:])


def test_each_verb_names_a_module_with_its_functions():
    """Read, not imported (that would load every package of the stack)."""
    for verb in verbs():
        spec = importlib.util.find_spec(verb.module)
        assert spec is not None and spec.origin, verb
        tree = ast.parse(Path(spec.origin).read_text())
        functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        assert {verb.add, verb.run} <= functions, f"{verb.name}: {verb.module} lacks {verb.add} or {verb.run}"


def test_help_lists_every_verb():
    result = subprocess.run(["humanoid", "--help"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    listed = [line.split()[0] for line in result.stdout.split("COMMAND\n", 1)[1].split("\noptions:")[0].splitlines()
              if line.startswith("    ") and not line.startswith("     ")]
    assert listed == [verb.name for verb in verbs()] and sorted(listed) == sorted(BEFORE)
