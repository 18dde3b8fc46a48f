"""The ROS front of the robot interface, and what every node of the stack is made of.

- :mod:`~humanoid_control.ros.robot_interface` and :mod:`~humanoid_control.ros.driver_node`:
  the topics, action and services a driver node serves (sim and hardware alike), and
  :mod:`~humanoid_control.ros.state_publisher`, what its loop publishes;
- :mod:`~humanoid_control.ros.robot_client`: the same interface seen from a controller
  (:mod:`~humanoid_control.ros.odometry_drift`: the odometry against the ground truth over a run);
- node support: :mod:`~humanoid_control.ros.node_main`, :mod:`~humanoid_control.ros.parameters`,
  :mod:`~humanoid_control.ros.offload`, :mod:`~humanoid_control.ros.ros_time`,
  :mod:`~humanoid_control.ros.action_result`,
  :mod:`~humanoid_control.ros.action_client`, :mod:`~humanoid_control.ros.matched_publisher`,
  :mod:`~humanoid_control.ros.diagnostics`,
  :mod:`~humanoid_control.ros.joint_readings`, :mod:`~humanoid_control.ros.throttled_log`;
- :mod:`~humanoid_control.ros.dds_shared_memory`: Fast DDS's shared memory that killed processes
  leave behind.
"""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "action_client": ["ActionClient"],
    "action_result": [
        "ASK_AGAIN_AFTER",
        "ASK_AGAIN_TIMES",
        "FEEDBACK_KEPT",
        "REQUESTS_KEPT",
        "RESULT_KEPT",
        "ResultWaiter",
        "SERVER_ANSWER_WAIT",
        "action_server",
        "first_answer",
        "wait_until_answering",
    ],
    "balance_markers": ["CLOSE", "OUTSIDE", "SAFE", "margin_colour"],
    "dds_shared_memory": ["SHARED_MEMORY", "Cleaned", "clean_left_behind"],
    "diagnostics": ["diagnostic_array", "node_status"],
    "driver_node": ["DriverNode"],
    "fall_watch": ["FALL_STATE_QOS", "FallWatch"],
    "joint_readings": ["JointReadings", "MalformedJointStateError"],
    "lockstep": ["LOCKSTEP_QOS", "LOCKSTEP_TOPIC", "NODE_LOOK_PERIOD", "LockstepAnswers", "LockstepParticipant",
                 "SharedParticipant"],
    "loop_process": ["DriverSpec", "LoopHost", "LoopThread"],
    "matched_publisher": ["MatchedPublisher", "STREAM_HISTORY", "heard_by_all"],
    "namespace_claim": ["claim_namespace", "namespace_holder"],
    "namespaces": [
        "ROOT_NAMESPACE",
        "add_namespace_option",
        "frame_prefix",
        "namespace_argument",
        "normalized_namespace",
        "prefixed",
        "robot_publishers",
        "unprefixed",
    ],
    "node_host": ["NodeHost", "OwnProcess", "Shared"],
    "node_main": ["STOP_TIMEOUT", "destroy_whole", "node_alive", "run_node", "spin_while"],
    "odometry_drift": ["OdometryDrift", "pose_se3"],
    "offload": ["Offload", "stop_offloads"],
    "parameters": ["declare", "declare_control_node", "declare_dataclass", "declare_robot"],
    "restart_report": ["report_restart"],
    "robot_client": [
        "CLIENT_TURN",
        "GoalOutcome",
        "JOINT_STATES_DEPTH",
        "RobotClient",
        "RobotClientError",
        "make_trajectory",
        "playback_trajectory",
        "poll_until",
        "wait_until_heard",
    ],
    "robot_interface": ["RobotInterface", "standard_result"],
    "robot_state": ["RobotState"],
    "ros_time": ["DriverClock", "clock_seconds", "seconds", "to_duration", "to_time"],
    "robot_waits": ["CONNECT_TIMEOUT", "STATE_TIMEOUT", "WATCH_PERIOD", "RobotSilence"],
    "setpoint_stream": ["FINAL_RESENDS", "SetpointStream"],
    "state_feed": ["FEED_QOS", "StateFeed"],
    "state_publisher": ["OFF_THE_LINE", "StatePublisher"],
    "throttled_log": ["ThrottledLog"],
    "topics": ["DEFAULT_TOPICS", "RECORDED_AS_ITS_PARTS", "absolute"],
})
