"""Published values of seed 000 (Alcaraz & Cerdan), Tables 2-6.

Goodput in kbit/s and delay in s; ``*_ci`` are the paper's 90 % half-widths.
"""

from __future__ import annotations

RATES = (384, 256, 128, 64)

# Table 3: the proposed SBD settings per rate (alpha = 5, maxth = 40): T_r (ms), minth.
SBD_PROPOSED = {384: (200, 20), 256: (500, 20), 128: (1300, 15), 64: (2500, 10)}
# Table 5: the proposed RED settings per rate (maxth = 40, instantaneous queue): maxp, minth.
RED_PROPOSED = {384: (0.05, 20), 256: (0.06, 15), 128: (0.2, 10), 64: (0.3, 10)}

# Table 6: drop-tail goodput ± CI, delay ± CI; SBD and RED relative changes (%).
TABLE6 = {
    (384, 1): (277.1, 6.1, 0.72, 0.04, 5, -34, 6, -27),
    (384, 4): (298.6, 4.8, 0.89, 0.01, 3, -21, 3, -21),
    (256, 1): (185.1, 4.5, 0.94, 0.07, 8, -43, 10, -32),
    (256, 4): (201.9, 3.1, 1.28, 0.02, 4, -25, 2, -19),
    (128, 1): (89.9, 5.8, 1.58, 0.14, 14, -54, 12, -55),
    (128, 4): (93.4, 2.6, 2.44, 0.06, 8, -35, 7, -39),
    (64, 1): (42.1, 1.4, 3.12, 0.21, 20, -64, 19, -58),
    (64, 4): (48.5, 1.6, 4.33, 0.09, 8, -23, 8, -40),
}

# Table 2 (SBD) and Table 4 (RED): the setting with the maximum goodput, one flow.
# SBD: T_r (ms), minth, goodput, CI, delay.  RED: maxp, minth, goodput, CI, delay.
TABLE2 = {
    384: (250, 30, 294.5, 5.6, 0.55),
    256: (300, 25, 203.6, 3.6, 0.71),
    128: (900, 20, 105.0, 1.6, 0.99),
    64: (1500, 10, 52.5, 0.8, 1.97),
}
TABLE4 = {
    384: (0.05, 25, 295.1, 5.9, 0.62),
    256: (0.08, 20, 204.5, 3.6, 0.75),
    128: (0.1, 10, 103.8, 1.3, 0.88),
    64: (0.1, 10, 52.3, 0.9, 1.57),
}

# Table 3 (SBD) and Table 5 (RED): goodput, CI, delay at the proposed settings, one flow.
TABLE3 = {
    384: (290.5, 4.2, 0.47),
    256: (200.1, 3.7, 0.53),
    128: (102.1, 1.5, 0.72),
    64: (50.4, 1.5, 1.12),
}
TABLE5 = {
    384: (292.7, 4.6, 0.52),
    256: (203.3, 2.4, 0.63),
    128: (100.9, 1.8, 0.70),
    64: (50.0, 1.9, 1.32),
}

PAPER = (
    "J. J. Alcaraz and F. Cerdan, Performance Evaluation of AQM Schemes in Rate-Varying 3G Links"
)
