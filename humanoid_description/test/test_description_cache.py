"""The expanded robot descriptions kept on disk between processes: the same URDF as xacro
gives, and a new one as soon as a file it is made from changes."""

import pytest
import xacro

from humanoid_description import ROBOTS, expanded_xacro, robot_files, urdf_xml

DOCUMENT = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="probe">
  <xacro:property name="d" value="${xacro.load_yaml('sizes.yaml')}"/>
  <link name="base"><inertial><mass value="${d['mass']}"/></inertial></link>
</robot>
"""


def write_robot(folder, mass):
    (folder / "probe.urdf.xacro").write_text(DOCUMENT)
    (folder / "sizes.yaml").write_text(f"mass: {mass}\n")
    return folder / "probe.urdf.xacro", [folder / "probe.urdf.xacro", folder / "sizes.yaml"]


@pytest.mark.parametrize("robot", ROBOTS)
def test_the_cached_description_is_what_xacro_expands(robot):
    expected = xacro.process_file(str(robot_files(robot).xacro)).toprettyxml(indent="  ")
    assert urdf_xml(robot) == expected


def test_the_second_expansion_is_read_from_the_cache_and_a_changed_source_expands_again(tmp_path):
    cache = tmp_path / "cache"
    document, sources = write_robot(tmp_path, 1.5)
    first = expanded_xacro(document, sources, cache)
    assert '<mass value="1.5"/>' in first
    [kept] = cache.glob("*.urdf")
    assert kept.read_text() == first
    kept.write_text(first.replace("1.5", "7.25"))  # what the cache holds is what is returned
    assert '<mass value="7.25"/>' in expanded_xacro(document, sources, cache)
    (tmp_path / "sizes.yaml").write_text("mass: 2.5\n")
    again = expanded_xacro(document, sources, cache)
    assert '<mass value="2.5"/>' in again
    assert len(list(cache.glob("*.urdf"))) == 2
    assert not list(cache.glob("*.part"))


def test_a_cache_path_that_is_a_file_only_costs_the_expansion(tmp_path):
    cache = tmp_path / "cache"
    cache.write_text("not a folder")
    document, sources = write_robot(tmp_path, 3.0)
    assert '<mass value="3.0"/>' in expanded_xacro(document, sources, cache)
    assert cache.read_text() == "not a folder"
