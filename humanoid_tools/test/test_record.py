"""``humanoid record``: bags read back by rosbags (a reader we did not write), messages not
lost, QoS matched to the publishers, and the bad cases (existing directory, unknown topic,
killed recorder, full disk). The recorder runs as the real command in its own process;
this test process publishes with rclpy.

The repairs (``humanoid record --reindex``) and ``humanoid plot`` run through the command's
entry point in this process (:func:`cli_entry.entry_point`: its exit status and what it
writes to stdout and stderr, no interpreter start and imports paid again per run): what
they are checked for is their output and the files they leave, not their process. The
repair on a full disk keeps a process of its own (its file size limit must not be this
process's); the recorder and the refused directory are the real command's."""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import rclpy
import yaml
from bag_messages import read_bag
from cli_entry import entry_point
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from humanoid_bringup import main
from humanoid_control.ros import poll_until
from humanoid_interfaces.msg import BalanceState

pytestmark = pytest.mark.system

JOINTS = ["a_joint", "b_joint", "c_joint"]


def under_a_size_limit(limit: int | None) -> tuple[list[str], Callable[[], None] | None]:
    """The interpreter and the ``preexec_fn`` of a process under a file size limit
    (``RLIMIT_FSIZE``, a full disk as the recorder's writes see it: EFBIG; none for ``None``).
    The interpreter writes no bytecode cache (``-B``): a module it was the first to import left
    a cache file cut at the limit ("marshal data too short"), and every later import of that
    module, in any process of the environment, failed."""
    if limit is None:
        return [sys.executable], None
    return [sys.executable, "-B"], lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


class Recording:
    """``humanoid record`` in its own process; its output collected as it comes."""

    def __init__(self, bag: Path, *args: str, file_size_limit: int | None = None) -> None:
        python, limit = under_a_size_limit(file_size_limit)
        self.process = subprocess.Popen([*python, "-m", "humanoid_bringup.cli", "record", "--output", str(bag), *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=limit)
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._threads = [threading.Thread(target=lambda s=s, d=d: d.extend(s), daemon=True)
                         for s, d in ((self.process.stdout, self.stdout), (self.process.stderr, self.stderr))]
        for thread in self._threads:
            thread.start()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout)
        for thread in self._threads:
            thread.join(5.0)
        return code

    def wait_for_output(self, pattern: str, timeout: float) -> None:
        """Until the recorder printed a line matching ``pattern`` (a regular expression); fails
        with all it printed if it exits first or ``timeout`` (s) passes."""
        deadline = time.monotonic() + timeout
        while not re.search(pattern, self.output):
            assert self.process.poll() is None and time.monotonic() < deadline, \
                f"{pattern!r} not printed (exit code {self.process.poll()}); the recorder printed: {self.output!r}"
            time.sleep(0.05)

    @property
    def output(self) -> str:
        return "".join(self.stdout) + "".join(self.stderr)


@pytest.fixture
def node():
    rclpy.init()
    node = Node("record_test_publisher")
    yield node
    node.destroy_node()
    rclpy.try_shutdown()


@pytest.fixture
def recordings():
    started: list[Recording] = []
    yield lambda *a, **k: started.append(Recording(*a, **k)) or started[-1]
    for recording in started:
        if recording.process.poll() is None:
            recording.process.kill()
            recording.process.wait(10)


def joint_state(i: int, stale: bool = False) -> JointState:
    msg = JointState(name=JOINTS, position=[0.01 * i, math.nan if stale else -0.01 * i, 1.0])
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(i * 5_000_000, 1_000_000_000)
    msg.header.frame_id = str(i)
    return msg


def wait_subscribed(publisher, recording: Recording) -> None:
    poll_until(lambda: publisher.get_subscription_count() > 0 or recording.process.poll() is not None,
               "the recorder subscribing", timeout=60.0)
    assert recording.process.poll() is None, recording.output


def custom_counts(path: Path) -> tuple[dict, dict]:
    info = yaml.safe_load((path / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    return json.loads(info["custom_data"]["received_messages"]), json.loads(info["custom_data"]["written_messages"])


def test_every_message_is_in_the_bag_with_its_type_qos_and_definition(node, recordings, tmp_path):
    bag = tmp_path / "bag"
    latched = node.create_publisher(String, "/rec_test/description",
                                    QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    latched.publish(String(data="<robot name='x'/>"))  # before the recorder exists: it must get it anyway
    states = node.create_publisher(JointState, "/rec_test/joint_states", 10)
    balance = node.create_publisher(BalanceState, "/rec_test/balance_state",
                                    QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
    recording = recordings(bag, "--topics", "rec_test/joint_states", "/rec_test/balance_state",
                           "/rec_test/description", "/rec_test/no_such_topic")
    wait_subscribed(states, recording)
    poll_until(lambda: balance.get_subscription_count() > 0, "the recorder subscribing to balance_state", 60.0)
    count = 400
    for i in range(count):  # as fast as rclpy publishes: a burst the recorder must absorb
        states.publish(joint_state(i, stale=i % 50 == 7))
        if i % 20 == 0:
            balance.publish(BalanceState(stability_margin=0.001 * i, stable=True))
    assert states.wait_for_all_acked(Duration(seconds=60))
    # one warning names every topic still without a publisher when the grace period ends
    # (on a busy machine, discovery may not have found the others yet either)
    recording.wait_for_output(r"no publisher for [^\n]*/rec_test/no_such_topic\b", timeout=60.0)
    assert recording.stop() == 0, recording.output

    topics, messages = read_bag(bag)
    assert set(topics) == {"/rec_test/joint_states", "/rec_test/balance_state", "/rec_test/description"}
    assert topics["/rec_test/joint_states"].msgtype == "sensor_msgs/msg/JointState"
    assert topics["/rec_test/balance_state"].msgtype == "humanoid_interfaces/msg/BalanceState"
    assert topics["/rec_test/joint_states"].msgcount == count
    assert [int(m.header.frame_id) for m in messages["/rec_test/joint_states"]] == list(range(count))
    stale = [m for m in messages["/rec_test/joint_states"] if int(m.header.frame_id) % 50 == 7]
    assert stale and all(math.isnan(m.position[1]) and m.position[2] == 1.0 for m in stale)  # NaN kept as NaN
    assert [m.data for m in messages["/rec_test/description"]] == ["<robot name='x'/>"]
    # best effort is not reliable: what arrived is recorded, in order
    margins = [m.stability_margin for m in messages["/rec_test/balance_state"]]
    assert margins == sorted(margins) and len(margins) >= 1
    assert topics["/rec_test/balance_state"].ext.offered_qos_profiles[0].reliability.name == "BEST_EFFORT"
    assert topics["/rec_test/description"].ext.offered_qos_profiles[0].durability.name == "TRANSIENT_LOCAL"
    received, written = custom_counts(bag)
    assert received == written
    assert written["/rec_test/joint_states"] == count
    assert "/rec_test/joint_states" in recording.output and f"{count}" in recording.output  # the printed counts


def test_an_existing_directory_is_refused_and_kept(tmp_path):
    existing = tmp_path / "results"
    existing.mkdir()
    (existing / "notes.txt").write_text("mine")
    for extra in ([], ["--overwrite"]):
        result = subprocess.run([sys.executable, "-m", "humanoid_bringup.cli", "record", "--output", str(existing),
                                 *extra], capture_output=True, text=True, timeout=120)
        assert result.returncode == 2
        assert str(existing) in result.stderr
        assert (existing / "notes.txt").read_text() == "mine"


def publish_until_sealed(node, recording: Recording, bag: Path, count: int) -> int:
    """Publish ``count`` messages, then wait until the recorder has written some to disk;
    returns how many were published."""
    states = node.create_publisher(JointState, "/rec_test/joint_states", 10)
    wait_subscribed(states, recording)
    for i in range(count):
        states.publish(joint_state(i))
    assert states.wait_for_all_acked(Duration(seconds=60))
    mcap = bag / f"{bag.name}.mcap"
    poll_until(lambda: mcap.exists() and mcap.stat().st_size > 4096, "chunks written to the MCAP file", 60.0)
    return count


def test_a_killed_recorder_leaves_a_bag_that_reindex_repairs(node, recordings, tmp_path):
    bag = tmp_path / "bag"
    recording = recordings(bag, "--topics", "/rec_test/joint_states")
    published = publish_until_sealed(node, recording, bag, 300)
    recording.stop(signal.SIGKILL)
    assert not (bag / "metadata.yaml").exists()
    with pytest.raises(Exception, match="metadata"):
        Reader(bag).open()

    repaired = entry_point("record", "--reindex", bag)
    assert repaired.returncode == 0, repaired.stderr
    topics, messages = read_bag(bag)
    sequence = [int(m.header.frame_id) for m in messages["/rec_test/joint_states"]]
    assert sequence == list(range(len(sequence))) and 0 < len(sequence) <= published  # a prefix, none missing
    assert topics["/rec_test/joint_states"].msgtype == "sensor_msgs/msg/JointState"


def cdr_joint_state(i: int) -> bytes:
    """``joint_state(i)`` serialized as DDS delivers it, by rosbags (rclpy's serialize_message
    of these Kilted wheels appends bytes that strict CDR readers refuse)."""
    store = get_typestore(Stores.ROS2_JAZZY)
    types = store.types
    msg = joint_state(i)
    stamp = types["builtin_interfaces/msg/Time"](sec=msg.header.stamp.sec, nanosec=msg.header.stamp.nanosec)
    header = types["std_msgs/msg/Header"](stamp=stamp, frame_id=msg.header.frame_id)
    state = types["sensor_msgs/msg/JointState"](header=header, name=list(msg.name), position=np.array(msg.position),
                                                velocity=np.array([]), effort=np.array([]))
    return bytes(store.serialize_cdr(state, "sensor_msgs/msg/JointState"))


def messages_on_disk(mcap: Path) -> int:
    """Messages in the chunks of an MCAP file still being written (read by the mcap library
    up to where the file ends for now)."""
    from mcap.stream_reader import StreamReader

    count = 0
    try:
        with mcap.open("rb") as file:
            for record in StreamReader(file, emit_chunks=False).records:
                count += type(record).__name__ == "Message"
    except Exception:  # the unfinished end of the file (EndOfFile, a truncated record ...)
        pass
    return count


def test_a_full_disk_stops_writing_keeps_what_was_written_and_says_how_to_repair(node, recordings, tmp_path):
    bag = tmp_path / "bag"
    recording = recordings(bag, "--topics", "/rec_test/joint_states", file_size_limit=48 * 1024)
    count, first = 1000, 150  # about 100 kB, twice what the "disk" takes; a burst within the queue_depth
    states = node.create_publisher(JointState, "/rec_test/joint_states", count)  # the burst kept until acked
    wait_subscribed(states, recording)
    for i in range(first):
        states.publish(joint_state(i))
    assert states.wait_for_all_acked(Duration(seconds=60))
    mcap = bag / f"{bag.name}.mcap"
    poll_until(lambda: messages_on_disk(mcap) >= first, f"the first {first} messages sealed to disk", 60.0)
    for i in range(first, count):
        states.publish(joint_state(i))
    assert states.wait_for_all_acked(Duration(seconds=60))
    poll_until(lambda: "failed" in recording.output, "the recorder reporting the failed write", 60.0)
    assert recording.stop() == 1
    assert f"humanoid record --reindex {bag}" in recording.output
    assert "received but not written" in recording.output
    reported = re.search(r"^/rec_test/joint_states\s+(\d+)\s+(\d+)\s", recording.output, re.MULTILINE)
    assert reported is not None, recording.output

    repaired = entry_point("record", "--reindex", bag)
    assert repaired.returncode == 0, repaired.stderr
    _topics, messages = read_bag(bag)
    sequence = [int(m.header.frame_id) for m in messages["/rec_test/joint_states"]]
    assert sequence == list(range(len(sequence))) and first <= len(sequence) < count
    assert (int(reported[1]), int(reported[2])) == (count, len(sequence))  # the counts printed are the bag's

_FAILED_SEAL = """
import sys
from pathlib import Path
from rosbags.typesys import Stores, get_typestore
from humanoid_tools.recording import BagWriter

store = get_typestore(Stores.ROS2_JAZZY)
String = store.types["std_msgs/msg/String"]
writer = BagWriter(Path(sys.argv[1]), seal_period=3600.0)
topic = writer.add_topic("/chatter", "std_msgs/msg/String", store.generate_msgdef("std_msgs/msg/String")[0],
                         store.hash_rihs01("std_msgs/msg/String"))
payload = lambda i: store.serialize_cdr(String(data=f"{i:06d}" + "x" * 90), "std_msgs/msg/String")
for i in range(200):  # about 20 kB, sealed: on disk
    writer.write(topic, i, payload(i))
writer.seal_period = 0.0
writer.seal_if_due()
writer.seal_period = 3600.0
for i in range(200, 800):  # about 60 kB pending, more than the 48 kB the file may take
    writer.write(topic, i, payload(i))
try:
    writer.seal_period = 0.0
    writer.seal_if_due()
except OSError as error:
    print(writer.counts()["/chatter"], error.errno)
"""


def test_messages_in_a_chunk_that_failed_to_reach_the_disk_are_not_counted_as_written(tmp_path):
    """A write that fails at the seal (the recorder's writer thread may have taken every message
    into the pending chunk first) loses that chunk: only the sealed messages are written, and
    counted so (the recorder's count after a failure: what the repair keeps)."""
    from humanoid_tools.recording import recoverable_counts

    bag = tmp_path / "bag"

    python, limit = under_a_size_limit(48 * 1024)
    result = subprocess.run([*python, "-c", _FAILED_SEAL, str(bag)], capture_output=True, text=True, timeout=120,
                            preexec_fn=limit)
    assert result.returncode == 0, result.stderr
    accepted, errno = (int(v) for v in result.stdout.split())
    assert (accepted, errno) == (800, 27)  # EFBIG
    sealed = recoverable_counts(bag)["/chatter"]
    repaired = entry_point("record", "--reindex", bag)
    assert repaired.returncode == 0, repaired.stderr
    _topics, messages = read_bag(bag)
    assert sealed == len(messages["/chatter"]) == 200


def test_log_times_keep_the_delivery_order_when_the_clock_steps_back(node, tmp_path, monkeypatch):
    """Readers order a bag by log time, and the bag must keep each topic's delivery order
    (a reliable topic's publication order): a log time is the recorder's clock at delivery,
    raised to the topic's previous one when the wall clock stepped back meanwhile (an NTP
    correction, here between messages 2 and 3)."""
    from io import StringIO

    from humanoid_tools.recording import Recorder, RecorderParameters
    from humanoid_tools.recording import recorder as recording

    topic = "/rec_test/clock_back"
    node.create_publisher(JointState, topic, 10)
    recorder = Recorder(node, RecorderParameters(output=str(tmp_path / "bag"), topics=(topic,)),
                        out=StringIO(), err=StringIO())
    poll_until(lambda: topic in recorder.summary.types or recorder.discover(), "the recorder subscribing", 10.0)
    subscription = next(s for s in node.subscriptions if s.topic_name == topic)
    clock_ns = iter([1_000, 2_000, 9_000, 3_000, 4_000])  # the clock's reading at each delivery
    monkeypatch.setattr(recording.time, "time_ns", lambda: next(clock_ns))
    for i in range(5):
        subscription.callback(cdr_joint_state(i))
    monkeypatch.undo()
    summary = recorder.finish()

    assert summary.written == {topic: 5}
    _topics, messages = read_bag(tmp_path / "bag")
    assert [int(m.header.frame_id) for m in messages[topic]] == list(range(5))


def write_bag(path: Path, count: int) -> None:
    """A complete bag of ``count`` strings (about 100 bytes each), by the recording's writer."""
    from humanoid_tools.recording import BagWriter

    store = get_typestore(Stores.ROS2_JAZZY)
    writer = BagWriter(path)
    topic = writer.add_topic("/chatter", "std_msgs/msg/String", store.generate_msgdef("std_msgs/msg/String")[0],
                             store.hash_rihs01("std_msgs/msg/String"))
    for i in range(count):
        writer.write(topic, i, bytes(store.serialize_cdr(store.types["std_msgs/msg/String"](data=f"{i:06d}" + "x" * 90),
                                                          "std_msgs/msg/String")))
    writer.close()


def test_reindex_on_a_full_disk_says_so_and_leaves_the_bag_as_it_was(tmp_path):
    """The repaired copy needs as much room as the bag: a disk that has less (here a file size
    limit, EFBIG as a full disk's ENOSPC) must cost nothing of the bag."""
    bag = tmp_path / "bag"
    write_bag(bag, 2000)  # about 200 kB
    before = {file.name: file.read_bytes() for file in bag.iterdir()}

    python, limit = under_a_size_limit(64 * 1024)
    result = subprocess.run([*python, "-m", "humanoid_bringup.cli", "record", "--reindex", str(bag)],
                            capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert result.returncode == 2, result.stderr
    size = (bag / "bag.mcap").stat().st_size
    assert result.stderr.splitlines() == [
        f"humanoid: error: cannot write the repaired copy of {bag} (File too large; it needs about {size / 1e6:.1f} MB "
        f"free beside the bag): the bag is left as it was"]
    assert {file.name: file.read_bytes() for file in bag.iterdir()} == before
    assert [path.name for path in tmp_path.iterdir()] == ["bag"]  # no half-written copy left beside it


def test_plot_of_a_damaged_bag_reads_the_rest_and_says_what_it_could_not_read(node, recordings, tmp_path):
    """A recorded bag whose second chunk was overwritten on the disk: the figures are drawn from
    the other chunks, stderr names the chunk and the messages lost, and the exit status is 1."""
    from mcap.reader import make_reader

    from humanoid_tools.plots import load

    bag, bursts, size = tmp_path / "bag", 3, 200
    recording = recordings(bag, "--topics", "/joint_states")
    states = node.create_publisher(JointState, "/joint_states", size)
    wait_subscribed(states, recording)
    mcap = bag / "bag.mcap"
    for burst in range(bursts):  # each burst sealed on the disk before the next: chunks of their own
        for i in range(burst * size, (burst + 1) * size):
            states.publish(joint_state(i))
        assert states.wait_for_all_acked(Duration(seconds=60))
        poll_until(lambda n=(burst + 1) * size: messages_on_disk(mcap) >= n, "the burst sealed to disk", 60.0)
    assert recording.stop() == 0, recording.output
    with mcap.open("rb") as stream:
        chunks = sorted(make_reader(stream).get_summary().chunk_indexes,
                        key=lambda c: (c.message_start_time, c.chunk_start_offset))
    assert len(chunks) >= bursts
    damaged = chunks[1]
    in_damaged = sum(1 for _ in make_reader(mcap.open("rb")).iter_messages(
        starting_at=damaged.message_start_time, ending_at=damaged.message_end_time))
    data = bytearray(mcap.read_bytes())
    middle = damaged.chunk_start_offset + damaged.chunk_length // 2
    data[middle:middle + 16] = bytes(b ^ 0xFF for b in data[middle:middle + 16])
    mcap.write_bytes(data)

    result = entry_point("plot", bag, "--out", tmp_path / "plots")
    assert result.returncode == 1, result.stderr
    errors = result.stderr.splitlines()
    assert errors[0].startswith(f"humanoid plot: not read: bag.mcap: chunk 2 of {len(chunks)} (bytes "
                                f"{damaged.chunk_start_offset}-{damaged.chunk_start_offset + damaged.chunk_length}) "
                                f"cannot be read")
    read = bursts * size - in_damaged
    assert errors[1:] == [f"humanoid plot: not read: /joint_states: {read} of its {bursts * size} messages read",
                          f"humanoid plot: error: {bag} is damaged: the figures show only what could be read "
                          f"(exit status 1)"]
    assert str(tmp_path / "plots" / "summary.png") in result.stdout.splitlines()
    experiment = load(bag)  # what the figures show: the messages read, in order, the damaged chunk's missing
    assert (experiment.topics, experiment.indexed) == ({"/joint_states": read}, {"/joint_states": bursts * size})
    assert len(experiment.joints[0].measured) == read
    help_text = io.StringIO()
    with contextlib.redirect_stdout(help_text), pytest.raises(SystemExit) as done:  # argparse's --help
        main(["plot", "--help"])
    assert done.value.code == 0
    help_text = help_text.getvalue()
    assert "exit status: 0 when every message was read; 1 when the bag is damaged" in " ".join(help_text.split())


def test_bags_are_opened_with_ruamels_c_parser():
    """rosbags parses a bag's metadata and every topic's QoS with ruamel.yaml's safe loader:
    without ruamel.yaml.clib it falls back to the pure-Python parser, which made opening the
    two bags of a ``humanoid compare`` take a third of its CPU (requirements.in)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.main import CParser

    assert CParser is not None and YAML(typ="safe").Parser is CParser
