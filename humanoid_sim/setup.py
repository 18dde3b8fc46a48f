"""Install the humanoid_sim package."""

from setuptools import find_packages, setup

PACKAGE = "humanoid_sim"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", ["launch/sim.launch.py"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="Humanoid stack maintainers",
    maintainer_email="maintainers@humanoid-stack.org",
    description="PyBullet simulation of the humanoids behind the shared robot interface.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={"console_scripts": ["sim_node = humanoid_sim.sim_node:main",
                                      "world_node = humanoid_sim.world_node:main"],
                  # the `humanoid sim` verb (humanoid_bringup.cli finds the verbs packages register)
                  "humanoid.verbs": ["humanoid_sim = humanoid_sim.verbs:VERBS"]},
)
