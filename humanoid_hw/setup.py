"""Install the humanoid_hw package."""

from setuptools import find_packages, setup

PACKAGE = "humanoid_hw"

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
    description="Dynamixel hardware node behind the shared robot interface, and a bus emulator.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={"console_scripts": [
        "hw_node = humanoid_hw.hw_node:main",
        "emulate = humanoid_hw.emulator.cli:main",
    ], "humanoid.verbs": [  # `humanoid emulate` (humanoid_bringup.cli finds the verbs packages register)
        "humanoid_hw = humanoid_hw.verbs:VERBS",
    ]},
)
