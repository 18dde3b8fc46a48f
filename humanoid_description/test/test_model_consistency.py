"""Both URDFs load in PyBullet and in Pinocchio, and the two agree."""

import numpy as np
import pinocchio as pin
import pybullet
import pytest

from humanoid_description import ROBOTS, load_model, urdf_xml


@pytest.fixture(scope="module")
def physics():
    client = pybullet.connect(pybullet.DIRECT)
    yield client
    pybullet.disconnect(client)


@pytest.mark.parametrize("robot", ROBOTS)
def test_pybullet_and_pinocchio_agree_on_frames_and_com(robot, physics, tmp_path):
    model = load_model(robot)
    path = tmp_path / f"{robot}.urdf"
    path.write_text(urdf_xml(robot))
    body = pybullet.loadURDF(str(path), flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
                             physicsClientId=physics)
    index = {pybullet.getJointInfo(body, i, physicsClientId=physics)[12].decode(): i
             for i in range(pybullet.getNumJoints(body, physicsClientId=physics))}
    masses = {name: pybullet.getDynamicsInfo(body, i, physicsClientId=physics)[0] for name, i in index.items()}
    masses["base_link"] = pybullet.getDynamicsInfo(body, -1, physicsClientId=physics)[0]
    assert sum(masses.values()) == pytest.approx(model.total_mass, rel=1e-9)

    rng = np.random.default_rng(7)
    for _ in range(5):
        q = rng.uniform(model.joints.lower, model.joints.upper)
        base = pin.SE3(pin.utils.rpyToMatrix(*rng.uniform(-0.5, 0.5, 3)), rng.uniform(-1, 1, 3))
        # PyBullet places a body by its base's inertial frame, not by the URDF link frame
        info = pybullet.getDynamicsInfo(body, -1, physicsClientId=physics)
        local = pin.XYZQUATToSE3(np.concatenate([info[3], info[4]]))
        inertial = pin.SE3ToXYZQUAT(base * local)
        pybullet.resetBasePositionAndOrientation(body, inertial[:3], inertial[3:], physicsClientId=physics)
        joint_ids = {pybullet.getJointInfo(body, i, physicsClientId=physics)[1].decode(): i
                     for i in range(pybullet.getNumJoints(body, physicsClientId=physics))}
        for joint in model.joints:
            pybullet.resetJointState(body, joint_ids[joint.name], q[joint.index], physicsClientId=physics)
        coms = model.link_coms(q, base)
        weighted = np.zeros(3)
        for link, i in index.items():
            state = pybullet.getLinkState(body, i, computeForwardKinematics=True, physicsClientId=physics)
            frame = model.frame_placement(link, q, base)
            assert np.array(state[4]) == pytest.approx(frame.translation, abs=1e-6), link
            if masses[link] > 0:
                assert np.array(state[0]) == pytest.approx(coms[link], abs=1e-6), link
                weighted += masses[link] * np.array(state[0])
        base_com = pybullet.getBasePositionAndOrientation(body, physicsClientId=physics)[0]
        weighted += masses["base_link"] * np.array(base_com)
        assert weighted / sum(masses.values()) == pytest.approx(model.com(q, base), abs=1e-6)
    pybullet.removeBody(body, physicsClientId=physics)


@pytest.mark.parametrize("robot", ROBOTS)
def test_inertias_are_physical(robot):
    model = load_model(robot)
    for inertia in model.model.inertias[1:]:
        eigen = np.linalg.eigvalsh(inertia.inertia)
        assert eigen.min() > 0
        assert eigen[0] + eigen[1] >= eigen[2] * (1 - 1e-9)


@pytest.mark.parametrize("robot", ROBOTS)
def test_jacobians_match_finite_differences(robot):
    """The frame and CoM Jacobians (base columns, then joints in canonical order) predict how
    a small motion of the base and of each joint moves a foot's sole and the CoM."""
    model = load_model(robot)
    rng = np.random.default_rng(3)
    q = rng.uniform(model.joints.lower, model.joints.upper) * 0.5
    base = pin.SE3(pin.utils.rpyToMatrix(*rng.uniform(-0.3, 0.3, 3)), rng.uniform(-0.5, 0.5, 3))
    sole = next(iter(model.config.feet.values())).sole  # a right sole, or the dog's front left foot
    frame_jacobian = model.frame_jacobian(sole, q, base)  # LOCAL_WORLD_ALIGNED
    com_jacobian = model.com_jacobian(q, base)
    assert frame_jacobian.shape == (6, 6 + len(model.joints)) and com_jacobian.shape == (3, 6 + len(model.joints))
    h = 1e-6
    for column in range(6 + len(model.joints)):
        dq, base_step = q.copy(), base
        if column < 6:  # a base motion, in the base frame (Pinocchio's free-flyer velocity)
            twist = np.zeros(6)
            twist[column] = h
            base_step = base * pin.exp6(pin.Motion(twist))
        else:
            dq[column - 6] += h
        moved = (model.frame_placement(sole, dq, base_step).translation
                 - model.frame_placement(sole, q, base).translation) / h
        assert moved == pytest.approx(frame_jacobian[:3, column], abs=1e-4), column
        com_moved = (model.com(dq, base_step) - model.com(q, base)) / h
        assert com_moved == pytest.approx(com_jacobian[:, column], abs=1e-4), column
