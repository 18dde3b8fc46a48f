"""A benchmark whose graph does not come up stops with its logs' last lines (its log folder is
temporary). What the helper reads of the graph is :meth:`Graph.log_tails`, checked on real
processes in humanoid_core/test/test_graph_log_tails.py; here a graph's tails are given."""

import pytest

from humanoid_control.ros import RobotClientError
from humanoid_experiments.bench import log_tails_on_failure

TAILS = "--- humanoid_sim ---\nthe simulation's last line"


class GraphTails:
    """A graph's log tails, as :meth:`Graph.log_tails` gives them."""

    def log_tails(self) -> str:
        return TAILS


def test_a_client_that_cannot_reach_the_graph_fails_with_the_logs_last_lines():
    with pytest.raises(RobotClientError) as raised, log_tails_on_failure(GraphTails()):
        raise RobotClientError("no joint_states within 180 s: is the robot node running?")
    assert str(raised.value) == ("no joint_states within 180 s: is the robot node running?\n"
                                 f"the graph's logs, last lines:\n{TAILS}")


def test_other_errors_go_through_unchanged():
    with pytest.raises(ValueError, match=r"^not a client's$"), log_tails_on_failure(GraphTails()):
        raise ValueError("not a client's")
