"""RobotClient.ground_truth_if_any: a simulator's ground truth even when its first pose is
late (a busy machine), None without waiting long when nothing publishes one (a real robot).
`humanoid play-gait` measures the distance walked from it: with a fixed 3 s wait for the
first pose, a loaded test machine once reported no distance from a running simulation."""

from __future__ import annotations

import threading
import time

import rclpy
from geometry_msgs.msg import PoseStamped

from humanoid_control.ros import RobotClient

#: s to find a publisher of the ground truth; the pose itself comes later than that here.
DISCOVERY = 1.0
LATE = 1.5


def test_a_ground_truth_published_late_is_waited_for_and_none_means_no_simulator():
    namespace = "ground_truth_if_any_test"
    with RobotClient("ground_truth_client", namespace=namespace, standard_topics=True) as client:
        started = time.monotonic()
        assert client.ground_truth_if_any(DISCOVERY, 30.0) is None
        assert time.monotonic() - started < DISCOVERY + 5.0

        simulator = rclpy.create_node("ground_truth_simulator", namespace=namespace)
        try:
            publisher = simulator.create_publisher(PoseStamped, "ground_truth/base_pose", 10)
            pose = PoseStamped()
            pose.pose.position.x = 0.25

            def publish_late() -> None:
                time.sleep(LATE)
                publisher.publish(pose)

            late = threading.Thread(target=publish_late)
            late.start()
            found = client.ground_truth_if_any(DISCOVERY, 30.0)
            late.join()
            assert found is not None and found.pose.position.x == 0.25
        finally:
            simulator.destroy_node()
