"""``humanoid view`` in a real headless browser (Debian's chromium, software WebGL), driven
over the Chrome DevTools Protocol: the page shows the robot, and a joint slider moves the
simulated joint.

The slider is moved *in the page*: the test clicks the number box of the joint's slider
and types a value with real key events (CDP ``Input`` domain), as a user would. That way
the browser client, its websocket to the server, the server's slider callback, the
``joint_commands`` publisher and the simulation are all on the path the test checks; setting
the slider through viser's Python API would skip the page and the websocket.

"Shows the robot": a screenshot before the robot exists (the page with its ground grid
only) is compared with screenshots once ``robot_description`` arrived: the robot must
change a visible share of the view's centre (pixels that are not background).
"""

from __future__ import annotations

import base64
import io
import json
import math
import shutil
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from humanoid_control.ros import RobotClient, RobotClientError, poll_until
from humanoid_core.processes import Graph
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--use-gl=swiftshader", "--enable-unsafe-swiftshader",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--no-first-run", "--disable-quic", "--window-size=1000,700", "--remote-debugging-port=0"]
JOINT, TARGET_DEG = "head_joint1", 30.0
ROBOT_SHARE = 0.03  # of the view's centre: the robot covers about a tenth of it
TIMEOUT = 300.0  # software rendering on a loaded 2-core machine is slow
#: Times the slider is typed into while the view says its robot does not hear it yet (the
#: view waits humanoid_tools.view.live.MATCH_WAIT for that, and a loaded machine can take longer).
SLIDER_TRIES = 3


class Browser:
    """Headless chromium and one page, over the DevTools protocol (a websocket)."""

    def __init__(self, profile: Path) -> None:
        from websockets.sync.client import connect

        executable = shutil.which("chromium")
        if executable is None:
            pytest.fail("Debian's chromium is not installed: `make setup` installs it as root "
                        "(scripts/setup_browser.sh), or run `apt-get install -y chromium`")
        self.process = subprocess.Popen([executable, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        poll_until(lambda: port_file.exists() and port_file.read_text().strip(), "chromium's debugging port",
                   TIMEOUT)
        port = int(port_file.read_text().split()[0])
        pages = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30).read())
        page = next(p for p in pages if p["type"] == "page")
        self.socket = connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=30)
        self._id = 0

    def call(self, method: str, **params):
        self._id += 1
        self.socket.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            answer = json.loads(self.socket.recv(timeout=TIMEOUT))
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]

    def evaluate(self, expression: str):
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def screenshot(self) -> np.ndarray:
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        return imread(io.BytesIO(data))[:, :, :3]

    def click(self, x: float, y: float) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def type(self, text: str) -> None:
        for key, code in (("a", "KeyA"),):  # select what the box holds (Ctrl+A) ...
            self.call("Input.dispatchKeyEvent", type="keyDown", key=key, code=code, modifiers=2,
                      windowsVirtualKeyCode=65)
            self.call("Input.dispatchKeyEvent", type="keyUp", key=key, code=code, modifiers=2,
                      windowsVirtualKeyCode=65)
        self.call("Input.insertText", text=text)  # ... and type over it
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13)

    def close(self) -> None:
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


class View:
    """``humanoid view`` in its own process; its stdout lines collected as they come."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "humanoid_bringup.cli", "view", "--port", "0", *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.errors: list[str] = []
        for stream, sink in ((self.process.stdout, self.lines), (self.process.stderr, self.errors)):
            threading.Thread(target=lambda s=stream, k=sink: k.extend(s), daemon=True).start()

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
        return self.process.wait(60)


def centre(image: np.ndarray) -> np.ndarray:
    """The middle of the 3-D view (left of the control panel, below the notifications)."""
    height, width, _ = image.shape
    return image[int(0.2 * height):int(0.95 * height), int(0.2 * width):int(0.68 * width)]


def changed_share(before: np.ndarray, after: np.ndarray) -> float:
    return float(np.mean(np.abs(centre(after) - centre(before)).max(axis=2) > 0.08))


NUMBER_BOX = """(() => {{
  const label = [...document.querySelectorAll('label')].find(l => l.textContent.trim() === '{joint}');
  if (!label) return null;
  const slider = document.getElementById(label.htmlFor);  // the slider; its number box is beside it
  const box = slider && slider.parentElement.querySelector('input:not([type=hidden])');
  if (!box) return null;
  box.scrollIntoView({{block: 'center'}});
  const r = box.getBoundingClientRect();
  return [r.x + r.width / 2, r.y + r.height / 2];
}})()"""


def test_the_page_shows_the_robot_and_a_slider_moves_the_simulated_joint(tmp_path):
    view = View("--keyframes-dir", str(tmp_path))
    browser = None
    graph = None
    try:
        browser = Browser(tmp_path / "chromium")  # chromium starts while the view starts
        poll_until(lambda: view.lines or view.process.poll() is not None, "the view's URL", TIMEOUT)
        url = view.lines[0].strip()
        assert url.startswith("http://127.0.0.1:"), view.lines + view.errors  # loopback only, URL first
        browser.call("Page.navigate", url=url)
        poll_until(lambda: browser.evaluate("document.querySelector('canvas') !== null"), "the page's 3-D canvas",
                   TIMEOUT)
        (empty,) = poll_until(Settled(browser), "the empty scene rendering", TIMEOUT)

        # the default graph on the fast physics profile (docs/physics_profiles.md): the page is
        # the property, not the physics; it halves the standing robot's loop
        graph = Graph(sim_nodes("hoap2", physics_profile="fast"), log_dir=tmp_path / "logs").start()
        with RobotClient("view_test_client") as client:
            client.wait_for_joint_states(TIMEOUT)
            poll_until(lambda: any(line.startswith("robot loaded: hoap2") for line in view.lines),
                       "the view loading robot_description", TIMEOUT)
            (shown,) = poll_until(lambda: [shot] if changed_share(empty, shot := browser.screenshot()) > ROBOT_SHARE
                                  else None, "the robot in the screenshot", TIMEOUT)
            (tmp_path / "robot.png").write_bytes(base64.b64decode(browser.call("Page.captureScreenshot")["data"]))
            assert changed_share(empty, shown) > ROBOT_SHARE

            box = poll_until(lambda: browser.evaluate(NUMBER_BOX.format(joint=JOINT)), f"the {JOINT} slider",
                             TIMEOUT)
            before = client.current_positions()[JOINT]
            for attempt in range(1, SLIDER_TRIES + 1):
                told = len(view.errors)
                browser.click(*box)
                browser.type(f"{TARGET_DEG:g}")
                try:
                    outcome = poll_until(lambda since=told: moved(client) or refused(view.errors[since:]),
                                         f"{JOINT} reaching {TARGET_DEG:g} deg (from {math.degrees(before):.1f})",
                                         TIMEOUT)
                except RobotClientError as error:
                    raise AssertionError(f"{error}; the view said: {''.join(view.errors[told:])[-3000:]}") from None
                if outcome == "moved":
                    break
                assert attempt < SLIDER_TRIES, f"the view sent no command in {SLIDER_TRIES} tries: {outcome}"
    finally:
        if browser is not None:
            browser.close()
        view.process.terminate()  # once: the view ends while the graph stops
        if graph is not None:
            graph.stop()
        assert view.process.wait(60) == 0, "".join(view.errors)[-3000:]


def moved(client: RobotClient) -> str | None:
    """"moved" once the simulated joint is at the slider's value."""
    return "moved" if abs(client.positions()[JOINT] - math.radians(TARGET_DEG)) < math.radians(1.0) else None


def refused(said: list[str]) -> str | None:
    """What the view said when it could not send the slider's command (its robot did not hear
    it yet: the page says so, and a user moves the slider again), or None."""
    return next((line.strip() for line in said if f"{JOINT} not moved" in line), None)


class Settled:
    """Polled: ``[screenshot]`` once two screenshots in a row are the same (the page is drawn)."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.previous: np.ndarray | None = None

    def __call__(self) -> list[np.ndarray] | None:
        shot = self.browser.screenshot()
        same = self.previous is not None and np.array_equal(self.previous, shot)
        self.previous = shot
        return [shot] if same else None
