"""The driver seam and the ROS-free control loop.

- :mod:`~humanoid_control.loop.driver`: what a back end implements (the simulator, the
  Dynamixel bus, :mod:`~humanoid_control.loop.ideal_driver` for in-process runs);
- :mod:`~humanoid_control.loop.control_loop`: the cycle (sync, read, executor, guard, write);
- :mod:`~humanoid_control.loop.validation`, :mod:`~humanoid_control.loop.trajectory_executor`,
  :mod:`~humanoid_control.loop.interpolation`: commands checked once, planned and sampled;
- :mod:`~humanoid_control.loop.command_guard`: the guard interface the loop calls;
- :mod:`~humanoid_control.loop.decimation`, :mod:`~humanoid_control.loop.interface_parameters`.

Nothing here imports ROS.
"""
