"""The Bioloid humanoid as Tyropoulos (2008) published it, and the research tools built on it.

Apart from the runtime model (``humanoid_description.model`` and the robot's config
files), which knows nothing of the thesis:

- :mod:`.equations`: the thesis' kinematic equations J1..J18, its numbering and frame;
- :mod:`.kinematics_generator`: writes ``robots/bioloid/kinematics.yaml`` (the URDF's
  kinematics) from the equations;
- :mod:`.shapes_generator`: writes ``robots/bioloid/collision.yaml`` (the links' visual
  and collision shapes) from those kinematics and the sizes of the robot's parts;
- :mod:`.mass_identification`: fits the structure masses to the thesis' balanced poses;
- :mod:`.pose_file`: pose files in the thesis convention (label, J1..J18 in degrees);
- :mod:`.pose_analysis`: thesis angles to URDF joint positions, and a pose's CoM, link
  CoMs and static margin in the thesis frame.
"""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "mass_identification": ["BOUNDS", "MassModel", "identify"],
    "pose_analysis": ["ThesisFrame"],
    "pose_file": ["ThesisPose", "iter_pose_csv", "read_pose_csv", "write_pose_csv"],
})
