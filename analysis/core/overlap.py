"""The check that can fail where reconciliation cannot: with the residual computed as what
is left of a gap, parts plus residual sum to the gap by construction, so work counted
twice (host work overlapped with the device, say) shows only as a negative residual or a
part longer than its gap."""
from __future__ import annotations

import numpy as np


def overcounted(parts, gap_ms, tol_ms: float = 1e-9) -> np.ndarray:
    """Per gap: True where a part (the residual included) is negative or longer than the gap.
    ``parts``: a 2-D array, one row per gap and one column per label."""
    parts = np.asarray(parts, float)
    gap = np.asarray(gap_ms, float)[:, None]
    return ((parts < -tol_ms) | (parts > gap + tol_ms)).any(axis=1)
