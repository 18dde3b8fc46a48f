"""The ``humanoid`` command's verbs come from the packages that register them (entry point
group ``humanoid.verbs``): a verb whose package is not installed is not listed, a verb
name registered twice is refused in one line (exit status 2), a registration that cannot
be loaded is said and left out, a verb whose library is missing says so when run, and
listing them imports no verb's module. The bring-up itself names no simulation, tool or
experiment package: a robot's computer installs it without them."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from humanoid_bringup import cli
from humanoid_core import VERBS, Section, UsageError, Verb

PACKAGE = Path(__file__).resolve().parents[1]
WORKSTATION = ("humanoid_sim", "humanoid_tools", "humanoid_experiments")


def entry(name: str, value: str) -> importlib.metadata.EntryPoint:
    return importlib.metadata.EntryPoint(name=name, value=value, group=VERBS)


@pytest.fixture
def registrations(tmp_path, monkeypatch):
    """A folder on sys.path for verbs modules written by the test (``write(module, text)``)."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(module: str, text: str) -> None:
        (tmp_path / f"{module}.py").write_text(textwrap.dedent(text))

    return write


def test_the_bringup_registers_its_own_verbs_as_every_package_does():
    (bringup,) = importlib.metadata.entry_points(group=VERBS, name="humanoid_bringup")
    assert [verb.name for verb in bringup.load()] == ["describe", "real"]
    # only the bring-up installed: its verbs alone, nothing of a package that is not there
    assert [verb.name for verb in cli.verbs([bringup])] == ["describe", "real"]


def test_a_verb_registered_twice_is_refused_naming_both(registrations, monkeypatch, capsys):
    registrations("other_verbs", """
        from humanoid_core import Section, Verb
        VERBS = (Verb("describe", "other_package.describe", "another describe", Section.TOOLS),)
        """)
    twice = [entry("humanoid_bringup", "humanoid_bringup.verbs:VERBS"), entry("other", "other_verbs:VERBS")]
    with pytest.raises(UsageError, match=r"the verb 'describe' is registered twice: by humanoid_bringup.verbs:VERBS "
                                         r"\(humanoid_bringup.describe_command\) and by other_verbs:VERBS "
                                         r"\(other_package.describe\)"):
        cli.verbs(twice)
    # the command says it in one line, exit status 2, whatever it was asked
    monkeypatch.setattr(cli, "_installed_verbs", lambda: cli.verbs(twice))
    for argv in ([], ["--help"], ["real", "--robot", "bioloid", "--emulate"]):
        assert cli.main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1 and "registered twice" in err


def test_verbs_are_listed_bring_up_first_then_by_package(registrations):
    registrations("aaa_verbs", """
        from humanoid_core import Section, Verb
        VERBS = (Verb("zz-model", "aaa.model", "a model verb", Section.MODEL),
                 Verb("aa-tool", "aaa.tool", "a tool", Section.TOOLS),
                 Verb("ab-tool", "aaa.tool2", "another tool", Section.TOOLS))
        """)
    listed = cli.verbs([entry("aaa", "aaa_verbs:VERBS"), entry("humanoid_bringup", "humanoid_bringup.verbs:VERBS")])
    assert [verb.name for verb in listed] == ["describe", "real", "aa-tool", "ab-tool", "zz-model"]


def test_a_registration_that_cannot_be_loaded_is_said_and_left_out(registrations, capsys):
    registrations("odd_verbs", """
        VERBS = ("not a verb",)
        """)
    listed = cli.verbs([entry("humanoid_bringup", "humanoid_bringup.verbs:VERBS"), entry("gone", "gone_verbs:VERBS"),
                        entry("odd", "odd_verbs:VERBS")])
    assert [verb.name for verb in listed] == ["describe", "real"]
    err = capsys.readouterr().err
    assert "gone_verbs:VERBS" in err and "cannot be loaded" in err and "not a Verb" in err


def test_a_verb_whose_library_is_missing_says_so_when_run(registrations, monkeypatch, capsys):
    registrations("needy_verbs", """
        from humanoid_core import Section, Verb
        VERBS = (Verb("needy", "needy_command", "needs a library", Section.TOOLS),)
        """)
    registrations("needy_command", """
        import a_library_nobody_installed
        """)
    monkeypatch.setattr(cli, "_installed_verbs", lambda: cli.verbs([entry("needy", "needy_verbs:VERBS")]))
    assert cli.main(["needy", "a-file"]) == 2
    assert capsys.readouterr().err.strip() == ("humanoid: error: humanoid needy needs a_library_nobody_installed "
                                               "(used by needy_command), which is not installed here")


def test_listing_the_verbs_imports_none_of_their_modules():
    """``humanoid --help`` and a bad argument to one verb load the verbs' light modules, not
    the modules that implement them (a second or more with every package of the stack)."""
    check = textwrap.dedent("""
        import contextlib, io, json, sys
        from humanoid_bringup import main
        from humanoid_bringup.cli import verbs
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            main(["--help"])
        with contextlib.redirect_stderr(io.StringIO()):
            main(["describe", "--robot", "nao"])
        print(json.dumps({"loaded": sorted(sys.modules), "verbs": [[v.name, v.module] for v in verbs()]}))
        """)
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    answer = json.loads(result.stdout)
    implementing = {module for name, module in answer["verbs"] if name != "describe"}
    assert implementing and not implementing & set(answer["loaded"])
    assert "humanoid_bringup.describe_command" in answer["loaded"]  # the verb asked for, alone


def test_a_verb_is_a_light_descriptor():
    verb = Verb("describe", "humanoid_bringup.describe_command", "help", Section.BRING_UP)
    assert (verb.package, verb.add, verb.run) == ("humanoid_bringup", "add_arguments", "run")
    assert list(Section) == sorted(Section) and min(Section) == Section.BRING_UP


def test_the_bringup_names_no_simulation_tool_or_experiment_package():
    """Neither its package.xml nor any of its modules, launch files or setup.py names
    humanoid_sim, humanoid_tools or humanoid_experiments (not even to import one when it
    is there): they build on the bring-up, which does not know them."""
    xml = ET.parse(PACKAGE / "package.xml").getroot()
    declared = {element.text.strip() for element in xml.iter() if element.tag.endswith("depend") and element.text}
    assert not declared & set(WORKSTATION)
    sources = [PACKAGE / "package.xml", PACKAGE / "setup.py", *sorted((PACKAGE / "humanoid_bringup").glob("*.py")),
               *sorted((PACKAGE / "launch").glob("*.py"))]
    assert len(sources) > 10
    mentions = [f"{path.relative_to(PACKAGE)}: {name}" for path in sources for name in WORKSTATION
                if name in path.read_text()]
    assert mentions == []


def test_record_without_a_recorder_installed_says_so(monkeypatch, tmp_path):
    """``--record`` on a computer where no package registers the recorder (a robot's, without
    the workstation tools): one line saying so, before anything starts."""
    from humanoid_bringup import graphs, serving

    monkeypatch.setattr(graphs, "registered", lambda _group, _name=None: [])
    with pytest.raises(graphs.RecorderMissingError):
        graphs.recorder_entry()
    nodes = graphs.real_nodes("bioloid", port="/dev/ttyUSB0")
    assert serving.with_recorder(nodes, None) == nodes  # not asked: nothing needed
    with pytest.raises(UsageError, match=r"--record needs a recorder, and no installed package registers the "
                                         r"recorder \(node humanoid_recorder in the entry point group humanoid.nodes"):
        serving.with_recorder(nodes, tmp_path / "bag")
    assert not (tmp_path / "bag").exists()
