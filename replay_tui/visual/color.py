"""sRGB -> CIELAB and CIEDE2000, as python-colormath 3.0.0 computes them, plus Sharma's reference formula.

colormath's vectorised CIEDE2000 differs from Sharma, Wu & Dalal (2005) in the mean hue: it adds 360 whenever
``|h1' - h2'| > 180`` (never subtracts) and does not special-case ``C1' C2' = 0``. That moves the
``30 exp(-((H' - 275)/25)^2)`` rotation term for some pairs. Compat mode uses :func:`delta_e_colormath`; fixed mode
uses :func:`delta_e_sharma`. Written from the published formulas; the operation order follows colormath so the
floats agree.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

_RGB_TO_XYZ = np.array(
    ((0.412424, 0.357579, 0.180464), (0.212656, 0.715158, 0.0721856), (0.0193324, 0.119193, 0.950444))
)
_WHITE_D65 = (0.95047, 1.00000, 1.08883)
_CIE_E = 216.0 / 24389.0


def srgb_to_lab(rgb: tuple[float, float, float]) -> tuple[float, float, float]:
    """0-255 sRGB (ints or floats) -> Lab (D65, 2 degrees), colormath's chain."""
    linear = []
    for value in rgb:
        v = value / 255.0
        linear.append(v / 12.92 if v <= 0.04045 else math.pow((v + 0.055) / 1.055, 2.4))
    xyz = np.dot(_RGB_TO_XYZ, np.array(linear))
    x, y, z = (max(float(c), 0.0) for c in xyz)
    t = []
    for value, white in zip((x, y, z), _WHITE_D65, strict=True):
        r = value / white
        t.append(math.pow(r, 1.0 / 3.0) if r > _CIE_E else (7.787 * r) + (16.0 / 116.0))
    fx, fy, fz = t
    return (116.0 * fy) - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)


def delta_e_colormath(lab1: tuple[float, float, float], lab2: tuple[float, float, float]) -> float:
    """colormath 3.0.0's ``delta_e_cie2000`` (kL = kC = kH = 1) for one pair."""
    v1 = np.array(lab1, dtype=np.float64)
    m2 = np.array([lab2], dtype=np.float64)
    L, a, b = v1
    avg_lp = (L + m2[:, 0]) / 2.0
    c1 = np.sqrt(np.sum(np.power(v1[1:], 2)))
    c2 = np.sqrt(np.sum(np.power(m2[:, 1:], 2), axis=1))
    avg_c = (c1 + c2) / 2.0
    g = 0.5 * (1 - np.sqrt(np.power(avg_c, 7.0) / (np.power(avg_c, 7.0) + np.power(25.0, 7.0))))
    a1p = (1.0 + g) * a
    a2p = (1.0 + g) * m2[:, 1]
    c1p = np.sqrt(np.power(a1p, 2) + np.power(b, 2))
    c2p = np.sqrt(np.power(a2p, 2) + np.power(m2[:, 2], 2))
    avg_cp = (c1p + c2p) / 2.0
    h1p = np.degrees(np.arctan2(b, a1p))
    h1p += (h1p < 0) * 360
    h2p = np.degrees(np.arctan2(m2[:, 2], a2p))
    h2p += (h2p < 0) * 360
    avg_hp = (((np.fabs(h1p - h2p) > 180) * 360) + h1p + h2p) / 2.0
    t = (
        1
        - 0.17 * np.cos(np.radians(avg_hp - 30))
        + 0.24 * np.cos(np.radians(2 * avg_hp))
        + 0.32 * np.cos(np.radians(3 * avg_hp + 6))
        - 0.2 * np.cos(np.radians(4 * avg_hp - 63))
    )
    diff = h2p - h1p
    delta_hp = diff + (np.fabs(diff) > 180) * 360
    delta_hp -= (h2p > h1p) * 720
    delta_lp = m2[:, 0] - L
    delta_cp = c2p - c1p
    delta_hhp = 2 * np.sqrt(c2p * c1p) * np.sin(np.radians(delta_hp) / 2.0)
    s_l = 1 + ((0.015 * np.power(avg_lp - 50, 2)) / np.sqrt(20 + np.power(avg_lp - 50, 2.0)))
    s_c = 1 + 0.045 * avg_cp
    s_h = 1 + 0.015 * avg_cp * t
    delta_ro = 30 * np.exp(-(np.power(((avg_hp - 275) / 25), 2.0)))
    r_c = np.sqrt((np.power(avg_cp, 7.0)) / (np.power(avg_cp, 7.0) + np.power(25.0, 7.0)))
    r_t = -2 * r_c * np.sin(2 * np.radians(delta_ro))
    result = np.sqrt(
        np.power(delta_lp / s_l, 2)
        + np.power(delta_cp / s_c, 2)
        + np.power(delta_hhp / s_h, 2)
        + r_t * (delta_cp / s_c) * (delta_hhp / s_h)
    )
    return float(result[0])


def delta_e_sharma(lab1: tuple[float, float, float], lab2: tuple[float, float, float]) -> float:
    """CIEDE2000 per Sharma, Wu & Dalal (2005), kL = kC = kH = 1."""
    l1, a1, b1 = lab1
    l2, a2, b2 = lab2
    c1 = math.hypot(a1, b1)
    c2 = math.hypot(a2, b2)
    c_bar7 = ((c1 + c2) / 2.0) ** 7
    g = 0.5 * (1 - math.sqrt(c_bar7 / (c_bar7 + 25.0**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if (a1p or b1) else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if (a2p or b2) else 0.0
    dlp = l2 - l1
    dcp = c2p - c1p
    if c1p * c2p == 0:
        dhp = 0.0
    else:
        dhp = h2p - h1p
        if dhp > 180:
            dhp -= 360
        elif dhp < -180:
            dhp += 360
    dhhp = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dhp) / 2)
    lbar = (l1 + l2) / 2
    cbarp = (c1p + c2p) / 2
    if c1p * c2p == 0:
        hbarp = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        hbarp = (h1p + h2p) / 2
    elif h1p + h2p < 360:
        hbarp = (h1p + h2p + 360) / 2
    else:
        hbarp = (h1p + h2p - 360) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(hbarp - 30))
        + 0.24 * math.cos(math.radians(2 * hbarp))
        + 0.32 * math.cos(math.radians(3 * hbarp + 6))
        - 0.20 * math.cos(math.radians(4 * hbarp - 63))
    )
    dtheta = 30 * math.exp(-(((hbarp - 275) / 25) ** 2))
    rc = 2 * math.sqrt(cbarp**7 / (cbarp**7 + 25.0**7))
    sl = 1 + (0.015 * (lbar - 50) ** 2) / math.sqrt(20 + (lbar - 50) ** 2)
    sc = 1 + 0.045 * cbarp
    sh = 1 + 0.015 * cbarp * t
    rt = -math.sin(math.radians(2 * dtheta)) * rc
    return math.sqrt((dlp / sl) ** 2 + (dcp / sc) ** 2 + (dhhp / sh) ** 2 + rt * (dcp / sc) * (dhhp / sh))


@lru_cache(maxsize=65536)
def color_similarity(
    rgb_pred: tuple[float, float, float], rgb_ref: tuple[float, float, float], formula: str = "colormath"
) -> float:
    """``max(0, 1 - dE00/100)``, prediction first as in the reference."""
    lab1, lab2 = srgb_to_lab(rgb_pred), srgb_to_lab(rgb_ref)
    delta = delta_e_colormath(lab1, lab2) if formula == "colormath" else delta_e_sharma(lab1, lab2)
    return max(0, 1 - (delta / 100))
