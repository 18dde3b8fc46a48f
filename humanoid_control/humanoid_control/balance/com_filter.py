"""CoM velocity and acceleration for the cart-table ZMP: a second-order low-pass.

Differentiating the CoM twice amplifies noise by the square of its frequency: the
simulated HOAP-2 standing still vibrates by a few hundredths of a millimetre at about
20 Hz, which is 0.3 m/s^2 of acceleration and, through the cart-table model, nearly
a centimetre of ZMP. The CoM is therefore filtered by a critically damped
second-order low-pass of natural frequency w = 2 pi f,

    x'' = w^2 (u - x) - 2 w x'

whose states give the velocity x' and the acceleration x'' of the filtered CoM. It is
integrated exactly between samples (the input interpolated linearly between them), so
it is stable for any sampling period and needs no uniform sampling (hardware stamps
jitter); holding the input instead would make the acceleration jump with every sample.

What it costs: slow motions come out delayed by the filter's group delay 2 / w (80 ms
at 4 Hz); a vibration of frequency F reaches the acceleration
attenuated to w^2 / F^2 of its raw second derivative (at 4 Hz and 20 Hz, 1/25). A
Savitzky-Golay fit would need uniform samples and a window of them per update.

The filter and the cart-table ZMP run once per ``joint_states`` message, inside the
balance monitor's compiled update, so they are written in C++ (``_core.cpp``, the one
implementation; typed in ``_core.pyi``); this module is their documented home.
"""

from __future__ import annotations

from humanoid_control.balance._core import CoMFilter, cart_table_zmp

__all__ = ["CoMFilter", "cart_table_zmp"]
