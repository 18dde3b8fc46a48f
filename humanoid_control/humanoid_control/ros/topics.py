"""The stack's topics, actions and services, named once: the robot interface (with the controllers'
actions), the balance monitor's (fall estimate included), the energy monitor's, the fall
manager's and the self-collision checker's outputs, and the simulator's ground truth and fall flag. The
README's tables name the same topics (a test checks it).

Names are relative, as the nodes use them (a robot's namespace applies to them; ``/tf`` is
global). Their union is what a recording takes by default, resolved in the recorder's
namespace (``humanoid record``, ``--record`` and ``record.launch.py`` alike). Topics nobody
publishes (a node that is not running, the simulator's topics on the real robot) are simply
absent from a bag."""

# -- the robot interface (driver nodes) -------------------------------------------------------
JOINT_STATES = "joint_states"
#: What the robot interface wrote to its driver at each state.
JOINT_SETPOINTS = "joint_setpoints"
JOINT_COMMANDS = "joint_commands"
JOINT_TRAJECTORY = "joint_trajectory"
ROBOT_DESCRIPTION = "robot_description"
DIAGNOSTICS = "diagnostics"
IMU = "imu/data"
#: The one-message state (humanoid_control.ros.robot_state).
ROBOT_STATE = "robot_state"
FOLLOW_JOINT_TRAJECTORY = "follow_joint_trajectory"
#: The standard type's (control_msgs) trajectory action: where ros2_control's
#: joint_trajectory_controller serves it, so that MoveIt's usual configuration finds it.
STANDARD_FOLLOW_JOINT_TRAJECTORY = "joint_trajectory_controller/follow_joint_trajectory"
PLAY_MOTION = "play_motion"
CMD_VEL = "cmd_vel"
WALK = "walk"
PLAY_GAIT = "play_gait"
#: A lockstep simulation's participants answer here (humanoid_control.ros.lockstep).
LOCKSTEP_READY = "lockstep/ready"
# -- the observers --------------------------------------------------------------------------
BALANCE_STATE = "balance_state"
BALANCE_MARKERS = "balance_markers"
FALL_STATE = "fall_state"
#: The fall manager's state of the robot (humanoid_control.nodes.fall_manager).
FALL_MANAGER_STATE = "fall_manager_state"
ENERGY_STATE = "energy_state"
SELF_COLLISION_STATE = "self_collision_state"
SELF_COLLISION_MARKERS = "self_collision_markers"
# -- the simulator ----------------------------------------------------------------------------
CLOCK = "clock"
BASE_POSE = "ground_truth/base_pose"
BASE_TWIST = "ground_truth/base_twist"
FALLEN = "fallen"

# -- services ------------------------------------------------------------------------------------
#: The simulator's.
RESET = "reset"
PAUSE = "pause"
RESUME = "resume"
STEP = "step"
APPLY_PUSH = "apply_push"
#: The robot interface's (std_srvs/SetBool): false releases every joint (limp), true takes them again.
TORQUE = "torque"
#: The self-collision checker's.
CHECK_SELF_COLLISION = "check_self_collision"
CHECK_TRAJECTORY_SELF_COLLISION = "check_trajectory_self_collision"

#: The robots' feet sides whose sensors the recording takes by default.
FOOT_SIDES = ("left", "right")


def foot_wrench(side: str) -> str:
    return f"{side}_foot/wrench"


def foot_contact(side: str) -> str:
    return f"{side}_foot/contact"


def action_topics(action: str) -> tuple[str, str]:
    """The topics an action's progress can be recorded from: its feedback and its status."""
    return f"{action}/_action/feedback", f"{action}/_action/status"


def absolute(topic: str, namespace: str = "/") -> str:
    """The full name of ``topic`` in ``namespace`` (absolute, valid): in the root namespace
    (``joint_states``: ``/joint_states``), as a bag names a robot's topics once read back
    (``humanoid_tools.recording.Bag`` takes the recorded robot's namespace off)."""
    return topic if topic.startswith("/") else f"{namespace.rstrip('/')}/{topic}"


#: The robot's topics, as its nodes name them: relative (under the robot's namespace), but
#: ``/tf``, global by ROS convention (its frames carry the robot's prefix instead).
ROBOT_INTERFACE = (
    JOINT_STATES, JOINT_SETPOINTS, JOINT_COMMANDS, JOINT_TRAJECTORY, ROBOT_DESCRIPTION, DIAGNOSTICS, IMU,
    *(foot_wrench(side) for side in FOOT_SIDES), *(foot_contact(side) for side in FOOT_SIDES),
    *action_topics(FOLLOW_JOINT_TRAJECTORY), *action_topics(STANDARD_FOLLOW_JOINT_TRAJECTORY),
    *action_topics(PLAY_MOTION), CMD_VEL, *action_topics(WALK),
    *action_topics(PLAY_GAIT))
BALANCE = (BALANCE_STATE, BALANCE_MARKERS, FALL_STATE)
ENERGY = (ENERGY_STATE,)
FALL_MANAGER = (FALL_MANAGER_STATE,)
SELF_COLLISION = (SELF_COLLISION_STATE, SELF_COLLISION_MARKERS)
#: The simulator's (``clock`` is not among them: a bag's messages carry the robot's time in
#: their stamps, and ``ros2 bag play --clock`` makes its own; record it with ``--topics``).
SIMULATION = (BASE_POSE, BASE_TWIST, FALLEN)
#: The odometry node's (humanoid_control.nodes.odometry): the kinematic odometry, /tf (absolute:
#: TF is one tree per DDS domain, its frames prefixed by the namespace), and in simulation the
#: ground truth as nav_msgs/Odometry.
ODOM = "odom"
TF = "/tf"
GROUND_TRUTH_ODOM = "ground_truth/odom"
ODOMETRY = (ODOM, TF, GROUND_TRUTH_ODOM)

DEFAULT_TOPICS: tuple[str, ...] = (*ROBOT_INTERFACE, *BALANCE, *ENERGY, *FALL_MANAGER, *SELF_COLLISION, *SIMULATION,
                                   *ODOMETRY)

#: Published, and recorded as the topics it carries (``joint_states``, the sensors, the ground
#: truth, ``fallen``: :mod:`humanoid_control.ros.robot_state`), not as itself.
RECORDED_AS_ITS_PARTS = (ROBOT_STATE,)
