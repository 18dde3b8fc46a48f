"""Offload on rclpy's EventsExecutor, over real DDS: a blocking service callback holds up
none of the node's other callbacks, its answer goes out as soon as its work ends (however
quiet the node), its errors reach the awaiting task, one worker runs calls one at a time,
and spin_while does not spin round a task that waits."""

import threading
import time

import pytest
import rclpy
from rclpy.experimental import EventsExecutor
from rclpy.task import Future
from std_msgs.msg import Int32
from std_srvs.srv import Trigger

from humanoid_control.ros import Offload, poll_until, spin_while, stop_offloads

#: Generous limit (s) for anything awaited; each wait ends as soon as its condition holds.
PATIENCE = 30.0
#: s: the spinning thread's turn in these tests: far longer than any answer may take, so
#: that an answer which waited for the next turn would show.
LONG_TURN = 120.0


@pytest.fixture
def served():
    """``make(name)``: a node spun by an EventsExecutor through spin_while (with LONG_TURN) in
    a thread, and a client node spun by rclpy's own executor; both destroyed after the test."""
    rclpy.init()
    executor = EventsExecutor()
    clients = rclpy.executors.SingleThreadedExecutor()
    stop = threading.Event()
    made = []

    def make(name: str):
        node, client = rclpy.create_node(name), rclpy.create_node(f"{name}_client")
        executor.add_node(node)
        clients.add_node(client)
        made.extend([node, client])
        return node, client

    spinner = threading.Thread(target=lambda: spin_while(executor, lambda: not stop.is_set(), turn=LONG_TURN),
                               daemon=True)
    client_spinner = threading.Thread(target=clients.spin, daemon=True)
    try:
        yield make, spinner, client_spinner
    finally:
        stop.set()
        executor.shutdown(timeout_sec=1.0)
        clients.shutdown()
        for node in made:
            stop_offloads(node, PATIENCE)  # their worker threads end with the test
            node.destroy_node()
        rclpy.try_shutdown()


def answer(client_node, service: str) -> Future:
    client = client_node.create_client(Trigger, service)
    assert client.wait_for_service(PATIENCE), f"{service} not served"
    return client.call_async(Trigger.Request())


def test_a_blocked_service_holds_up_no_message_and_answers_as_soon_as_released(served):
    make, spinner, client_spinner = served
    node, client_node = make("offload_test")
    release, received = threading.Event(), []
    node.create_subscription(Int32, "offload_test_numbers", lambda msg: received.append(msg.data), 10)

    def blocked(_request, response):
        release.wait(PATIENCE)
        response.success, response.message = True, threading.current_thread().name
        return response

    node.create_service(Trigger, "offload_test_blocked", Offload(node, "blocked_service")(blocked))
    spinner.start()
    client_spinner.start()
    pending = answer(client_node, "offload_test_blocked")
    numbers = client_node.create_publisher(Int32, "offload_test_numbers", 10)
    poll_until(lambda: numbers.get_subscription_count() > 0, "the node to subscribe", PATIENCE)
    for k in range(5):
        numbers.publish(Int32(data=k))
    poll_until(lambda: len(received) == 5, "the messages sent while the service is blocked", PATIENCE)
    assert not pending.done()
    # nothing else happens on the node from here: only the offload's own wake-up can answer
    # before the spinning thread's next turn, two minutes away
    release.set()
    poll_until(pending.done, "the answer once the service's work ended", PATIENCE)
    assert pending.result().success and pending.result().message.startswith("blocked_service")


def test_one_worker_runs_the_calls_one_at_a_time_in_order(served):
    make, spinner, client_spinner = served
    node, client_node = make("offload_order_test")
    running, order, overlaps = [0], [], []
    lock = threading.Lock()

    def work(name: str):
        def callback(_request, response):
            with lock:
                running[0] += 1
                overlaps.append(running[0] > 1)
                order.append(name)
            time.sleep(0.05)
            with lock:
                running[0] -= 1
            response.success = True
            return response
        return callback

    serial = Offload(node, "serial")
    for name in ("first", "second", "third"):
        node.create_service(Trigger, f"offload_order_{name}", serial(work(name)))
    spinner.start()
    client_spinner.start()
    pending = []
    for name in ("first", "second", "third"):
        pending.append(answer(client_node, f"offload_order_{name}"))
        poll_until(lambda: len(order) == len(pending), f"the {name} call to start", PATIENCE)
    poll_until(lambda: all(p.done() for p in pending), "every answer", PATIENCE)
    assert order == ["first", "second", "third"] and not any(overlaps)


def test_an_error_in_the_work_is_raised_by_the_awaiting_task_and_a_waiting_task_is_not_spun(served):
    make, spinner, _client_spinner = served
    node, _client_node = make("offload_error_test")
    executor = node.executor
    release = threading.Event()
    looks = [0]

    class Counted:
        """An awaitable that counts how often the executor looks at the task awaiting it."""

        def __await__(self):
            while not release.is_set():
                looks[0] += 1
                yield
            return None

    async def waiting():
        await Counted()

    def failing():
        raise ValueError("the work failed")

    async def catching() -> str:
        try:
            await Offload(node, "failing")(failing)()
        except ValueError as error:  # raised here, in the awaiting task, as if called there
            return f"caught: {error}"
        return "not raised"

    spinner.start()
    task = executor.create_task(waiting())
    time.sleep(1.0)  # a wall second in which nothing happens on the node: it must not be spun round
    release.set()
    failed = executor.create_task(catching())
    poll_until(failed.done, "the failed work's task to end", PATIENCE)
    assert failed.result() == "caught: the work failed"
    assert looks[0] < 20, f"the waiting task was looked at {looks[0]} times in a quiet second"
    poll_until(task.done, "the waiting task to end once released", PATIENCE)


def test_a_nodes_offloads_share_one_wake_up_and_stop_together(served):
    """Two offloads of one node: one timer wakes the executor for both (each still answers as
    soon as its work ends), and stopping the node's offloads lets a running call finish while
    the call queued behind it is dropped."""
    make, spinner, client_spinner = served
    node, client_node = make("offload_stop_test")
    release, started = threading.Event(), threading.Event()
    ran: list[str] = []

    def slow(_request, response):
        started.set()
        release.wait(PATIENCE)
        ran.append("slow")
        response.success = True
        return response

    def queued(_request, response):
        ran.append("queued")
        response.success = True
        return response

    def quick(_request, response):
        response.success = True
        return response

    timers_before = len(list(node.timers))
    serial, other = Offload(node, "stop_serial"), Offload(node, "stop_other")
    assert len(list(node.timers)) == timers_before + 1
    node.create_service(Trigger, "offload_stop_slow", serial(slow))
    node.create_service(Trigger, "offload_stop_queued", serial(queued))
    node.create_service(Trigger, "offload_stop_quick", other(quick))
    spinner.start()
    client_spinner.start()
    poll_until(answer(client_node, "offload_stop_quick").done, "the other offload's answer", PATIENCE)
    answer(client_node, "offload_stop_slow")
    assert started.wait(PATIENCE)
    answer(client_node, "offload_stop_queued")
    poll_until(lambda: len(serial._running) == 2, "the second call queued behind the first", PATIENCE)
    stopper = threading.Thread(target=stop_offloads, args=(node, PATIENCE))
    stopper.start()
    release.set()
    stopper.join(PATIENCE)
    assert not stopper.is_alive() and ran == ["slow"]
