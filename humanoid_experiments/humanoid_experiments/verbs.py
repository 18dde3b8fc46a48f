"""The ``humanoid`` verbs of the experiments and benchmarks (entry point group
``humanoid.verbs``). Only descriptors: nothing is imported until a verb is chosen."""

from humanoid_core import Section, Verb

VERBS = (
    Verb("demo", "humanoid_experiments.demo", "headless HOAP-2 simulation: stand, lower the arms, slow squat "
                                              "and back up through follow_joint_trajectory; print tracking "
                                              "errors, fall, CoM height and real-time factor", Section.EXPERIMENTS),
    Verb("walk", "humanoid_experiments.walk", "walk the simulated robot through the walk action and measure "
                                              "it: distance, mean speed, lateral drift, heading error, share "
                                              "of time the measured ZMP stayed in the support polygon, fall",
         Section.EXPERIMENTS),
    Verb("push", "humanoid_experiments.push", "push the simulated robot at the trunk (apply_push): the "
                                              "largest impulse it survives standing and walking, per "
                                              "direction, by bisection; the balance monitor's warning "
                                              "before each fall", Section.EXPERIMENTS),
    Verb("getup", "humanoid_experiments.getup", "lay the simulated humanoid on its back or belly, or push it "
                                                "over, and let the fall manager get it up: successes, time to "
                                                "stand and the current drawn, per start", Section.EXPERIMENTS),
    Verb("postures", "humanoid_experiments.postures.command",
         "the postures protocol: quasi-static balance limits, one joint (pair) at a time until the robot "
         "loses its balance; in simulation or with --real on the robot", Section.EXPERIMENTS),
    Verb("balance-poses", "humanoid_experiments.balance_poses",
         "whole-body and link CoMs and static margin of Bioloid poses, in the thesis frame", Section.EXPERIMENTS),
    Verb("gaits", "humanoid_experiments.gaits", "IK gaits of the quadruped in a headless simulation: "
                                                "distance, heading and fall per gait and frequency",
         Section.EXPERIMENTS),
    Verb("optimize-gait", "humanoid_experiments.gait_search.command",
         "particle-swarm search of CPG gait parameters, each evaluation a headless simulation on Ray "
         "(local, or a cluster with --address)", Section.EXPERIMENTS),
    Verb("bench", "humanoid_experiments.bench.command",
         "benchmarks: each prints its figure next to its baseline from the same run", Section.EXPERIMENTS),
    Verb("identify", "humanoid_experiments.identify.command",
         "fit simulation parameters (servo, transmission, contact, link masses and CoMs) to a recorded bag or "
         "postures results; evaluations on Ray; writes a parameter file and reports fit and held-out errors",
         Section.EXPERIMENTS),
)
