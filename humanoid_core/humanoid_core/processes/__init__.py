"""Starting nodes as processes that die with their launcher (``humanoid sim``, the tests).

:mod:`~humanoid_core.processes.node_graph` starts a graph of nodes, one process each;
:mod:`~humanoid_core.processes.process_lifetime` and
:mod:`~humanoid_core.processes.run_tethered` tie a process to its launcher;
:mod:`~humanoid_core.processes.stop_request` waits for a stop signal without a lock;
:mod:`~humanoid_core.processes.priority` runs a process ahead of the machine's other work;
:mod:`~humanoid_core.processes.cpu_claim` runs one on a CPU of its own;
:mod:`~humanoid_core.processes.cpu_time` reads the CPU time one has used.
"""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "node_graph": ["CLOCK_TOPIC", "Graph", "NodeSpec", "OnExit", "RESTART_POLICY", "describe_exit", "driver_node_spec",
                   "in_namespace"],
    "process_lifetime": [
        "LAUNCHER_PID_VARIABLE",
        "RESTART_VARIABLE",
        "child_processes",
        "die_with_parent",
        "end_when_orphaned",
        "exit_within",
        "hang_up_like_terminate",
        "is_running",
        "process_tree",
        "tethered_child",
        "tethered_program",
    ],
    "cpu_claim": ["CPU_CLAIMS", "claim_cpu", "current_cpu", "run_on_cpu"],
    "cpu_time": ["own_cpu_seconds", "process_cpu_seconds"],
    "priority": ["leads_session", "set_priority"],
    "stop_request": ["RECHECK", "StopRequest", "stop_on_signals"],
})
