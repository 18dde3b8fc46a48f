"""The report's CPG study as configurations (cpg.yaml): its six experiments have the report's
counts of free parameters, eq 14's normalisation makes a link's input independent of its
sender's energy, ``bidir`` mirrors a link, shared sets move both sides as mirror images, and a
configuration that names an unknown servo is refused with its line."""

import math

import numpy as np
import pytest

from humanoid_core.quadruped_gaits import GaitError, NetworkGait, OscillatorNetwork, cpg_path, load_cpg
from humanoid_description import load_model

#: The report's counts of free parameters, experiments 1-6 (its section VI.B.3).
REPORT_COUNTS = {1: 64, 2: 33, 3: 32, 4: 24, 5: 16, 6: 24}


@pytest.fixture(scope="module")
def model():
    return load_model("bioloid_quadruped")


@pytest.fixture(scope="module")
def configuration(model):
    return load_cpg(model)


def test_the_six_experiments_have_the_reports_free_parameters(configuration):
    counts = {number: len(e.parameters) for number, e in configuration.experiments.items()}
    assert counts == REPORT_COUNTS
    for experiment in configuration.experiments.values():
        assert len(set(experiment.names)) == len(experiment.names)
        # four per independent set (x0, sqrt(E), a, b), plus a searched frequency
        assert len(experiment.names) == 4 * len(experiment.sets) + (1 if experiment.frequency_oscillators else 0)
    assert configuration.experiments[1].model.oscillators.__len__() == 16
    assert configuration.experiments[2].names[-1] == "frequency(PELVIS,N1)"


def follower(sender_energy: float, normalisation: str, seconds: float = 3.0) -> np.ndarray:
    """Oscillator 1 driven by oscillator 0 (one-way, a and b), oscillator 0 started on its own
    limit cycle: oscillator 1's x over ``seconds``."""
    tau = 1.0 / (2.0 * math.pi)
    amplitude = math.sqrt(sender_energy)
    a = np.array([[0.0, 0.0], [0.5, 0.0]])
    b = np.array([[0.0, 0.0], [-0.3, 0.0]])
    network = OscillatorNetwork(tau, 0.7, np.array([sender_energy, 0.25]), a, b, np.array([0.0, 0.1]),
                                np.array([amplitude, 0.0]), normalisation=normalisation)
    return np.array([network.advance(0.01)[1] for _ in range(round(seconds / 0.01))])


@pytest.mark.parametrize("normalisation", ["energy", "state"])
def test_eq_14_makes_a_links_input_independent_of_the_senders_energy(normalisation):
    weak, strong = follower(1.0, normalisation), follower(9.0, normalisation)
    np.testing.assert_allclose(weak, strong, atol=1e-6)
    # eq 12 (no normalisation): the same sender three times as large drives the follower harder
    assert np.max(np.abs(follower(9.0, "none") - follower(1.0, "none"))) > 0.05


def test_bidir_mirrors_a_link_with_the_opposite_weights(model, configuration):
    experiment = configuration.experiments[3]  # model 2: FL1 <- N1, bidir
    values = experiment.decode(np.full(len(experiment.parameters), 0.5))
    values |= {"FL1=FR1.a": 0.4, "FL1=FR1.b": -0.2}
    gait = NetworkGait(model, experiment, values)
    index = {name: i for i, name in enumerate(experiment.model.oscillators)}
    fl1, fr1, n1 = index["FL1"], index["FR1"], index["N1"]
    a, b = gait.network.a, gait.network.b
    assert (a[fl1, n1], b[fl1, n1]) == (0.4, -0.2) == (a[fr1, n1], b[fr1, n1])
    assert (a[n1, fl1], b[n1, fl1]) == (-0.4, 0.2) == (a[n1, fr1], b[n1, fr1])


def test_a_shared_set_moves_the_two_sides_as_mirror_images(model, configuration):
    """Experiment 4 shares FL2 and FR2 (hip roll): with both started alike and the same inputs
    they oscillate together, the right one mirrored; held servos stay at the standing pose."""
    experiment = configuration.experiments[4]
    gait = NetworkGait(model, experiment, experiment.decode(np.full(len(experiment.parameters), 0.7)))
    assert experiment.model.oscillators[:6] == ("FL1", "FL2", "FL3", "FR1", "FR2", "FR3")
    for state in (gait.network.x, gait.network.v):  # left and right legs started alike
        state[3:6], state[9:12] = state[0:3], state[6:9]
    names = model.joints.names
    for t in np.arange(0.0, 2.0, 0.05):
        q = dict(zip(names, gait.positions(t), strict=True))
        assert q["fr_hip_roll"] == pytest.approx(-q["fl_hip_roll"], abs=1e-9)
        assert q["fr_hip_pitch"] == pytest.approx(q["fl_hip_pitch"], abs=1e-9)
        assert q["spine_pitch"] == q["neck_pitch"] == q["neck_yaw"] == q["head_pitch"] == 0.0


def test_a_configuration_naming_an_unknown_servo_is_refused_with_its_line(model, tmp_path):
    text = cpg_path(model.name).read_text().replace("FL2: {from: [FL1]}", "FL2: {from: [FL9]}", 1)
    bad = tmp_path / "cpg.yaml"
    bad.write_text(text)
    line = next(i for i, row in enumerate(text.splitlines(), start=1) if "FL9" in row)
    with pytest.raises(GaitError, match=rf"cpg.yaml:{line}: .*unknown servo 'FL9'"):
        load_cpg(model, bad)
    counted = cpg_path(model.name).read_text().replace("parameters: 16", "parameters: 17")
    bad.write_text(counted)
    with pytest.raises(GaitError, match="gives 16 free parameters, not the report's 17"):
        load_cpg(model, bad)
