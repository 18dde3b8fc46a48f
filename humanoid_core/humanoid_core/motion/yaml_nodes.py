"""YAML motion files in and out: nodes that know their line, numbers that read back as floats.

``yaml.safe_load`` forgets where values came from; the composed node tree keeps a
mark per node. :class:`YamlNode` wraps a node with typed accessors that raise
:class:`MotionError` with the file and the node's line. :func:`format_number` writes
floats the way YAML 1.1 reads them back exactly.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml

from humanoid_core.motion.model import MotionError
from humanoid_description import DataFileError, read_text

_constructor = yaml.SafeLoader("")


class YamlNode:
    """One node of a YAML document, with the file it came from."""

    def __init__(self, node: yaml.Node, source: str) -> None:
        self.node = node
        self.source = source

    @property
    def line(self) -> int:
        return self.node.start_mark.line + 1

    def error(self, problem: str) -> MotionError:
        return MotionError(self.source, problem, self.line)

    # -- containers --------------------------------------------------------------------
    def mapping(self, what: str) -> dict[str, YamlNode]:
        """Key -> value node; keys must be unique scalars."""
        if not isinstance(self.node, yaml.MappingNode):
            raise self.error(f"{what} must be a mapping")
        result: dict[str, YamlNode] = {}
        for key, value in self.node.value:
            if not isinstance(key, yaml.ScalarNode):
                raise YamlNode(key, self.source).error(f"{what}: keys must be plain values")
            if key.value in result:
                raise YamlNode(key, self.source).error(f"{what}: duplicate key {key.value!r}")
            result[key.value] = YamlNode(value, self.source)
        return result

    def sequence(self, what: str) -> list[YamlNode]:
        if not isinstance(self.node, yaml.SequenceNode):
            raise self.error(f"{what} must be a list")
        return [YamlNode(item, self.source) for item in self.node.value]

    # -- scalars -----------------------------------------------------------------------
    def _scalar(self, what: str) -> Any:
        if not isinstance(self.node, yaml.ScalarNode):
            raise self.error(f"{what} must be a single value")
        try:
            return _constructor.construct_object(self.node)
        except (yaml.YAMLError, ValueError) as error:  # e.g. an unknown !!tag, an int of 5000 digits
            problem = getattr(error, "problem", None) or str(error)
            raise self.error(f"{what}: not a value of this format: {problem}") from None
        finally:
            _constructor.constructed_objects.pop(self.node, None)  # the loader would keep every node

    def text(self, what: str) -> str:
        value = self._scalar(what)
        if not isinstance(value, str) or not value:
            raise self.error(f"{what} must be a non-empty string, got {self.node.value!r}")
        return value

    def number(self, what: str) -> float:
        """A finite int or float (not a boolean)."""
        value = self._scalar(what)
        try:
            finite = not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)
        except OverflowError:  # an integer beyond any float
            finite = False
        if not finite:
            raise self.error(f"{what} must be a finite number, got {self.node.value[:20]!r}")
        return float(value)

    def integer(self, what: str) -> int:
        value = self._scalar(what)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"{what} must be an integer, got {self.node.value!r}")
        return value

    def numbers(self, what: str, count: int | None = None) -> list[float]:
        """A list of finite numbers, of ``count`` items when given."""
        items = self.sequence(what)
        if count is not None and len(items) != count:
            raise self.error(f"{what} has {len(items)} values, expected {count}")
        return [item.number(f"{what}[{i}]") for i, item in enumerate(items)]


def compose_file(path: Path) -> YamlNode:
    """The root node of a YAML file; unreadable or malformed YAML raises MotionError."""
    try:
        text = read_text(path)
    except DataFileError as error:
        raise MotionError.from_data_file(error) from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error)
        raise MotionError(path, f"malformed YAML: {problem}",
                          None if mark is None else mark.line + 1) from None
    except RecursionError:
        raise MotionError(path, "malformed YAML: nested too deeply") from None
    if root is None:
        raise MotionError(path, "empty file")
    return YamlNode(root, str(path))


def require_keys(mapping: dict[str, YamlNode], where: YamlNode, what: str,
                 required: set[str], optional: set[str]) -> None:
    """Unknown keys are typos: reject them, and name the missing required ones."""
    for key, node in mapping.items():
        if key not in required | optional:
            known = ", ".join(sorted(required | optional))
            raise node.error(f"{what}: unknown key {key!r} (known: {known})")
    missing = sorted(required - set(mapping))
    if missing:
        raise where.error(f"{what}: missing {', '.join(missing)}")


def format_number(value: float, decimals: int | None) -> str:
    """A float YAML 1.1 reads back as a float: always with a '.', exact when decimals is None."""
    if decimals is not None:
        value = round(value, decimals)
    if value == 0.0:
        value = 0.0  # no "-0.0"
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + (f"e{exponent}" if exponent else "")
