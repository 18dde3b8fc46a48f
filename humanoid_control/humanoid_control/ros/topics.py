"""The stack's topics, named once: the robot interface (with the controllers' actions), the
balance monitor's (fall estimate included), the energy monitor's and the self-collision
checker's outputs, and the simulator's ground truth and fall flag. The README's
tables name the same topics (a test checks it).

Their union is what a recording takes by default (``humanoid record``, ``--record`` and
``record.launch.py`` alike). Topics nobody publishes (a node that is not running, the
simulator's topics on the real robot) are simply absent from a bag."""

ROBOT_INTERFACE = (
    "/joint_states", "/joint_setpoints", "/joint_commands", "/joint_trajectory", "/robot_description", "/diagnostics",
    "/imu/data", "/left_foot/wrench", "/right_foot/wrench", "/left_foot/contact", "/right_foot/contact",
    "/follow_joint_trajectory/_action/feedback", "/follow_joint_trajectory/_action/status",
    "/play_motion/_action/feedback", "/play_motion/_action/status", "/cmd_vel",
    "/walk/_action/feedback", "/walk/_action/status", "/play_gait/_action/feedback", "/play_gait/_action/status",
)
BALANCE = ("/balance_state", "/balance_markers", "/fall_state")
ENERGY = ("/energy_state",)
SELF_COLLISION = ("/self_collision_state", "/self_collision_markers")
#: The simulator's (``/clock`` is not among them: a bag's messages carry the robot's time in
#: their stamps, and ``ros2 bag play --clock`` makes its own; record it with ``--topics``).
SIMULATION = ("/ground_truth/base_pose", "/ground_truth/base_twist", "/fallen")

DEFAULT_TOPICS: tuple[str, ...] = (*ROBOT_INTERFACE, *BALANCE, *ENERGY, *SELF_COLLISION, *SIMULATION)


def absolute(topic: str) -> str:
    """``joint_states`` and ``/joint_states`` are the same topic (the recorder runs in the root
    namespace)."""
    return topic if topic.startswith("/") else f"/{topic}"

#: Published, and recorded as the topics it carries (``joint_states``, the sensors, the ground
#: truth, ``fallen``: :mod:`humanoid_control.ros.robot_state`), not as itself.
RECORDED_AS_ITS_PARTS = ("/robot_state",)
