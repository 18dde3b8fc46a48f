"""The energy monitor is in the simulation and real graphs by default and left out with
``--no-energy-monitor`` (``energy_monitor:=false`` under ros2 launch: a GRAPH_SWITCH)."""

from __future__ import annotations

from humanoid_bringup import GRAPH_SWITCHES, build_parser, real_nodes
from humanoid_control.nodes import CONTAINER_MODULE, ENERGY_MONITOR
from humanoid_control.nodes.specs import hosted_names
from humanoid_sim import sim_nodes


def names(nodes) -> set[str]:
    """The graph's nodes, those its container hosts included."""
    return {name for spec in nodes
            for name in (hosted_names(spec) if spec.module == CONTAINER_MODULE else [spec.name])}


def test_the_energy_monitor_is_in_both_graphs_unless_left_out():
    assert ENERGY_MONITOR in names(sim_nodes("hoap2")) and ENERGY_MONITOR in names(real_nodes("bioloid"))
    assert ENERGY_MONITOR not in names(sim_nodes("hoap2", energy_monitor=False))
    assert ENERGY_MONITOR not in names(real_nodes("bioloid", energy_monitor=False))
    assert ENERGY_MONITOR in names(sim_nodes("hoap2", shared_process=False))
    assert "energy_monitor" in GRAPH_SWITCHES


def test_no_energy_monitor_option():
    parser = build_parser()
    assert parser.parse_args(["sim", "--robot", "hoap2"]).energy_monitor is True
    assert parser.parse_args(["sim", "--robot", "hoap2", "--no-energy-monitor"]).energy_monitor is False
    assert parser.parse_args(["real", "--robot", "bioloid", "--emulate", "--no-energy-monitor"]).energy_monitor is False
