"""Install the humanoid_robot_hoap2 package: the HOAP-2's own code (its motion format)."""

from setuptools import find_packages, setup

PACKAGE = "humanoid_robot_hoap2"


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="Humanoid stack maintainers",
    maintainer_email="maintainers@humanoid-stack.org",
    description="The Fujitsu HOAP-2's own code without ROS: its csv motion format.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        # the robot's motion formats, found by name by humanoid_core.motion.formats
        "humanoid.motion_formats": [
            "hoap2_csv = humanoid_robot_hoap2.motion_format:FORMAT",
        ],
    },
)
