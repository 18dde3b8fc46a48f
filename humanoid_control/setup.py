"""Install the humanoid_control package."""

import importlib.util
import sysconfig
from pathlib import Path

from setuptools import Extension, find_packages, setup

PACKAGE = "humanoid_control"


def balance_core() -> Extension:
    """The balance monitor's compiled update (balance/_core.cpp), built against the C++
    Pinocchio, Eigen and Boost.Python that the pin, cmeel-eigen and cmeel-boost wheels put
    in the virtualenv's cmeel.prefix (the same library the pinocchio module runs on)."""
    cmeel = importlib.util.find_spec("cmeel")  # the package sits beside cmeel.prefix in site-packages
    if cmeel is None or cmeel.origin is None:
        raise SystemExit("humanoid_control: cannot build balance/_core: the cmeel package is missing "
                         "(install requirements.txt: pin, cmeel-eigen)")
    prefix = Path(cmeel.origin).parents[1] / "cmeel.prefix"
    for header in ("pinocchio/multibody.hpp", "eigen3/Eigen/Core", "boost/python.hpp"):
        if not (prefix / "include" / header).is_file():
            raise SystemExit(f"humanoid_control: cannot build balance/_core: {prefix / 'include' / header} is missing "
                             "(install requirements.txt: pin, cmeel-eigen)")
    return Extension(
        f"{PACKAGE}.balance._core", [f"{PACKAGE}/balance/_core.cpp"], language="c++",
        # rebuilt when the wheel's Pinocchio changes too: it shares the library's C++ objects
        depends=[str(prefix / "include/pinocchio/config.hpp"), str(prefix / "lib/libpinocchio_default.so")],
        library_dirs=[str(prefix / "lib")],
        libraries=["pinocchio_default", f"boost_python{sysconfig.get_config_var('py_version_nodot')}"],
        runtime_library_dirs=[str(prefix / "lib")],
        # Pinocchio's CMake interface definitions: the same templates and layouts as the library
        define_macros=[("NDEBUG", None), ("PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION", None),
                       ("BOOST_MPL_LIMIT_LIST_SIZE", "30"), ("BOOST_MPL_LIMIT_VECTOR_SIZE", "30"),
                       ("BOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", None), ("BOOST_FUSION_INVOKE_MAX_ARITY", "12")],
        # no -g: Pinocchio's templates would make the build several times slower; -isystem:
        # -Wall speaks of our file only
        extra_compile_args=["-std=c++17", "-O2", "-g0", "-Wall", "-isystem", str(prefix / "include"),
                            "-isystem", str(prefix / "include/eigen3")])


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    ext_modules=[balance_core()],
    package_data={f"{PACKAGE}.balance": ["*.pyi"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", [str(p) for p in sorted(Path("config").glob("*.yaml"))]),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="Humanoid stack maintainers",
    maintainer_email="maintainers@humanoid-stack.org",
    description="Shared robot interface (control loop, ROS front), trajectory generator, motion files.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={"console_scripts": [
        "trajectory_generator = humanoid_control.nodes.trajectory_generator:main",
        "balance_monitor = humanoid_control.nodes.balance_monitor:main",
        "self_collision_checker = humanoid_control.nodes.self_collision_checker:main",
        "walk_controller = humanoid_control.nodes.walk_controller:main",
        "gait_controller = humanoid_control.nodes.gait_controller:main",
    ]},
)
