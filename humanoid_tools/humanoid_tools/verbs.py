"""The ``humanoid`` verbs of the workstation tools and of model authoring (entry point group
``humanoid.verbs``). Only descriptors: nothing is imported until a verb is chosen."""

from humanoid_core import Section, Verb

VERBS = (
    Verb("record", "humanoid_tools.recording.command", "record topics of the running robot into a rosbag2 bag "
                                                       "(MCAP) until Ctrl-C or --duration; prints messages "
                                                       "received vs written per topic", Section.TOOLS),
    Verb("plot", "humanoid_tools.plots.command", "PNG figures of a recorded bag: commanded vs measured joints, "
                                                 "CoM/ZMP over the support polygon, rates, a summary page",
         Section.TOOLS),
    Verb("compare", "humanoid_tools.plots.compare_command",
         "compare two recordings of the same experiment (sim vs robot, or two simulations): measured "
         "joints aligned on the experiment's start, their difference, tracking, CoM/ZMP, rates; PNG and --json",
         Section.TOOLS),
    Verb("view", "humanoid_tools.view.command", "the robot in a browser page (viser), live with joint sliders "
                                                "and keyframe saving, or replaying a bag; prints its address "
                                                "(with this run's token) first", Section.TOOLS),
    Verb("pose", "humanoid_tools.posing", "pose a running robot (sim or real) joint by joint from commands "
                                          "on stdin, and save the poses", Section.TOOLS),
    Verb("play-gait", "humanoid_tools.play_gait", "play a gait on the running quadruped (sim or real) through "
                                                  "the play_gait action; print what was played and, in "
                                                  "simulation, how far the robot went", Section.TOOLS),
    Verb("identify-masses", "humanoid_tools.model_commands",
         "fit a robot's structure masses to the thesis' balanced poses (the Bioloid)", Section.MODEL,
         "add_identify_masses_arguments", "run_identify_masses"),
    Verb("generate-srdf", "humanoid_tools.model_commands",
         "sample random configurations and write the robot's SRDF (disabled collision pairs)", Section.MODEL,
         "add_generate_srdf_arguments", "run_generate_srdf"),
)
