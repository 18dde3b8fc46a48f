"""How long the control nodes that drive the robot wait for it (the trajectory generator, the
walk and gait controllers): one patience for all, so that a graph slow to come up on a loaded
machine is waited for alike by every node."""

#: Wall seconds a node waits for the robot's first joint_states, and for its trajectory action
#: to answer, before it gives up on a request (and says so in the request's result).
CONNECT_TIMEOUT = 30.0
#: Wall seconds without joint_states after which a walk or gait under way counts the robot as
#: gone and is abandoned (the robot interface holds the last set-point it was sent). Wall time,
#: not robot time: a simulation slowed by a busy machine still publishes every few tens of
#: milliseconds, and a paused one stops the controller's clock too.
STATE_TIMEOUT = 1.0
