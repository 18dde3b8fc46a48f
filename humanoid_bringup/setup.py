"""Install humanoid_bringup: launch files, parameters, RViz config and the `humanoid` CLI."""

from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = "humanoid_bringup"


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
        *data_tree("launch"),
        *data_tree("config"),
        *data_tree("rviz"),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="Humanoid stack maintainers",
    maintainer_email="maintainers@humanoid-stack.org",
    description="Bring-up of the humanoid stack: launch files, parameters and the humanoid CLI.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={"console_scripts": ["humanoid = humanoid_bringup.cli:main"],
                  # its own verbs, found as every package's are (humanoid_bringup.cli)
                  "humanoid.verbs": ["humanoid_bringup = humanoid_bringup.verbs:VERBS"]},
)
