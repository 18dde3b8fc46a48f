"""Install the humanoid_core package."""

from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = "humanoid_core"


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", [str(p) for p in sorted(Path("config").glob("*.yaml"))]),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="Humanoid stack maintainers",
    maintainer_email="maintainers@humanoid-stack.org",
    description="The stack's computations without ROS: control loop, guards, motion, balance, walking, gaits, energy.",
    license="Apache-2.0",
    tests_require=["pytest"],
)
