"""The 3-D scene and the read-outs of the page: the robot model from its URDF (viser's
``ViserUrdf``, kinematics by yourdfpy), posed by a :class:`~humanoid_tools.view.frames.Frame`;
CoM, ZMPs and support polygon; the closest and colliding link pairs; a margin plot and a
status text. Joints whose reading is unknown (NaN: stale) keep their last known angle
and are listed as unknown; they are never drawn at a made-up value."""

from __future__ import annotations

import io
import math
import threading
import xml.etree.ElementTree as ET
from collections import deque
from typing import TYPE_CHECKING

import numpy as np
import viser

from humanoid_tools.view.frames import BalanceSample, CollisionSample, Frame

if TYPE_CHECKING:  # loaded with the first robot (load_robot): most of a view's start-up is theirs
    import yourdfpy
    from viser.extras import ViserUrdf

ROBOT_ROOT = "/robot"
MARGIN_HISTORY = 30.0  # s of margin shown in the plot (live)
PLOT_PERIOD = 0.5  # s between plot updates
COM_COLOR, ZMP_MODEL_COLOR, ZMP_MEASURED_COLOR = (30, 110, 230), (240, 140, 20), (30, 170, 60)
POLYGON_COLOR, COLLIDING_COLOR, CLOSEST_COLOR = (90, 90, 90), (230, 30, 30), (240, 170, 0)


class RobotScene:
    """One viser server's scene and read-outs; every method may be called from any thread."""

    def __init__(self, server: viser.ViserServer) -> None:
        self.server = server
        self._lock = threading.Lock()
        self.urdf: yourdfpy.URDF | None = None
        self.robot: ViserUrdf | None = None
        self.robot_name: str | None = None
        self.joint_names: tuple[str, ...] = ()
        self.limits: dict[str, tuple[float, float]] = {}
        self._known: dict[str, float] = {}
        self._root = server.scene.add_frame(ROBOT_ROOT, show_axes=False)
        server.scene.add_grid("/ground", width=2.0, height=2.0, cell_size=0.05, section_size=0.25)
        self._markers: dict[str, object] = {}
        self._polygon: np.ndarray | None = None
        self._margins: deque[tuple[float, float]] = deque()
        self._last_plot = -math.inf
        self._fixed_plot = False  # a replay shows the whole recording's curve instead
        with server.gui.add_folder("State"):
            self.status = server.gui.add_markdown("waiting for `robot_description` ...")
            self.margin_plot = server.gui.add_uplot(
                data=(np.zeros(2), np.full(2, np.nan)),
                series=({"label": "robot time (s)"}, {"label": "CoM margin (mm)", "stroke": "rgb(30,110,230)",
                                                        "width": 2}),
                scales={"x": {"time": False}}, title="stability margin (mm)", aspect=1.6, visible=False)

    # -- the robot model ------------------------------------------------------------------------
    def load_robot(self, urdf_xml: str) -> None:
        """Show the robot of a URDF (``robot_description``); frames the camera on it."""
        import yourdfpy
        from viser.extras import ViserUrdf

        urdf = yourdfpy.URDF.load(io.StringIO(urdf_xml), build_collision_scene_graph=False,
                                  load_collision_meshes=False)
        with self._lock:
            if self.robot is not None:
                self.robot.remove()
            self.urdf = urdf
            self.robot = ViserUrdf(self.server, urdf, root_node_name=ROBOT_ROOT)
            self.robot_name = ET.fromstring(urdf_xml).get("name")
            self.joint_names = self.robot.get_actuated_joint_names()
            self.limits = {name: (float(low if low is not None else -math.pi), float(high if high is not None
                                                                                      else math.pi))
                           for name, (low, high) in self.robot.get_actuated_joint_limits().items()}
            self._known = {name: min(max(0.0, low), high) for name, (low, high) in self.limits.items()}
            self.robot.update_cfg(np.array([self._known[n] for n in self.joint_names]))
        self.frame_camera()

    def frame_camera(self, clients=None) -> None:
        """Look at the robot from the front left, at a distance that fits it in the view."""
        if self.urdf is None or self.urdf.scene is None:
            return
        low, high = np.asarray(self.urdf.scene.bounds, dtype=float)
        size = float(np.max(high - low))
        base = self._root.position
        centre = base + (low + high) / 2.0
        position = centre + size * np.array([1.1, 0.85, 0.35])
        self.server.initial_camera.position = tuple(position)
        self.server.initial_camera.look_at = tuple(centre)
        for client in (clients or self.server.get_clients()).values():
            client.camera.position = tuple(position)
            client.camera.look_at = tuple(centre)

    # -- one instant ------------------------------------------------------------------------------
    def show(self, frame: Frame) -> list[str]:
        """Pose everything as ``frame`` says; returns the joints whose reading is unknown."""
        with self._lock:
            unknown = [n for n in self.joint_names if not math.isfinite(frame.positions.get(n, math.nan))]
            if self.robot is not None:
                for name in self.joint_names:
                    value = frame.positions.get(name, math.nan)
                    if math.isfinite(value):
                        self._known[name] = value
                self.robot.update_cfg(np.array([self._known[n] for n in self.joint_names]))
            if frame.base is not None:
                self._root.position, self._root.wxyz = frame.base
            self._show_balance(frame.balance)
            self._show_collision(frame.collision)
            self._record_margin(frame)
            self.status.content = self._status(frame, unknown)
        return unknown

    def _sphere(self, name: str, position: np.ndarray | None, radius: float, color) -> None:
        if name not in self._markers:
            self._markers[name] = self.server.scene.add_icosphere(f"/markers/{name}", radius=radius, color=color,
                                                                  subdivisions=2, cast_shadow=False)
        handle = self._markers[name]
        handle.visible = position is not None
        if position is not None:
            handle.position = tuple(position)

    def _show_balance(self, balance: BalanceSample | None) -> None:
        self._sphere("com", None if balance is None else balance.com, 0.012, COM_COLOR)
        self._sphere("com_projection", None if balance is None else balance.com_projection, 0.008, COM_COLOR)
        self._sphere("zmp_model", None if balance is None else balance.zmp_model, 0.008, ZMP_MODEL_COLOR)
        self._sphere("zmp_measured", None if balance is None else balance.zmp_measured, 0.008, ZMP_MEASURED_COLOR)
        polygon = None if balance is None or len(balance.polygon) < 2 else balance.polygon
        if polygon is None:
            if "polygon" in self._markers:
                self._markers["polygon"].visible = False
            return
        if self._polygon is None or self._polygon.shape != polygon.shape or not np.allclose(self._polygon, polygon):
            self._polygon = polygon
            segments = np.stack([polygon, np.roll(polygon, -1, axis=0)], axis=1) + np.array([0.0, 0.0, 0.001])
            self._markers["polygon"] = self.server.scene.add_line_segments(
                "/markers/support_polygon", points=segments, colors=POLYGON_COLOR, thickness=3,
                thickness_units="screen")
        self._markers["polygon"].visible = True

    def _show_collision(self, collision: CollisionSample | None) -> None:
        pairs = []
        if collision is not None and self.urdf is not None:
            pairs = [(a, b, COLLIDING_COLOR) for a, b, _d in collision.colliding]
            if collision.closest is not None and not collision.in_collision:
                pairs.append((collision.closest[0], collision.closest[1], CLOSEST_COLOR))
        points, colors = [], []
        for a, b, color in pairs:
            try:
                ends = [self._link_position(link) for link in (a, b)]
            except (KeyError, ValueError):
                continue  # a link this URDF does not have
            points.append(ends)
            colors.append([color, color])
        if points:
            self._markers["pairs"] = self.server.scene.add_line_segments(
                "/markers/link_pairs", points=np.array(points), colors=np.array(colors, dtype=np.uint8),
                thickness=4, thickness_units="screen")
        elif "pairs" in self._markers:
            self._markers["pairs"].visible = False

    def _link_position(self, link: str) -> np.ndarray:
        """World position of a link's origin (the base pose times yourdfpy's forward kinematics)."""
        assert self.urdf is not None
        local = self.urdf.get_transform(frame_to=link)[:3, 3]
        rotation = viser.transforms.SO3(np.asarray(self._root.wxyz)).as_matrix()
        return np.asarray(self._root.position) + rotation @ local

    def _record_margin(self, frame: Frame) -> None:
        if frame.balance is None or self._fixed_plot:
            return
        self._margins.append((frame.time, 1000.0 * frame.balance.margin))
        while self._margins and self._margins[0][0] < frame.time - MARGIN_HISTORY:
            self._margins.popleft()
        if abs(frame.time - self._last_plot) >= PLOT_PERIOD and len(self._margins) >= 2:
            self._last_plot = frame.time
            t, v = np.array(self._margins).T
            self.margin_plot.data = (t, v)
            self.margin_plot.visible = True

    def set_margin_history(self, t: np.ndarray, margin_mm: np.ndarray) -> None:
        """The whole margin curve at once (a replay shows the recording's)."""
        if len(t) >= 2:
            self.margin_plot.data = (np.asarray(t, dtype=float), np.asarray(margin_mm, dtype=float))
            self.margin_plot.visible = True
            self._fixed_plot = True

    def _status(self, frame: Frame, unknown: list[str]) -> str:
        lines = [f"**{self.robot_name or 'robot'}** at robot time {frame.time:.2f} s"]
        lines.append(f"unknown (stale) joints: {', '.join(unknown)}" if unknown and self.robot is not None
                     else "all joint readings known")
        if frame.balance is not None:
            margin = frame.balance.margin
            margin_text = f"{1000.0 * margin:.1f} mm" if math.isfinite(margin) else "no support"
            lines.append(f"CoM margin {margin_text}, {'stable' if frame.balance.stable else '**not stable**'}")
        else:
            lines.append("no `balance_state` (balance monitor not running)")
        if frame.collision is not None:
            if frame.collision.in_collision:
                pairs = ", ".join(f"{a}/{b} {1000.0 * d:.1f} mm" for a, b, d in frame.collision.colliding[:3])
                lines.append(f"**self-collision**: {pairs}")
            elif frame.collision.closest is not None:
                a, b, d = frame.collision.closest
                lines.append(f"closest pair {a}/{b}: {1000.0 * d:.1f} mm")
        else:
            lines.append("no `self_collision_state` (checker not running)")
        return "  \n".join(lines)
