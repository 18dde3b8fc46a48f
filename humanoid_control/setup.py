"""Install the humanoid_control package."""

from setuptools import find_packages, setup

PACKAGE = "humanoid_control"


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
    description="The ROS layer: the robot interface front, the controller and observer nodes, the client.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={"console_scripts": [
        "trajectory_generator = humanoid_control.nodes.trajectory_generator:main",
        "balance_monitor = humanoid_control.nodes.balance_monitor:main",
        "energy_monitor = humanoid_control.nodes.energy_monitor:main",
        "self_collision_checker = humanoid_control.nodes.self_collision_checker:main",
        "walk_controller = humanoid_control.nodes.walk_controller:main",
        "gait_controller = humanoid_control.nodes.gait_controller:main",
        "fall_manager = humanoid_control.nodes.fall_manager:main",
        "odometry = humanoid_control.nodes.odometry:main",
        "control_container = humanoid_control.nodes.container:main",
    ], "humanoid.nodes": [  # the nodes a container can host (humanoid_control.nodes.container)
        "trajectory_generator = humanoid_control.nodes.trajectory_generator:TrajectoryGenerator",
        "balance_monitor = humanoid_control.nodes.balance_monitor:BalanceMonitor",
        "energy_monitor = humanoid_control.nodes.energy_monitor:EnergyMonitor",
        "self_collision_checker = humanoid_control.nodes.self_collision_checker:SelfCollisionChecker",
        "walk_controller = humanoid_control.nodes.walk_controller:WalkControllerNode",
        "gait_controller = humanoid_control.nodes.gait_controller:GaitControllerNode",
        "fall_manager = humanoid_control.nodes.fall_manager:FallManagerNode",
        "odometry = humanoid_control.nodes.odometry:OdometryNode",
    ]},
)
