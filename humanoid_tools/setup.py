"""Install humanoid_tools (a Python package; no data files)."""

from setuptools import find_packages, setup

PACKAGE = "humanoid_tools"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="Humanoid stack maintainers",
    maintainer_email="maintainers@humanoid-stack.org",
    description=__doc__,
    license="Apache-2.0",
    tests_require=["pytest"],
    # the recorder can be hosted in a graph's container (humanoid_control.nodes.container)
    # (also found by its name for `humanoid sim/real --record`: humanoid_bringup.graphs.recorder_entry)
    entry_points={"humanoid.nodes": ["humanoid_recorder = humanoid_tools.recording.recorder:RecorderNode"],
                  # its `humanoid` verbs (humanoid_bringup.cli finds the verbs packages register)
                  "humanoid.verbs": ["humanoid_tools = humanoid_tools.verbs:VERBS"]},
)
