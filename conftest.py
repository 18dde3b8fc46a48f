"""Test-session settings shared by every package's tests and the system tests.

Every process a test starts inherits this environment: DDS discovery stays on the
loopback interface and the session uses a ROS domain of its own, so parallel test
runs (and other ROS users on the machine) never see each other.
"""

import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(os.getpid() % 100 + 1))
