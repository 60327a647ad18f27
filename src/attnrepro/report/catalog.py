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

    @property
    def outputs(self):
        if self.kind == "table":
            return {"md": f"{TABLES_DIR}/{self.name}.md", "csv": f"{TABLES_DIR}/{self.name}.csv"}
        return {"svg": f"{FIGURES_DIR}/{self.name}.svg"}


def _table(name, article, section, needs, module):
    return Product(name, "table", article, section, tuple(needs), f"attnrepro.report.{module}")


def _figure(name, article, section, needs, module):
    return Product(name, "figure", article, section, tuple(needs), f"attnrepro.report.{module}")


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
        _table("batched_shapes", "001", "Scaled dot-product attention, derived", ["batched_attention"], "tables_001_checks"),
        _table("sdpa_check", "001", "Scaled dot-product attention, derived (PyTorch check)", ["sdpa_causal"], "tables_001_checks"),
        _table("mask_before_after", "001", "The causal mask: minus infinity before the softmax", ["mask_before_after"], "tables_001_checks"),
        _table("mask_patterns", "001", "The causal mask: minus infinity before the softmax", ["mask_before_after"], "tables_001_checks"),
        _table("multihead_shapes", "001", "Multiple heads: why h heads of d/h", ["multihead_shapes"], "tables_001_checks"),
        _table("multihead_permutation", "001", "Multiple heads: why h heads of d/h", ["multihead_shapes"], "tables_001_checks"),
        _table("exercises", "001", "Exercises 1 and 2 (solutions)", ["exercises"], "tables_001_checks"),
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
    ]
}


def enabled(config):
    """The products whose experiments are all part of the run."""
    on = set(plan.enabled(config))
    return [p for p in PRODUCTS.values() if set(p.needs) <= on]


def input_files(product, config):
    """The Parquet files a product reads under ``config``."""
    return [path for e in product.needs for path in plan.experiment_outputs(e, config)]


def all_outputs(config):
    return [path for p in enabled(config) for path in p.outputs.values()]
