"""Install the humanoid_robot_bioloid package: the Bioloid humanoid's own code (thesis, pose files)."""

from setuptools import find_packages, setup

PACKAGE = "humanoid_robot_bioloid"


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
    description="The ROBOTIS Bioloid humanoid's own code without ROS: the thesis' equations and tools, "
                "its pose file format.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        # the robot's motion formats, found by name by humanoid_core.motion.formats
        "humanoid.motion_formats": [
            "bioloid_thesis_poses = humanoid_robot_bioloid.motion_format:FORMAT",
        ],
    },
)
