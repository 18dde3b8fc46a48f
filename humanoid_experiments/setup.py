"""Install humanoid_experiments (a Python package; no data files)."""

from setuptools import find_packages, setup

PACKAGE = "humanoid_experiments"

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
    # its `humanoid` verbs (humanoid_bringup.cli finds the verbs packages register)
    entry_points={"humanoid.verbs": ["humanoid_experiments = humanoid_experiments.verbs:VERBS"]},
)
