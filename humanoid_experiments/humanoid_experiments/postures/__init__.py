"""The postures protocol: quasi-static balance limits, measured through the robot interface."""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "command": ["CLIENT", "parse_overrides", "parse_tests"],
    "in_process": ["SimulatedPostureRobot", "protocol_simulation", "run_postures"],
    "operator": ["AnswerError", "Operator", "OperatorStopError", "StreamAnswers"],
    "protocol": ["PostureTest", "load_protocol", "protocol_path"],
    "reference": ["Candidate", "CandidateResult", "candidates", "overlapping_links", "run_candidate"],
    "report": ["average_error", "to_json"],
    "runner": ["PostureResult", "PosturesRunner"],
    "watch": ["BODY", "support_tilts", "tip_direction"],
})
