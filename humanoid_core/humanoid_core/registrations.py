"""What the installed packages register with the stack: its plug-in points (entry point
groups) named once, and one reader of them for every part that looks them up.

- :data:`VERBS`: the ``humanoid`` command's verbs (each package lists its own);
- :data:`NODES`: the nodes a control container can host (and the recorder ``--record`` adds);
- :data:`MOTION_FORMATS`: the motion file formats a robot's package brings.

The entries are read as :func:`importlib.metadata.entry_points` reads them (each
distribution's ``entry_points.txt`` in the folders of ``sys.path``, the first distribution of
a name shadowing later ones) but without importing :mod:`importlib.metadata`: importing it
and reading every distribution's metadata cost 60-75 ms of CPU per process on the 2-core
machine (the ``humanoid`` command's whole start-up is about 100 ms), where this reader takes
5-8 ms. ``test_registrations`` holds the two to the same answer.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
from dataclasses import dataclass

VERBS = "humanoid.verbs"
NODES = "humanoid.nodes"
MOTION_FORMATS = "humanoid.motion_formats"

_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


@dataclass(frozen=True)
class Registration:
    """One entry point, as :mod:`importlib.metadata` gives it (``name``, ``value``, ``group``,
    ``module``, ``load()``)."""

    name: str
    value: str
    group: str

    @property
    def module(self) -> str:
        return self._parts()["module"]

    def load(self) -> object:
        """The registered object (its module imported)."""
        attribute = self._parts()["attr"]
        return functools.reduce(getattr, attribute.split(".") if attribute else (),
                                importlib.import_module(self.module))

    def _parts(self) -> re.Match:
        match = _VALUE.match(self.value)
        if match is None:
            raise ValueError(f"not an entry point value: {self.value!r} ({self.group} {self.name})")
        return match


def registered(group: str, name: str | None = None) -> list[Registration]:
    """The entry points of ``group`` (those named ``name`` only, when given) the installed
    distributions declare."""
    return [entry for entry in _group(group) if name is None or entry.name == name]


@functools.cache
def _group(group: str) -> tuple[Registration, ...]:
    seen: set[str] = set()
    found: list[Registration] = []
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:  # a zip file, a folder gone
            continue
        for entry in names:
            stem, suffix = os.path.splitext(entry)
            if suffix.lower() not in (".dist-info", ".egg-info"):
                continue
            distribution = re.sub(r"[-_.]+", "_", stem.partition("-")[0]).lower()
            if distribution in seen:
                continue
            seen.add(distribution)
            try:
                with open(os.path.join(folder or ".", entry, "entry_points.txt"), encoding="utf-8") as file:
                    text = file.read()
            except OSError:  # no entry points (or an .egg-info file)
                continue
            if group in text:
                found.extend(_section(text, group))
    return tuple(found)


def _section(text: str, group: str) -> list[Registration]:
    """The entries of section ``[group]`` of an ``entry_points.txt``."""
    entries, current = [], None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
        elif current == group and "=" in line:
            name, value = line.split("=", 1)
            entries.append(Registration(name.strip(), value.strip(), group))
    return entries
