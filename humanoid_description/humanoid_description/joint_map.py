"""The hardware joint map: which servo drives which URDF joint, and how to convert.

``joint angle (rad) = direction * scale.raw_to_radians(raw - offset)`` where the
scale is the position register of the servo model (:mod:`humanoid_description.units`).
The map is data (``robots/<robot>/joint_map.yaml``); this module only reads it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from humanoid_description.data_file import load_package_yaml
from humanoid_description.units import AX12, XSERIES, PositionScale

#: Position register of each supported servo model.
POSITION_SCALES: Mapping[str, PositionScale] = {
    "AX-12": AX12, "AX-12A": AX12, "AX-18": AX12,
    "XL430": XSERIES, "XM430": XSERIES, "XM540": XSERIES,
}


@dataclass(frozen=True)
class ServoJoint:
    """One joint driven by one servo."""

    joint: str
    servo_id: int
    model: str
    direction: int
    offset: int
    thesis: int | None = None
    #: The thesis' limit table for this joint (raw register values; None: the whole range), data only.
    thesis_limits: tuple[int, int] | None = None

    @property
    def scale(self) -> PositionScale:
        return POSITION_SCALES[self.model]

    def raw_to_radians(self, raw: float) -> float:
        return self.direction * self.scale.raw_to_radians(raw - self.offset)

    def radians_to_raw(self, radians: float) -> int:
        """Register value for a joint angle; ValueError outside the register range."""
        return self.scale.radians_to_raw(self.direction * radians) + self.offset

    def thesis_limits_radians(self) -> tuple[float, float]:
        """The thesis' limit table for this joint as joint angles (rad, lower <= upper); where
        the table gives none, the servo's whole range (as the thesis says). The table's raw
        values are the thesis robot's, at the factory zero: this robot's offset does not apply."""
        raw = self.thesis_limits or (self.scale.raw_min, self.scale.raw_max)
        low, high = sorted(self.direction * self.scale.raw_to_radians(r) for r in raw)
        return low, high

    def raw_velocity_sign(self) -> int:
        """Sign relating a register speed (positive = increasing raw) to joint velocity."""
        return self.direction


class JointMap(Mapping[str, ServoJoint]):
    """Joint name -> :class:`ServoJoint`, in file order; also indexable by servo ID."""

    def __init__(self, entries: list[ServoJoint]) -> None:
        self._by_joint = {e.joint: e for e in entries}
        self._by_id = {e.servo_id: e for e in entries}
        if len(self._by_id) != len(entries) or len(self._by_joint) != len(entries):
            raise ValueError("joint map: joint names and servo IDs must be unique")

    def __getitem__(self, joint: str) -> ServoJoint:
        return self._by_joint[joint]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_joint)

    def __len__(self) -> int:
        return len(self._by_joint)

    def by_id(self, servo_id: int) -> ServoJoint:
        return self._by_id[servo_id]

    @property
    def ids(self) -> list[int]:
        return list(self._by_id)

    @classmethod
    def from_file(cls, path: Path) -> JointMap:
        data = load_package_yaml(Path(path).read_text())
        entries = []
        for joint, item in data["joints"].items():
            model = str(item["model"])
            if model not in POSITION_SCALES:
                raise ValueError(f"{path}: joint {joint}: unknown servo model {model!r} "
                                 f"(known: {', '.join(POSITION_SCALES)})")
            direction = int(item.get("direction", 1))
            if direction not in (1, -1):
                raise ValueError(f"{path}: joint {joint}: direction must be 1 or -1")
            thesis_limits = item.get("thesis_limits")
            if thesis_limits is not None:
                if len(thesis_limits) != 2:
                    raise ValueError(f"{path}: joint {joint}: thesis_limits must be [lower, upper] (raw)")
                thesis_limits = (int(thesis_limits[0]), int(thesis_limits[1]))
            entries.append(ServoJoint(joint=joint, servo_id=int(item["id"]), model=model,
                                      direction=direction, offset=int(item.get("offset", 0)),
                                      thesis=item.get("thesis"), thesis_limits=thesis_limits))
        return cls(entries)
