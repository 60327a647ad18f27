"""000, listing 4: permutation equivariance of attention, and the sinusoidal encoding as a rotation.

torch's MultiheadAttention without positions gives the permuted output for a
permuted input; with the sinusoidal encoding added at fixed positions it does
not. Then, for a shift k, the 2x2 rotation by omega_i k maps each (sin, cos)
pair of PE(pos) onto PE(pos + k).

Tables: ``main`` (one row), ``encoding`` (the table_length x d sinusoidal table of the
rotation check, one row per (position, dimension)).
"""

import numpy as np
import pandas as pd

from attnrepro.core.positional import rotation, sinusoidal
from attnrepro.experiments import _torch
from attnrepro.experiments._memory import F64, ROW, term, torch_sdpa_mha
from attnrepro.experiments._prices import DICT_ROW, PY_STEP, mha

EXPERIMENT = {
    "article": "000",
    "order": 4,
    "section": "Position: attention does not know the order",
    "tables": ("main", "encoding"),
    "torch": True,
    "derived": {
        "main.frequencies": "d / 2 frequencies of the encoding",
    },
}


def self_attention(torch, mha):
    """x (1, n, d) -> MultiheadAttention(x, x, x) without weights and without gradients."""
    def apply(x):
        with torch.no_grad():
            return mha(x, x, x, need_weights=False)[0]  # (1, n, d)
    return apply


def equivariance(torch, output_of_permuted, permuted_output):
    """allclose and max |difference| of f(x[perm]) against f(x)[perm]."""
    diff = (output_of_permuted - permuted_output).abs().max()
    return bool(torch.allclose(output_of_permuted, permuted_output)), float(diff)


def rotation_error(table, d, shift, positions):
    """Largest |R_k PE(pos) - PE(pos + k)| over the first ``positions`` positions and d/2 pairs."""
    worst = 0.0
    for pos in range(positions):
        for i in range(d // 2):
            # scalar pow, as in the listing: numpy's vectorised pow differs in the last bit for some i
            omega = 1 / 10000 ** (2 * i / d)
            pair = slice(2 * i, 2 * i + 2)
            predicted = rotation(omega, shift) @ table[pos, pair]  # (2,)
            worst = max(worst, np.abs(predicted - table[pos + shift, pair]).max())
    return float(worst)


def run(params):
    torch = _torch.load()
    d, h, n = params["d"], params["h"], params["n"]
    mha, x = _torch.seeded_attention(torch, params)  # x: (1, n, d)
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(params["perm_seed"]))

    f = self_attention(torch, mha)
    y, y_perm = f(x), f(x[:, perm])
    close_plain, error_plain = equivariance(torch, y_perm, y[:, perm])
    pe = torch.from_numpy(sinusoidal(n, d))[None]  # (1, n, d): positions stay fixed
    z, z_perm = f(x + pe), f(x[:, perm] + pe)
    close_pos, error_pos = equivariance(torch, z_perm, z[:, perm])

    shift, positions = params["shift"], params["positions"]
    table = sinusoidal(params["table_length"], d)  # (table_length, d)
    worst = rotation_error(table, d, shift, positions)
    main = pd.DataFrame([{
        "torch_seed": params["torch_seed"], "perm_seed": params["perm_seed"],
        "d": d, "h": h, "n": n, "permutation": " ".join(map(str, perm.tolist())),
        "allclose_without_position": close_plain, "error_without_position": error_plain,
        "allclose_with_position": close_pos, "error_with_position": error_pos,
        "shift": shift, "positions": positions, "frequencies": d // 2,
        "rotation_max_error": worst,
    }])
    encoding = pd.DataFrame([
        {"position": pos, "dimension": j, "value": float(table[pos, j])}
        for pos in range(table.shape[0]) for j in range(d)
    ])
    return {"main": main, "encoding": encoding}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    d, length = p["d"], p["table_length"]
    return torch_sdpa_mha(p) + [
        term(length * d * (2 * F64 + ROW), "encoding (table_length, d) float64, its angles and its "
             "table: table_length x d rows", table_length=1, d=1),
    ]


def work(p):
    n, d, h = p["n"], p["d"], p["h"]
    return 4 * mha(n, d, h) + p["positions"] * (d // 2) * PY_STEP + p["table_length"] * d * DICT_ROW
