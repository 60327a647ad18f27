"""003, the PyTorch section: SDPA against the formula, MultiheadAttention and a pre-norm encoder block."""

import math

import pandas as pd

from attnrepro.experiments import _torch
from attnrepro.experiments._memory import BOOL, F32, term
from attnrepro.experiments._prices import CELL, FLOP, mha

EXPERIMENT = {
    "article": "003",
    "order": 5,
    "section": "Attention and transformers in PyTorch",
    "torch": True,
    "derived": {
        "main.block_output_dim_0": "a shape or a parameter count of the modules' sizes",
        "main.block_output_dim_1": "a shape or a parameter count of the modules' sizes",
        "main.block_output_dim_2": "a shape or a parameter count of the modules' sizes",
        "main.block_parameters": "a shape or a parameter count of the modules' sizes",
        "main.mha_output_dim_0": "a shape or a parameter count of the modules' sizes",
        "main.mha_output_dim_1": "a shape or a parameter count of the modules' sizes",
        "main.mha_output_dim_2": "a shape or a parameter count of the modules' sizes",
        "main.mha_weights_dim_0": "a shape or a parameter count of the modules' sizes",
        "main.mha_weights_dim_1": "a shape or a parameter count of the modules' sizes",
        "main.mha_weights_dim_2": "a shape or a parameter count of the modules' sizes",
    },
}


def sdpa_checks(torch, n, d_k):
    """Formula vs SDPA, and the causal SDPA's first row vs V[0] (allclose and max |diff|)."""
    F = torch.nn.functional
    Q, K, V = torch.randn(n, d_k), torch.randn(n, d_k), torch.randn(n, d_k)  # (n, d_k) each
    manual = torch.softmax(Q @ K.T / math.sqrt(d_k), dim=-1) @ V  # (n, d_k)
    builtin = F.scaled_dot_product_attention(Q, K, V)
    causal = F.scaled_dot_product_attention(Q, K, V, is_causal=True)
    return {
        "same_as_formula": bool(torch.allclose(manual, builtin, atol=1e-6)),
        "formula_max_abs_diff": float((manual - builtin).abs().max()),
        "causal_first_row_equals_v0": bool(torch.allclose(causal[0], V[0])),
        "causal_first_row_max_abs_diff": float((causal[0] - V[0]).abs().max()),
    }


def shape_columns(prefix, shape):
    """{prefix_0: size, prefix_1: size, ...} for a tensor shape."""
    return {f"{prefix}_{axis}": int(size) for axis, size in enumerate(shape)}


def run(params):
    torch = _torch.load()
    nn = torch.nn
    torch.manual_seed(params["torch_seed"])
    checks = sdpa_checks(torch, params["n"], params["d_k"])

    d_model, heads = params["d_model"], params["heads"]
    x = torch.randn(params["batch"], params["tokens"], d_model)  # (B, T, d_model)
    mha = nn.MultiheadAttention(embed_dim=d_model, num_heads=heads, batch_first=True)
    out, attn = mha(x, x, x)  # (B, T, d_model), (B, T, T): weights averaged over heads
    block = nn.TransformerEncoderLayer(d_model=d_model, nhead=heads, dim_feedforward=params["d_ff"],
                                       batch_first=True, norm_first=True, activation="gelu")
    block_out = block(x)  # (B, T, d_model)

    main = pd.DataFrame([{
        **params, **checks,
        **shape_columns("mha_output_dim", out.shape),
        **shape_columns("mha_weights_dim", attn.shape),
        **shape_columns("block_output_dim", block_out.shape),
        "block_parameters": sum(p.numel() for p in block.parameters()),
    }])
    return {"main": main}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    n, d_k, B, T, d, h, d_ff = (p[k] for k in ("n", "d_k", "batch", "tokens", "d_model", "heads", "d_ff"))
    return [
        # the formula, then SDPA twice: on 2-D inputs it takes its math path (no fused kernel), up
        # to 3 (n, n) float32 and the causal mask at once; the heap may keep the earlier ones
        # (measured: 4 to 6)
        term(8 * n * n * F32 + 2 * n * n * BOOL, "the formula's and SDPA's scores, scaled and softmax: "
             "8 x (n, n) float32 and a mask", n=2),
        term(8 * B * h * T * T * F32,
             "MultiheadAttention scores: 8 x (batch, heads, tokens, tokens) float32",
             batch=1, heads=1, tokens=2),
        term(2 * (4 * d * d + 2 * d * d_ff) * F32, "module weights and gradients float32",
             d_model=2, d_ff=1),
        term(8 * B * T * (d + d_ff) * F32, "activations: 8 x (batch, tokens, d_model + d_ff) float32",
             batch=1, tokens=1, d_model=1, d_ff=1),
    ]


def work(p):
    n, B, T, d, h, d_ff = (p[k] for k in ("n", "batch", "tokens", "d_model", "heads", "d_ff"))
    return 3 * n * n * CELL + 2 * B * mha(T, d, h) + 4 * B * T * d * d_ff * FLOP
