"""Starting nodes as processes that die with their launcher (``humanoid sim``, the tests).

:mod:`~humanoid_core.processes.node_graph` starts a graph of nodes, one process each;
:mod:`~humanoid_core.processes.process_lifetime` and
:mod:`~humanoid_core.processes.run_tethered` tie a process to its launcher;
:mod:`~humanoid_core.processes.stop_request` waits for a stop signal without a lock.
"""
