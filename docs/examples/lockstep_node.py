"""A user's node in a lockstep simulation (README, "Lockstep"): for every joint_states
message, do the work, then answer on lockstep/ready with that message's stamp; say so when
leaving. Run it beside ``humanoid sim --robot <robot> --lockstep``."""

import signal
import threading

import rclpy
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState

from humanoid_interfaces.msg import LockstepReady


class MyController(Node):
    def __init__(self) -> None:
        super().__init__("my_controller")
        self.ready = self.create_publisher(LockstepReady, "lockstep/ready",
                                           QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
        self.create_subscription(JointState, "joint_states", self.on_joint_states, 10)

    def on_joint_states(self, msg: JointState) -> None:
        # the work: read msg, publish what it makes this node send (joint_trajectory, ...), then answer
        self.ready.publish(LockstepReady(participant=self.get_name(), stamp=msg.header.stamp))

    def leave(self) -> None:
        self.ready.publish(LockstepReady(participant=self.get_name(), leaving=True))
        self.ready.wait_for_all_acked(Duration(seconds=2))


def main() -> None:
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)  # Ctrl-C: leave, then stop
    stop = threading.Event()  # set by Ctrl-C, which raises nothing in the middle of rclpy's work
    signal.signal(signal.SIGINT, lambda _signum, _frame: stop.set())
    node = MyController()
    try:
        while not stop.is_set():
            rclpy.spin_once(node, timeout_sec=0.1)
        node.leave()
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
