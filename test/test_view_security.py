"""``humanoid view`` takes nothing it should not from a web page, with the graph running as
a user runs it (the ``humanoid sim`` graph, ``humanoid view`` in its own process).

The tests speak to the view as a page's script can: viser's protocol over a websocket,
with the ``websockets`` client viser itself uses, sending what a script may send (any
``Origin`` a non-browser client claims, any value). The real page in a real browser is
``test_view_browser.py``; here the point is what the server accepts.

- only the page of this run connects: the printed address holds a per-run token, and a
  websocket must come from the page's own origin;
- every slider value is checked on the server: NaN, infinities, values beyond the joint's
  limits and non-numbers are refused with a message in the page and one line in the log,
  and nothing reaches ``joint_commands``; a message viser cannot read is one line too;
- the keyframe file named in the page is a file of ``--keyframes-dir``: nothing is
  written anywhere else, and no file other than a keyframe file is overwritten;
- ``--host 0.0.0.0`` prints that it listens on every interface, the addresses the page is
  reached at, and a warning.
"""

from __future__ import annotations

import math
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest
import viser
import zstandard
from sensor_msgs.msg import JointState
from test_view_browser import TIMEOUT, View
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from humanoid_control.ros import RobotClientError, poll_until
from humanoid_core.motion import read_keyframes
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

#: The default graph, as `humanoid sim --physics fast` starts it: what a page may send is the
#: property, not the physics; the fast profile (docs/physics_profiles.md) halves what the
#: standing robot's loop costs while the module's tests run.
GRAPH = sim_nodes("hoap2", physics_profile="fast")
JOINT, TARGET_DEG = "larm_joint4", -30.0  # the left elbow: limits [-115, 1] deg
#: s: how long a set from the page may take to show in joint_states before it is set again.
RESEND_AFTER = 10.0
CAMERA = {"type": "ViewerCameraMessage", "wxyz": [1.0, 0.0, 0.0, 0.0], "position": [1.0, 1.0, 1.0], "fov": 1.0,
          "near": 0.01, "far": 100.0, "image_height": 600, "image_width": 800, "look_at": [0.0, 0.0, 0.0],
          "up_direction": [0.0, 0.0, 1.0]}


class PageClient:
    """viser's protocol over a websocket, as the page's script speaks it: it reads the
    widgets the server sends and sets their values."""

    def __init__(self, page_url: str, origin: str | None) -> None:
        websocket_url = page_url.replace("http://", "ws://", 1).split("?")[0].rstrip("/")  # as viser's client
        self.socket = connect(websocket_url, origin=origin, subprotocols=[f"viser-v{viser.__version__}"],
                              open_timeout=TIMEOUT, max_size=None)
        self._lock = threading.Lock()
        self.messages: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.socket.send(msgspec.msgpack.encode(CAMERA))  # viser takes a client's input once it has its camera

    def _read(self) -> None:
        """Each frame: 8 bytes size, 8 bytes compressed size, zstd msgpack (then binary data)."""
        decompressor = zstandard.ZstdDecompressor()
        try:
            for frame in self.socket:
                size, packed = int.from_bytes(frame[:8], "little"), int.from_bytes(frame[8:16], "little")
                window = msgspec.msgpack.decode(decompressor.decompress(frame[16:16 + packed], max_output_size=size))
                with self._lock:
                    self.messages.extend(window["messages"])
        except Exception:  # the connection closed
            return

    def widget(self, label: str) -> str:
        """The uuid of the page's widget labelled ``label``."""

        def find() -> str | None:
            with self._lock:
                return next((m["uuid"] for m in self.messages
                             if m["type"].startswith("Gui") and m.get("props", {}).get("label") == label), None)

        return poll_until(find, f"the page's widget {label!r}", TIMEOUT)

    def set(self, label: str, value: object) -> None:
        """What the page sends when the user changes a widget (a button: clicks it)."""
        self.socket.send(msgspec.msgpack.encode({"type": "GuiUpdateMessage", "uuid": self.widget(label),
                                                 "updates": {"value": value}}))

    def texts(self) -> str:
        """Every text the page was sent (markdown, notifications), one per line."""
        found: list[str] = []

        def collect(item: object) -> None:
            if isinstance(item, str):
                found.append(item)
            elif isinstance(item, dict):
                for value in item.values():
                    collect(value)
            elif isinstance(item, list | tuple):
                for value in item:
                    collect(value)

        with self._lock:
            collect(self.messages)
        return "\n".join(found)

    def close(self) -> None:
        self.socket.close()


def outbound_address() -> str | None:
    """This computer's address on its default route (None without one); no packet is sent."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("203.0.113.1", 9))
        except OSError:
            return None
        return probe.getsockname()[0]


def test_host_0_0_0_0_prints_every_address_it_listens_on_and_warns():
    """First in the module, before its graph starts: this view only serves (it never loads a
    robot), which is all the check needs."""
    view = View("--host", "0.0.0.0")
    expected = outbound_address()
    try:
        poll_until(lambda: log_lines(view, "warning: --host 0.0.0.0 is reachable from the network")
                   or view.process.poll() is not None, "the warning", TIMEOUT)
        poll_until(lambda: len(view.lines) >= 2 and (expected is None or any(f"http://{expected}:" in line
                                                                             for line in view.lines)),
                   f"the addresses (one on {expected})", TIMEOUT)
        first, listening, *others = (line.strip() for line in view.lines)
        assert first.startswith("http://127.0.0.1:"), view.lines
        port = int(first.split(":")[2].split("/")[0])
        assert listening.startswith(f"listening on every network interface (0.0.0.0:{port})"), listening
        token = first.split("/")[3]
        urls = [line for line in others if line.startswith("http://")]
        if expected is not None:
            assert f"http://{expected}:{port}/{token}/" in urls, urls
        for url in [first, *urls]:
            assert http_status(url) == 200, url
        network = next((u for u in urls if not u.startswith(("http://127.", "http://localhost"))), first)
        PageClient(network, page_origin(network)).close()  # the page reached at that address connects
    finally:
        assert view.stop() == 0, "".join(view.errors)[-3000:]


@dataclass
class RunningView:
    """``humanoid view`` started by the tests: its output, the page's address, its keyframe folder."""

    process: View
    url: str
    folder: Path

    @property
    def errors(self) -> list[str]:
        return self.process.errors


@pytest.fixture(scope="module")
def view(request, tmp_path_factory):
    """``humanoid view`` on the running graph, saving keyframes into a folder of its own. It
    starts while the graph starts (a user may start either first), and takes the robot from
    the graph's robot_description."""
    folder = tmp_path_factory.mktemp("keyframes")
    process = View("--keyframes-dir", str(folder))
    try:
        request.getfixturevalue("module_graph")
        poll_until(lambda: any(line.startswith("robot loaded: hoap2") for line in process.lines)
                   or process.process.poll() is not None, "the view loading robot_description", TIMEOUT)
        assert process.process.poll() is None, "".join(process.errors)[-3000:]
        yield RunningView(process, process.lines[0].strip(), folder)
    finally:
        assert process.stop() == 0, "".join(process.errors)[-3000:]
        assert "Traceback" not in "".join(process.errors), "".join(process.errors)[-3000:]


@pytest.fixture(scope="module")
def command_log(module_graph, view):
    """Every message published on ``joint_commands``, by a subscription matched with the
    view's publisher (what the view sends right after is not missed)."""
    received: list[JointState] = []
    node = module_graph.node
    subscription = node.create_subscription(JointState, "joint_commands", received.append, 10)

    def matched() -> bool:
        publishers = node.get_publishers_info_by_topic("joint_commands")
        return (any(p.node_name == "humanoid_view" for p in publishers)
                and subscription.get_publisher_count() >= len(publishers))

    poll_until(matched, "joint_commands subscribed to the view's publisher", TIMEOUT)
    return received


@pytest.fixture
def commands(command_log):
    """The ``joint_commands`` messages published during the test."""
    command_log.clear()
    return command_log


def late_from_the_move(msg) -> bool:
    """A joint_commands message of the test that moves JOINT to TARGET_DEG (or a tenth of a
    degree beside it), delivered late: a loaded machine once brought one into the next test."""
    return list(msg.name) == [JOINT] and abs(math.degrees(msg.position[0]) - TARGET_DEG) < 0.2


def page_origin(url: str) -> str:
    return url.split("/", 3)[0] + "//" + url.split("/", 3)[2]


def log_lines(view: RunningView | View, text: str) -> list[str]:
    """The lines of the view's stderr that hold ``text``."""
    return [line for line in list(view.errors) if text in line]


def traceback(view: RunningView) -> str:
    """The view's stderr from its first traceback on ("" when there is none)."""
    text = "".join(view.errors)
    return text[text.index("Traceback"):][:3000] if "Traceback" in text else ""


def http_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_command_prints_one_address_the_one_that_works(view):
    """Not viser's banner too, whose address (without the token) the page refuses."""
    printed = [word for line in [*view.process.lines, *view.errors] for word in line.split() if "://" in word]
    assert printed == [view.url], printed
    assert http_status(view.url) == 200


def test_only_this_runs_page_connects_and_a_page_elsewhere_moves_nothing(view, module_graph, commands):
    url, origin = view.url, page_origin(view.url)
    for foreign, address in (("http://evil.example.com", url),  # a site the user visits
                             (f"http://rebound.example.com:{origin.rsplit(':', 1)[1]}", url),  # DNS rebinding
                             (None, url),  # not a browser
                             (origin, f"{origin}/")):  # the page's origin, without the token
        with pytest.raises(InvalidStatus) as refused:
            PageClient(address, foreign)
        assert refused.value.response.status_code == 403, (foreign, address)
    with pytest.raises(InvalidStatus):
        PageClient(url, "http://evil.example.com")  # again: refused, logged once
    # the view's stderr is read by a thread of this process: the line may come after the refusal
    refused_line = "refused a websocket opened by a page of 'http://evil.example.com'"
    poll_until(lambda: log_lines(view, refused_line), "the view's log of the refusal", TIMEOUT)
    assert len(log_lines(view, refused_line)) == 1, view.errors
    assert http_status(f"{origin}/") == 403  # the page itself only under the token
    assert http_status(url) == 200
    assert commands == []

    page = PageClient(url, origin)
    try:
        # Set again while the joint has not moved, as a user moves a slider again: a
        # joint_commands message is sent once, and a robot node that has not discovered the
        # view's just-started publisher yet never gets it (seen once in a clean-clone run on a
        # loaded machine: the one command published, the joint still at 0 after 300 s). viser
        # calls the slider back only when its value changes, so each setting alternates
        # between the target and a tenth of a degree beside it (both within the 1 deg asked).
        def reached() -> bool:
            if abs(module_graph.positions()[JOINT] - math.radians(TARGET_DEG)) < math.radians(1.0):
                return True
            if time.monotonic() >= resend_at[0]:
                page.set(JOINT, TARGET_DEG - 0.1 * (sets[0] % 2))
                sets[0] += 1
                resend_at[0] = time.monotonic() + RESEND_AFTER
            return False

        resend_at, sets = [0.0], [0]
        poll_until(reached, f"{JOINT} reaching {TARGET_DEG:g} deg, moved by this run's page", TIMEOUT)
    finally:
        page.close()


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 1e9, -1e9, 5.0, "abc"],
                         ids=["nan", "inf", "-inf", "1e9", "-1e9", "beyond the limit", "not a number"])
def test_a_value_that_is_not_a_joint_position_is_refused_with_a_message(view, module_graph, commands, value):
    page = PageClient(view.url, page_origin(view.url))
    try:
        refusals = len(log_lines(view, "refused")) + len(log_lines(view, f"{JOINT} not moved"))
        page.set(JOINT, value)
        poll_until(lambda: commands or traceback(view) or len(log_lines(view, "refused"))
                   + len(log_lines(view, f"{JOINT} not moved")) > refusals, f"the view refusing {value!r}", TIMEOUT)
        sent = [m for m in commands if not late_from_the_move(m)]
        assert sent == [], f"{value!r} reached joint_commands: {sent}"
        assert not traceback(view), traceback(view)
        if not isinstance(value, str):  # a non-number is refused by viser, before the page's callbacks
            poll_until(lambda: f"{JOINT} not moved" in page.texts(), "the refusal in the page", TIMEOUT)
    finally:
        page.close()


@pytest.mark.parametrize("frame", [b"\x00garbage", msgspec.msgpack.encode({"type": "NoSuchMessage"}), "text"],
                         ids=["not msgpack", "unknown message", "text frame"])
def test_a_message_viser_cannot_read_is_one_line_in_the_log(view, commands, frame):
    page = PageClient(view.url, page_origin(view.url))
    try:
        closed = len(log_lines(view, "connection closed"))
        page.socket.send(frame)
        poll_until(lambda: len(log_lines(view, "connection closed")) > closed or traceback(view),
                   "the view closing the connection", TIMEOUT)
        assert not traceback(view), traceback(view)
        assert [m for m in commands if not late_from_the_move(m)] == []
    finally:
        page.close()


SAVE = "save measured pose as keyframe"


def test_a_keyframe_file_outside_the_folder_is_refused_and_nothing_is_written(view, tmp_path):
    folder: Path = view.folder
    outside = tmp_path / "outside"
    outside.mkdir()
    (folder / "link.yaml").symlink_to(outside / "linked.yaml")
    other = folder / "other.yaml"
    other.write_text("not: a keyframe file\n")
    names = [str(outside / "absolute.yaml"), "../parent.yaml", f"../{outside.name}/relative.yaml",
             "sub/folder.yaml", "link.yaml", "notes.txt", "other.yaml"]
    page = PageClient(view.url, page_origin(view.url))
    try:
        for name in names:
            refused = len(log_lines(view, "not saved"))
            page.set("keyframe file", name)
            page.set(SAVE, True)
            poll_until(lambda r=refused: len(log_lines(view, "not saved")) > r or log_lines(view, "saved keyframe")
                       or any(outside.iterdir()), f"the view answering the save to {name!r}", TIMEOUT)
            assert not log_lines(view, "saved keyframe"), view.errors
            assert name in log_lines(view, "not saved")[-1], view.errors
        assert list(outside.iterdir()) == []
        assert not (tmp_path / "parent.yaml").exists() and not (folder.parent / "parent.yaml").exists()
        assert other.read_text() == "not: a keyframe file\n"
        assert len(log_lines(view, "not saved")) == len(names)
        assert "not saved" in page.texts()

        page.set("keyframe file", "poses.yaml")  # a file of the folder: saved there
        refusals, clicked = [len(log_lines(view, "not saved"))], [time.monotonic()]
        page.set(SAVE, True)

        def saved() -> bool:
            """Saved; a refused save (the view without joint readings yet, for one) is clicked
            again after a second, as a user would. A clean-clone run once waited the whole
            timeout here for a save never said, its refusals not kept: now they are shown."""
            if log_lines(view, "saved keyframe"):
                return True
            answered = len(log_lines(view, "not saved"))
            if answered > refusals[0] and time.monotonic() - clicked[0] >= 1.0:
                refusals[0], clicked[0] = answered, time.monotonic()
                page.set(SAVE, True)
            return False

        try:
            poll_until(saved, "the keyframe saved", TIMEOUT)
        except RobotClientError as error:
            raise AssertionError(f"{error}; the view's last refusals: {log_lines(view, 'not saved')[-3:]}") from None
        assert read_keyframes(folder / "poses.yaml", "hoap2").keyframe_count == 1
    finally:
        page.close()
