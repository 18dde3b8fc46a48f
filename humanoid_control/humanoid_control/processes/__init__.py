"""Starting nodes as processes that die with their launcher (``humanoid sim``, the tests).

:mod:`~humanoid_control.processes.node_graph` starts a graph of nodes, one process each;
:mod:`~humanoid_control.processes.process_lifetime` and
:mod:`~humanoid_control.processes.run_tethered` tie a process to its launcher;
:mod:`~humanoid_control.processes.stop_request` waits for a stop signal without a lock.
"""
