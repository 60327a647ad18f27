"""003, the PyTorch section: SDPA against the formula, MultiheadAttention and a pre-norm encoder block."""

import math

import pandas as pd

from attnrepro.experiments import _torch


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
