"""001, exercises 1 and 2: the figures of their solutions, computed from the parameters.

Exercise 1: with unit-variance components, Var(q.k) = d_k; two scores gap_sd
deviations apart have a weight ratio exp(gap) (the softmax denominator cancels),
with the raw gap or the gap divided by sqrt(d_k).
Exercise 2: parameters of a pre-LN block (four (d, d) projections with biases, a
feed-forward d -> ffn_factor d -> d, two layer norms), their bytes against those
of the key-value cache 2 * blocks * kv_heads * d_head * T * batch * bytes, and
the cache of multi-query attention (a single K, V pair).
Beside them, one closed-form size of the O(T²) section's prose: one score matrix of
(score_T, score_T) at score_bytes per value.
"""

import math

import pandas as pd

EXPERIMENT = {
    "article": "001",
    "order": 11,
    "section": "Exercises 1 and 2 (solutions)",
    "derived": {
        "main.score_matrix_gib": "score_T^2 values of score_bytes, in GiB",
        "main.variance": "the exercise's arithmetic on d_k: Var(q.k) = d_k",
        "main.sd": "the exercise's arithmetic on d_k: sqrt(d_k)",
        "main.raw_gap": "the exercise's arithmetic on d_k: gap_sd * sqrt(d_k)",
        "main.raw_ratio": "the exercise's arithmetic on d_k: exp(gap_sd * sqrt(d_k))",
        "main.scaled_gap": "the exercise's arithmetic on d_k: the gap divided by sqrt(d_k)",
        "main.scaled_ratio": "the exercise's arithmetic on d_k: exp(gap_sd)",
        "main.cache_bytes": "the exercise's arithmetic on the article's sizes",
        "main.cache_gib": "the exercise's arithmetic on the article's sizes",
        "main.cache_to_weights": "the exercise's arithmetic on the article's sizes",
        "main.multi_query_cache_gib": "the exercise's arithmetic on the article's sizes",
        "main.params_per_block": "the exercise's arithmetic on the article's sizes",
        "main.params_total": "the exercise's arithmetic on the article's sizes",
        "main.weights_mib": "the exercise's arithmetic on the article's sizes",
    },
}

MIB, GIB = 2**20, 2**30


def block_parameters(d, ffn_factor):
    """Parameters of one pre-LN block: attention, feed-forward network, two layer norms."""
    d_ff = ffn_factor * d
    attention = 4 * (d * d + d)  # W_Q, W_K, W_V, W_O and their biases
    feed_forward = d * d_ff + d_ff + d_ff * d + d  # W_1, b_1, W_2, b_2
    norms = 2 * (2 * d)  # gamma and beta of two layer norms
    return attention + feed_forward + norms


def cache_bytes(blocks, kv_heads, d_head, T, batch, n_bytes):
    """Bytes of the key-value cache: one K and one V of (T, d_head) per head, block, sequence."""
    return 2 * blocks * kv_heads * d_head * T * batch * n_bytes


def softmax_gap(d_k, gap_sd):
    """Exercise 1: the scale of the dot product and the weight ratio of two scores gap_sd sd apart."""
    variance = float(d_k)  # sum of d_k independent products, each of variance 1
    sd = math.sqrt(variance)
    raw_gap = gap_sd * sd
    scaled_gap = raw_gap / math.sqrt(d_k)
    return {
        "variance": variance, "sd": sd,
        "raw_gap": raw_gap, "raw_ratio": math.exp(raw_gap),
        "scaled_gap": scaled_gap, "scaled_ratio": math.exp(scaled_gap),
    }


def memory_budget(p):
    """Exercise 2: parameters and bytes of the blocks against the key-value cache."""
    per_block = block_parameters(p["d"], p["ffn_factor"])
    total = p["blocks"] * per_block
    weight_bytes = total * p["bytes"]
    cache = cache_bytes(p["blocks"], p["heads"], p["d_head"], p["T"], p["batch"], p["bytes"])
    multi_query = cache_bytes(p["blocks"], 1, p["d_head"], p["T"], p["batch"], p["bytes"])
    return {
        "params_per_block": per_block, "params_total": total,
        "weights_mib": weight_bytes / MIB,
        "cache_bytes": cache, "cache_gib": cache / GIB,
        "cache_to_weights": cache / weight_bytes,
        "multi_query_cache_gib": multi_query / GIB,
    }


def score_matrix_gib(T, n_bytes):
    """GiB of one (T, T) score matrix at ``n_bytes`` per value."""
    return T * T * n_bytes / GIB


def run(params):
    row = dict(params)
    row.update(softmax_gap(params["d_k"], params["gap_sd"]))
    row.update(memory_budget(params))
    row["score_matrix_gib"] = score_matrix_gib(params["score_T"], params["score_bytes"])
    return {"main": pd.DataFrame([row])}


# --- what a job asks for: pure Python, run while Snakemake builds the DAG (experiments.declared) ---

def peak_memory(p):
    """Closed-form counts: the sizes are a formula's inputs, never allocated."""
    return []


def work(p):
    """Closed-form counts: the sizes are a formula's inputs, never allocated."""
    return 0.0
