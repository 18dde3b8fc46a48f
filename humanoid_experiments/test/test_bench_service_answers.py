"""``humanoid bench service-answers``: its baseline profile and a short run as a process."""

import json
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from humanoid_experiments.bench import service_answers as bench

PROFILE = Path(__file__).resolve().parents[2] / "humanoid_bringup" / "config" / "dds" / "fastdds_loopback.xml"
NS = {"dds": bench.FAST_DDS_NAMESPACE}


def writer_profiles(path: Path) -> list[str]:
    root = ElementTree.parse(path).getroot()
    return [w.get("profile_name") for w in root.iterfind("dds:profiles/dds:data_writer", NS)]


def test_the_baseline_is_the_project_profile_without_its_service_writer(tmp_path):
    baseline = bench.without_service_writer(PROFILE, tmp_path / "baseline.xml")
    assert "service" in writer_profiles(PROFILE)
    assert "service" not in writer_profiles(baseline)
    participant = "dds:profiles/dds:participant"
    kept = ElementTree.parse(baseline).getroot().find(participant, NS)
    assert kept is not None and kept.get("is_default_profile") == "true"
    original = ElementTree.parse(PROFILE).getroot().find(participant, NS)
    assert ElementTree.tostring(kept) == ElementTree.tostring(original)
    # written with the default namespace Fast DDS reads, not an ns0: prefix
    assert b"ns0:" not in baseline.read_bytes()


def test_a_profile_with_nothing_to_compare_is_refused(tmp_path):
    bare = tmp_path / "bare.xml"
    bare.write_text(f'<dds xmlns="{bench.FAST_DDS_NAMESPACE}"><profiles/></dds>')
    result = subprocess.run([sys.executable, "-m", "humanoid_experiments.bench.service_answers",
                             "--profile", str(bare)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert f"{bare} has no 'service' data_writer profile" in result.stderr


def test_a_short_run_counts_every_client_of_both_servers():
    result = subprocess.run([sys.executable, "-m", "humanoid_experiments.bench.service_answers", "--rounds", "1",
                             "--parallel", "1", "--hogs", "0", "--json"], capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["profile"] == str(PROFILE)
    assert figures["with_profile"]["clients"] == figures["baseline"]["clients"] == 1
    assert figures["with_profile"]["answered"] == 1  # the project's profile does not lose answers
    baseline = figures["baseline"]
    assert baseline["answered"] + baseline["lost"] + baseline["unavailable"] == 1
