"""The driver seam and the ROS-free control loop.

- :mod:`~humanoid_core.loop.driver`: what a back end implements (the simulator, the
  Dynamixel bus, :mod:`~humanoid_core.loop.ideal_driver` for in-process runs);
- :mod:`~humanoid_core.loop.control_loop`: the cycle (sync, read, executor, guard, write);
- :mod:`~humanoid_core.loop.validation`, :mod:`~humanoid_core.loop.trajectory_executor`,
  :mod:`~humanoid_core.loop.interpolation`: commands checked once, planned and sampled;
- :mod:`~humanoid_core.loop.command_guard`: the guard interface the loop calls;
- :mod:`~humanoid_core.loop.decimation`, :mod:`~humanoid_core.loop.interface_parameters`.

Nothing here imports ROS.
"""
