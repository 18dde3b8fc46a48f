"""What is written in two places says the same in both: the loop's error codes and the
FollowJointTrajectory action's, the topics the README documents and those a recording
takes by default (humanoid_control.ros.topics), the robot interface's own table and the
README's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from humanoid_control.ros import DEFAULT_TOPICS, RECORDED_AS_ITS_PARTS, absolute, robot_interface
from humanoid_core.loop import ErrorCode
from humanoid_interfaces.action import FollowJointTrajectory

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
#: README table rows: | `name`, `name` | what | kind |
ROW = re.compile(r"^\| (`[^|]+`) \| [^|]* \| ([^|]*) \|$", re.MULTILINE)
TOPIC_KINDS = ("published", "subscribed", "where the robot has them")


def constants(cls: type) -> dict[str, int]:
    return {name: value for name, value in vars(cls).items()
            if name.isupper() and not name.startswith("_") and isinstance(value, int)}


def expanded(name: str) -> list[str]:
    """``<side>_foot/wrench`` stands for both feet's topics."""
    return [name.replace("<side>", side) for side in ("left", "right")] if "<side>" in name else [name]


def readme_rows() -> list[tuple[list[str], str]]:
    return [([n for name in re.findall(r"`([^`]+)`", names) for n in expanded(name)], kind.strip())
            for names, kind in ROW.findall(README)]


def test_the_loop_error_codes_are_the_action_s():
    assert {code.name: int(code) for code in ErrorCode} == constants(FollowJointTrajectory.Result)


def test_every_topic_the_readme_documents_is_recorded_by_default():
    documented = {f"/{name}" for names, kind in readme_rows() if kind in TOPIC_KINDS for name in names}
    actions = {f"/{name}/_action/{part}" for names, kind in readme_rows() if kind == "action"
               for name in names for part in ("feedback", "status")}
    assert documented, "no topic table found in the README"
    recorded = {absolute(topic) for topic in (*DEFAULT_TOPICS, *RECORDED_AS_ITS_PARTS)}
    assert not (documented | actions) - recorded


@pytest.mark.parametrize("topic", [t for t in DEFAULT_TOPICS if "/_action/" not in t])
def test_every_topic_recorded_by_default_is_documented_in_the_readme(topic):
    name = topic.removeprefix("/")
    generic = re.sub(r"^(left|right)_foot/", "<side>_foot/", name)
    assert f"`{name}`" in README or f"`{generic}`" in README


def test_the_robot_interface_table_is_the_readme_s():
    table = re.findall(r"^([a-z_/]+) +\S+.* (?:published|subscribed|action)$", robot_interface.__doc__, re.MULTILINE)
    readme = {name for names, _kind in readme_rows() for name in names}
    assert table and set(table) <= readme
