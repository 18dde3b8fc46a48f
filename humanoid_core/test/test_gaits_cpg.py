"""CPG gaits: the oscillator equation of the quadruped report converges to its limit cycle
(amplitude sqrt(E), period 2 pi tau), couplings synchronise, and each coupling structure
couples what it says."""

import math

import numpy as np
import pytest

from humanoid_core.quadruped_gaits import CPGGait, CPGParameters, GaitError, OscillatorNetwork, coupling_matrix
from humanoid_description import load_model

LEGS = ("front_left", "front_right", "back_left", "back_right")


def run(network: OscillatorNetwork, seconds: float, step: float = 0.001) -> np.ndarray:
    return np.array([network.advance(step).copy() for _ in range(round(seconds / step))])


def test_an_oscillator_settles_on_its_limit_cycle_from_near_rest():
    tau = 1.0 / (2.0 * math.pi * 1.0)  # 1 Hz, the report's baseline
    net = OscillatorNetwork(tau, 0.7, np.array([0.04]), np.zeros((1, 1)), np.zeros((1, 1)),
                            np.array([0.01]), np.array([0.0]))
    x = run(net, 6.0)[3000:, 0]
    assert x.max() == pytest.approx(0.2, rel=0.01) and x.min() == pytest.approx(-0.2, rel=0.01)  # sqrt(E)
    rising = np.flatnonzero((x[:-1] < 0.0) & (x[1:] >= 0.0))
    assert np.mean(np.diff(rising)) * 0.001 == pytest.approx(1.0, rel=0.01)  # 2 pi tau


@pytest.mark.parametrize(("weight", "correlation"), [(-0.5, 1.0), (0.5, -1.0)])
def test_coupling_synchronises_two_oscillators(weight, correlation):
    a = np.array([[0.0, weight], [weight, 0.0]])
    net = OscillatorNetwork(1.0 / (2.0 * math.pi), 0.7, np.ones(2), a, np.zeros((2, 2)),
                            np.array([1.0, 0.0]), np.array([0.0, 1.0]))  # a quarter cycle apart
    x = run(net, 8.0)[6000:]
    assert np.corrcoef(x[:, 0], x[:, 1])[0, 1] == pytest.approx(correlation, abs=1e-3)


def test_coupling_structures():
    independent = coupling_matrix(CPGParameters(structure="independent"), LEGS)
    paired = coupling_matrix(CPGParameters(structure="paired", leg_coupling=-0.3), LEGS)
    symmetric = coupling_matrix(CPGParameters(structure="symmetric", leg_coupling=0.2), LEGS)
    hips = slice(0, 4)
    assert not independent[hips, hips].any()
    assert np.count_nonzero(paired[hips, hips]) == 4
    assert paired[0, 3] == paired[3, 0] == paired[1, 2] == paired[2, 1] == -0.3  # the diagonals
    assert np.count_nonzero(symmetric[hips, hips]) == 12 and set(symmetric[hips, hips].flat) == {0.0, 0.2}
    for a in (independent, paired, symmetric):  # every knee follows its own hip
        assert [a[4 + i, i] for i in range(4)] == [-0.5] * 4
        assert not a[:, 4:].any()


def test_a_cpg_gait_drives_only_the_leg_pitch_joints_within_limits():
    model = load_model("bioloid_quadruped")
    gait = CPGGait(model, CPGParameters(frequency=1.0, structure="paired"))
    moved = np.zeros(len(model.joints), dtype=bool)
    for t in np.arange(0.0, 2.0, 0.01):
        q = gait.positions(t)
        assert np.all(q >= model.joints.lower) and np.all(q <= model.joints.upper)
        moved |= np.abs(q - model.home_positions()) > 1e-6
    driven = {leg.joints.hip for leg in gait.legs.values()} | {leg.joints.knee for leg in gait.legs.values()}
    assert {model.joints.names[i] for i in np.flatnonzero(moved)} == driven
    with pytest.raises(GaitError, match="runs forward"):
        gait.positions(1.0)


def test_bad_cpg_parameters_are_refused():
    with pytest.raises(GaitError, match="unknown coupling structure 'ring'"):
        CPGParameters(structure="ring")
    with pytest.raises(GaitError, match=r"leg_coupling 0\.9 is outside"):
        CPGParameters(leg_coupling=0.9)
