"""Install the humanoid_description package: Python library plus xacro and config data."""

from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = "humanoid_description"


def data_tree(folder: str) -> list[tuple[str, list[str]]]:
    """Install every file under ``folder`` into share/<package>/<folder>, keeping the tree."""
    entries: dict[str, list[str]] = {}
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file():
            entries.setdefault(f"share/{PACKAGE}/{path.parent}", []).append(str(path))
    return sorted(entries.items())


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        *data_tree("xacro"),
        *data_tree("robots"),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="Humanoid stack maintainers",
    maintainer_email="maintainers@humanoid-stack.org",
    description="Robot descriptions and the shared model library of the humanoid stack.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "generate_srdf = humanoid_description.srdf_generator:main",
        ],
    },
)
