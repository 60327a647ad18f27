"""Tables of the timing experiments: 000's n² cost, 001's O(T²) and key-value cache, and their extensions.

Seconds belong to the machine that measured them: each note names it (from the job's
``machine`` table) and says what can transfer (ratios, slopes, memory), never that it does: the
ledger judges that (formats.transfer_sentence). A time is written as the ledger writes it
(formats.time_format: three significant digits); a cell read from a disturbed measurement is marked
and a fit over partly disturbed points says how many (products.disturbance). Formatting and
selection only: every number, ratios and slopes included, is a column of the Parquet.
"""

import pandas as pd

from attnrepro.report.products import disturbance
from attnrepro.report.products.formats import one, or_dash, quantities, time_format, time_formats, timing_note
from attnrepro.report.products.render import Table

SLOPE = "log-log slope (all points)"


def build_quadratic_cost(load):
    """000: cells, their MiB in float32 and the mean time of one attention for each n."""
    df = load("quadratic_cost").sort_values("n")
    data = pd.DataFrame({
        "n": df["n"], "n*n entries": df["cells"], "MiB (float32)": df["mib_float32"],
        "mean time (s, machine-bound)": df["mean_seconds"],
        "entries x": df["cells_ratio"], "time x": df["time_ratio"], SLOPE: df["loglog_slope"],
    })
    formats = {"MiB (float32)": "{:.1f}", "mean time (s, machine-bound)": time_formats(df["mean_seconds"]),
               "entries x": or_dash(data["entries x"], "{:.0f}"), "time x": or_dash(data["time x"], "{:.1f}"),
               SLOPE: "{:.2f}"}
    r = df.iloc[0]
    note = timing_note(f"Mean of {r['runs']} runs of one float32 attention in each of {_passes(r)} (d = "
                       f"{r['d']}, seed {r['seed']}, no warm-up); entries and MiB are exact",
                       load("quadratic_cost", "machine"),
                       "the growth per step (x, over the previous n) and the slope (2 for an n^2 law)")
    return _marked(Table(data, formats, note), df, "mean time (s, machine-bound)")


def _marked(table, df, time):
    """A table of one row per length with its ``time`` column, the growth "time x" and the slope over
    every row marked where read from a disturbed row of ``df``; the note says how many."""
    disturbed = disturbance.flags(df)
    table.note = disturbance.noted(table.note, disturbance.legend(disturbed, "the slope"))
    return disturbance.mark_columns(table, {time: disturbed, "time x": disturbance.with_previous(disturbed),
                                            SLOPE: disturbance.any_rows(disturbed, len(df))})


def _passes(row):
    """"5 passes": how often the experiment ran the article's procedure (its ``passes`` column)."""
    n = int(row["passes"]) if "passes" in row.index else 1
    return f"{n} pass{'es' if n != 1 else ''} of the article's procedure"


def build_causal_timing(load):
    """001: the minimum time of causal attention for each T, the memory of its matrices, their growth."""
    df = load("causal_timing").sort_values("T")
    data = pd.DataFrame({
        "T": df["T"], "trials": df["trials"], "time (ms, machine-bound)": df["min_ms"],
        "TxT matrix (MiB)": df["matrix_mib"], "Q,K,V together (MiB)": df["qkv_mib"],
        "length x": df["length_ratio"], "time x": df["time_ratio"], "matrix memory x": df["matrix_ratio"],
        SLOPE: df["loglog_slope"],
    })
    formats = {"time (ms, machine-bound)": time_formats(df["min_ms"]), "TxT matrix (MiB)": "{:.2f}",
               "Q,K,V together (MiB)": "{:.2f}", "length x": or_dash(data["length x"], "{:.0f}"),
               "time x": or_dash(data["time x"], "{:.1f}"),
               "matrix memory x": or_dash(data["matrix memory x"], "{:.0f}"), SLOPE: "{:.2f}"}
    r = df.iloc[0]
    note = timing_note(f"Minimum over the trials of {_passes(r)} of causal float64 attention after one "
                       f"warm-up call (d_k = {r['d_k']}, seed {r['seed']}); the MiB are exact",
                       load("causal_timing", "machine"),
                       "the growth per step (x, over the previous T) and the slope (2 for a T^2 law)")
    return _marked(Table(data, formats, note), df, "time (ms, machine-bound)")


def build_timing_exponent(load):
    """Beyond 001: the exponent fitted on a log grid of lengths, its 95% interval and the quadratic regime."""
    r = one(load("timing_exponent"))
    data = pd.DataFrame([{
        "n from": r["n_min"], "n to": r["n_max"], "lengths": r["lengths"], "sweeps": r["repeats"],
        "slope": r["slope"], "95% low": r["ci_low"], "95% high": r["ci_high"],
        "slope of medians": r["slope_of_medians"], "band": r["band"],
        "regime n from": r["regime_n_low"], "regime n to": r["regime_n_high"],
        "regime slope": r["regime_slope"],
    }])
    formats = {"slope": "{:.2f}", "95% low": "{:.2f}", "95% high": "{:.2f}", "slope of medians": "{:.2f}",
               "band": "{:.2f}", "regime slope": or_dash(data["regime slope"], "{:.2f}"),
               "regime n from": or_dash(data["regime n from"], "{:.0f}"),
               "regime n to": or_dash(data["regime n to"], "{:.0f}")}
    note = timing_note(f"Slope of log(minimum time) against log(n), {r['interval']} ({r['bootstrap']} "
                       f"draws, seed {r['bootstrap_seed']}); the regime is the longest run of local slopes "
                       "within 2 +- band", load("timing_exponent", "machine"), "the slope and its interval")
    points = load("timing_exponent", "points")
    disturbed = disturbance.flags(points)
    regime = disturbed[(points["n"] >= r["regime_n_low"]) & (points["n"] <= r["regime_n_high"])]
    table = Table(data, formats, disturbance.noted(note, disturbance.legend(
        disturbed, "the slope, its 95% interval and the slope of medians, fitted over every length")))
    every = disturbance.any_rows(disturbed, 1)
    return disturbance.mark_columns(table, {"slope": every, "95% low": every, "95% high": every,
                                            "slope of medians": every,
                                            "regime slope": disturbance.any_rows(regime, 1)})


def build_timing_exponent_points(load):
    """Beyond 001: median and minimum time for each n of the log grid, and the local slope to the previous."""
    df = load("timing_exponent", "points").sort_values("n")
    data = pd.DataFrame({
        "n": df["n"], "median time (ms, machine-bound)": df["median_seconds"] * 1000,
        "min time (ms, machine-bound)": df["min_seconds"] * 1000, "local slope": df["local_slope"],
        "quadratic": ["yes" if q else "no" for q in df["quadratic"]],
    })
    formats = {"median time (ms, machine-bound)": time_formats(data["median time (ms, machine-bound)"]),
               "min time (ms, machine-bound)": time_formats(data["min time (ms, machine-bound)"]),
               "local slope": or_dash(data["local slope"], "{:.2f}")}
    r = one(load("timing_exponent"))
    note = timing_note(f"{r['repeats']} sweeps over the grid after one warm-up sweep; 'quadratic' when the "
                       f"local slope is within {r['band']:g} of 2", load("timing_exponent", "machine"),
                       "the local slopes, not the times")
    disturbed = disturbance.flags(df)
    table = Table(data, formats, disturbance.noted(note, disturbance.legend(disturbed)))
    return disturbance.mark_columns(table, {"median time (ms, machine-bound)": disturbed,
                                            "min time (ms, machine-bound)": disturbed,
                                            "local slope": disturbance.with_previous(disturbed)})


def _memory_rows(memory):
    """The cache formula rows: this model in MiB, the realistic configurations in GiB, as the listing."""
    rows = []
    for _, m in memory.iterrows():
        config = (f"{m['layers']} layers, {m['kv_heads']} K,V pairs, d_head {m['d_head']}, T = {m['T']}, "
                  f"batch {m['batch']}, {m['bytes_per_value']}-byte values")
        if m["label"] == "this model":
            rows.append((f"cache formula, this model: {config} (MiB)", m["mib"], "{:.2f}"))
        else:
            rows.append((f"cache formula, {m['label']}: {config} (GiB)", m["gib"], "{:.3f}"))
    return rows


def build_kv_cache(load):
    """001: one generation without and one with the key-value cache, and the cache's memory formula."""
    r = one(load("kv_cache"))
    rows = [
        ("maximum deviation between the two generations", r["max_deviation"], "{:.1e}"),
        *((label, r[column], time_format(r[column])) for label, column in (
            ("without cache (s, machine-bound)", "seconds_without_cache"),
            ("with cache (s, machine-bound)", "seconds_with_cache"))),
        ("ratio", r["speedup"], "{:.1f}x"),
    ]
    timed = len(rows)  # the rows read from the timed generations, the memory rows after them
    rows += _memory_rows(load("kv_cache", "memory"))
    note = timing_note(f"{r['layers']} layers, {r['heads']} heads, d = {r['d']}, prompt of {r['prompt']} "
                       f"rows, {r['generated']} generated, each time the minimum of {_passes(r)} (seed "
                       f"{r['seed']}); the deviation "
                       "is round-off, its last digits depend on the CPU and BLAS kernel; the memory rows are "
                       "the formula, exact",
                       load("kv_cache", "machine"), "the ratio and the memory")
    disturbed = disturbance.flags(load("kv_cache"))  # shape (1,): the one case's two generations
    table = quantities(rows, ["quantity", "value"], disturbance.noted(note, disturbance.legend(disturbed)))
    flags = [bool(disturbed.any()) and 0 < i < timed for i in range(len(rows))]  # the deviation is no time
    return disturbance.mark_columns(table, {"value": flags})


def build_kv_speedup(load):
    """Beyond 001: the cache's speed-up against the generated length."""
    df = load("kv_speedup").sort_values("generated")
    data = pd.DataFrame({
        "generated": df["generated"], "without cache (s, machine-bound)": df["min_seconds_without_cache"],
        "with cache (s, machine-bound)": df["min_seconds_with_cache"], "speed-up": df["speedup"],
        "length x": df["length_ratio"], "speed-up x": df["speedup_growth"],
        "max deviation": df["max_deviation"],
    })
    formats = {"without cache (s, machine-bound)": time_formats(df["min_seconds_without_cache"]),
               "with cache (s, machine-bound)": time_formats(df["min_seconds_with_cache"]),
               "speed-up": "{:.1f}", "length x": or_dash(data["length x"], "{:.0f}"),
               "speed-up x": or_dash(data["speed-up x"], "{:.2f}"), "max deviation": "{:.1e}"}
    r = df.iloc[0]
    note = timing_note(f"The toy decoder of the cache listing ({r['layers']} layers, {r['heads']} heads, d = "
                       f"{r['d']}, prompt {r['prompt']}), minimum of {r['repeats']} sweeps per length",
                       load("kv_speedup", "machine"), "the speed-up and its growth with the length")
    disturbed = disturbance.flags(df)
    table = Table(data, formats, disturbance.noted(note, disturbance.legend(disturbed)))
    return disturbance.mark_columns(table, {"without cache (s, machine-bound)": disturbed,
                                            "with cache (s, machine-bound)": disturbed, "speed-up": disturbed,
                                            "speed-up x": disturbance.with_previous(disturbed)})


def build_score_memory(load):
    """Beyond 000: the traced peak memory of one attention against the n² x bytes of its score matrix."""
    df = load("score_memory").sort_values(["procedure", "n"])
    data = pd.DataFrame({
        "procedure": df["procedure"], "n": df["n"], "n^2 x bytes (MiB)": df["formula_mib"],
        "traced peak (MiB)": df["peak_mib"], "peak / formula": df["peak_over_formula"],
    })
    formats = {"n^2 x bytes (MiB)": "{:.2f}", "traced peak (MiB)": "{:.2f}", "peak / formula": "{:.2f}"}
    r = df.iloc[0]
    note = (f"Largest extra memory seen by tracemalloc during one call (d = {r['d']}, seed {r['seed']}); "
            "memory is not a time: it is the same on any machine with the same NumPy, and peak / formula "
            "counts the score-sized matrices alive at once.")
    return Table(data, formats, note)
