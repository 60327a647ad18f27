"""Every table and figure of the report: its article, section, the results it reads, its code.

Pure Python (no pandas, no matplotlib), so that Snakemake can read it to build the
DAG. A table ``name`` is built by ``build_<name>(load)`` in its module and lands in
``results/tables/<name>.md`` and ``.csv``; a figure by ``draw_<name>(load)`` in
``results/figures/<name>.svg``; its caption is ``workflow/report/<name>.rst``.
"""

from dataclasses import dataclass

from attnrepro import plan

TABLES_DIR = f"{plan.RESULTS}/tables"
FIGURES_DIR = f"{plan.RESULTS}/figures"


@dataclass(frozen=True)
class Product:
    name: str
    kind: str  # "table" or "figure"
    article: str
    section: str
    needs: tuple  # experiment ids whose results it reads (all their tables)
    module: str  # attnrepro.report.<module>
    # requires(config) -> bool: the cases it reads exist (beyond its experiments being on);
    # None: every run of its experiments has them
    requires: object = None

    @property
    def outputs(self):
        if self.kind == "table":
            return {"md": f"{TABLES_DIR}/{self.name}.md", "csv": f"{TABLES_DIR}/{self.name}.csv"}
        return {"svg": f"{FIGURES_DIR}/{self.name}.svg"}


def _table(name, article, section, needs, module, requires=None):
    return Product(name, "table", article, section, tuple(needs), f"attnrepro.report.{module}", requires)


def _figure(name, article, section, needs, module, requires=None):
    return Product(name, "figure", article, section, tuple(needs), f"attnrepro.report.{module}", requires)


def _ablations(config):
    """The ablation cases of ``train`` (params), if their base run is a case of its grid, else [].

    What ``formats.ablation_runs`` reads: the runs "ablation-<name>" of ``train.ablations`` and
    the grid's run with their task, L and seed (``train.ablation_base``).
    """
    cases = plan.cases("train", config).values()
    ablations = [c for c in cases if c.get("ablation", "full") != "full"]
    grid = {(c.get("task"), c.get("L"), c.get("seed")) for c in cases if c.get("ablation", "full") == "full"}
    if not all((c.get("task"), c.get("L"), c.get("seed")) in grid for c in ablations):
        return []
    return ablations


def has_ablations(config):
    """The run trains at least one ablation, and its base run."""
    return bool(_ablations(config))


def has_blind_ablation(config):
    """The run trains an ablation without the position table (``position: false``, as
    ``no_position``; copy_without_position selects by that setting, not by name), and its base."""
    return any(not c.get("position", True) for c in _ablations(config))


PRODUCTS = {
    p.name: p
    for p in [
        _table("scale_table", "001", "Why you divide by the square root of d_k, measured", ["scale_table"], "tables_001"),
        # verification listings (non-training, non-timing) of 000, 001 and 003
        _table("attention_check", "000", "Attention as a soft lookup in a dictionary", ["attention_vs_sdpa"], "tables_000"),
        _table("attention_weights", "000", "Attention as a soft lookup in a dictionary", ["attention_vs_sdpa"], "tables_000"),
        _table("scale_sweep", "000", "Why we divide by sqrt(d_k)", ["scale_sweep"], "tables_000"),
        _table("multihead_check", "000", "Multiple heads", ["multihead_vs_torch"], "tables_000"),
        _table("multihead_params", "000", "Multiple heads", ["multihead_vs_torch"], "tables_000"),
        _table("position_check", "000", "Position: attention does not know the order", ["permutation_position"], "tables_000"),
        _table("causal_change", "000", "Encoder, decoder and the causal mask", ["causal_change"], "tables_000"),
        _table("batched_shapes", "001", "Scaled dot-product attention, derived", ["batched_attention"], "tables_001"),
        _table("sdpa_check", "001", "Scaled dot-product attention, derived (PyTorch check)", ["sdpa_causal"], "tables_001"),
        _table("mask_before_after", "001", "The causal mask: minus infinity before the softmax", ["mask_before_after"], "tables_001"),
        _table("mask_patterns", "001", "The causal mask: minus infinity before the softmax", ["mask_before_after"], "tables_001"),
        _table("multihead_shapes", "001", "Multiple heads: why h heads of d/h", ["multihead_shapes"], "tables_001"),
        _table("multihead_permutation", "001", "Multiple heads: why h heads of d/h", ["multihead_shapes"], "tables_001"),
        _table("exercises", "001", "Exercises 1 and 2 (solutions)", ["exercises"], "tables_001"),
        _table("self_attention_weights", "003", "Step 1: self-attention on a five-token sentence", ["self_attention_tokens"], "tables_003"),
        _table("saturation", "003", "Step 2: see softmax saturate without scaling", ["saturation"], "tables_003"),
        _table("causal_weights", "003", "Step 3: add a causal mask", ["causal_weights"], "tables_003"),
        _table("order_blindness", "003", "Step 4: order-blindness and the sinusoidal fix", ["order_blindness"], "tables_003"),
        _table("positional_encoding", "003", "Step 4: order-blindness and the sinusoidal fix", ["order_blindness"], "tables_003"),
        _table("torch_modules", "003", "Attention and transformers in PyTorch", ["torch_modules"], "tables_003"),
        _table("two_heads", "003", "Multi-head attention: two heads concatenated", ["two_heads"], "tables_003"),
        _figure("scale_sweep_curves", "000", "Why we divide by sqrt(d_k)", ["scale_sweep"], "figures_checks"),
        _figure("causal_change_bars", "000", "Encoder, decoder and the causal mask", ["causal_change"], "figures_checks"),
        _figure("scale_table_curves", "001", "Why you divide by the square root of d_k, measured", ["scale_table"], "figures_checks"),
        _figure("mask_before_after_heatmaps", "001", "The causal mask: minus infinity before the softmax", ["mask_before_after"], "figures_checks"),
        _figure("positional_encoding_heatmap", "003", "Step 4: order-blindness and the sinusoidal fix", ["order_blindness"], "figures_checks"),
        _figure("position_encoding_heatmap", "000", "Position: attention does not know the order", ["permutation_position"], "figures_checks"),
        # the NumPy decoder of 001: parameter count, gradient checks, trainings, attention map
        _table("block_params", "001", "The complete block, and the count of its parameters", ["block_params"], "tables_decoder"),
        _table("block_breakdown", "001", "The complete block, and the count of its parameters", ["block_params"], "tables_decoder"),
        _table("grad_check", "001", "The complete block, and the count of its parameters (finite-difference gradient check)", ["grad_check"], "tables_decoder"),
        _table("autograd_check", "001", "The complete block, and the count of its parameters (PyTorch autograd check, beyond the article)", ["autograd_check"], "tables_decoder"),
        _table("autograd_tensors", "001", "The complete block, and the count of its parameters (PyTorch autograd check, beyond the article)", ["autograd_check"], "tables_decoder"),
        _table("train_accuracy", "001", "The experiment: copying and sorting sequences", ["train"], "tables_decoder"),
        _table("ablations", "001", "Three ablations, and two that show nothing", ["train"], "tables_decoder",
               requires=has_ablations),
        _table("copy_without_position", "001", "Three ablations, and two that show nothing", ["train"],
               "tables_decoder", requires=has_blind_ablation),
        _table("attention_map", "001", "The attention map, and why it is not an explanation", ["attention_map"], "tables_decoder"),
        _figure("attention_heatmap", "001", "The attention map, and why it is not an explanation", ["attention_map"], "figures_decoder"),
        _figure("attention_heads", "001", "The attention map, and why it is not an explanation", ["attention_map"], "figures_decoder"),
        _figure("training_accuracy", "001", "The experiment: copying and sorting sequences", ["train"], "figures_decoder"),
        _figure("loss_curves", "001", "The experiment: copying and sorting sequences", ["train"], "figures_decoder"),
        _figure("ablation_bars", "001", "Three ablations, and two that show nothing", ["train"], "figures_decoder",
                requires=has_ablations),
        _figure("block_breakdown_bars", "001", "The complete block, and the count of its parameters", ["block_params"], "figures_decoder"),
        # timings: 000's n² cost, 001's O(T²) and key-value cache, and their extensions
        _table("quadratic_cost", "000", "What the n² term costs", ["quadratic_cost"], "tables_timing"),
        _table("score_memory", "000", "What the n² term costs (peak memory, beyond the article)", ["score_memory"], "tables_timing"),
        _table("causal_timing", "001", "The count that decides everything: O(T²)", ["causal_timing"], "tables_timing"),
        _table("timing_exponent", "001", "The count that decides everything: O(T²) (log grid, beyond the article)", ["timing_exponent"], "tables_timing"),
        _table("timing_exponent_points", "001", "The count that decides everything: O(T²) (log grid, beyond the article)", ["timing_exponent"], "tables_timing"),
        _table("kv_cache", "001", "The key-value cache: what is kept, and how much it weighs", ["kv_cache"], "tables_timing"),
        _table("kv_speedup", "001", "The key-value cache (speed-up against length, beyond the article)", ["kv_speedup"], "tables_timing"),
        _figure("attention_cost_loglog", "001", "The count that decides everything: O(T²)", ["quadratic_cost", "causal_timing", "timing_exponent"], "figures_timing"),
        _figure("kv_speedup_curve", "001", "The key-value cache (speed-up against length, beyond the article)", ["kv_speedup", "kv_cache"], "figures_timing"),
        _figure("score_memory_curve", "000", "What the n² term costs (peak memory, beyond the article)", ["score_memory"], "figures_timing"),
    ]
}


def enabled(config):
    """The products whose experiments are all part of the run, and whose cases exist in it."""
    on = set(plan.enabled(config))
    return [p for p in PRODUCTS.values()
            if set(p.needs) <= on and (p.requires is None or p.requires(config))]


def input_files(product, config):
    """The Parquet files a product reads under ``config``."""
    return [path for e in product.needs for path in plan.experiment_outputs(e, config)]


def all_outputs(config):
    return [path for p in enabled(config) for path in p.outputs.values()]


# The ledger's evidence (workflow/rules/numerics.smk). Each is a named target (`numerics`,
# `seeds`); a config switch (numerics.sweep, seed_distribution.build) adds it to the default
# target and to the ledger's inputs (the ledger cites the sweep and judges its stochastic
# claims by the seed distribution).
NUMERICS_PRODUCTS = {key: f"{plan.RESULTS}/numerics/ledger_numerics.{key}" for key in ("csv", "md", "svg")}
SEED_PRODUCTS = {key: f"{plan.RESULTS}/seeds/seed_distribution.{key}" for key in ("csv", "md", "svg")}


# name -> (its target, the config switch "<section>.<key>" that adds it to the run)
EVIDENCE = {"numerics": ("numerics", "numerics.sweep"), "seeds": ("seeds", "seed_distribution.build")}
EVIDENCE_PRODUCTS = {"numerics": NUMERICS_PRODUCTS, "seeds": SEED_PRODUCTS}


def evidence(config):
    """{"numerics": paths, "seeds": paths} of the evidence products the config switches on."""
    out = {}
    for name, (_, switch) in EVIDENCE.items():
        section, key = switch.split(".")
        if (config.get(section) or {}).get(key):
            out[name] = EVIDENCE_PRODUCTS[name]
    return out
