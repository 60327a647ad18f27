"""Every table and figure of the report: the experiments it reads and the function that builds it.

Pure Python (no pandas, no matplotlib), so that Snakemake can read it to build the DAG.

A product names its builder, ``"<module>:<function>"`` under ``attnrepro.report.products``: a table's
function returns a ``render.Table`` and the product lands in ``results/tables/<name>.md`` and
``.csv``; a figure's returns a matplotlib Figure, in ``results/figures/<name>.svg``. Its caption is
``workflow/report/<name>.rst``. Its article and section are those of its first experiment
(``plan.EXPERIMENTS``) unless the entry gives others. ``python -m attnrepro list`` prints the
products of each experiment; ``results/README.md`` gives the whole chain of each.
"""

from dataclasses import dataclass

from attnrepro import paths
from attnrepro.dag import plan


@dataclass(frozen=True)
class Product:
    name: str
    kind: str  # "table" or "figure"
    experiments: tuple  # experiment ids whose results it reads (all their tables)
    builder: str  # "<module>:<function>" under attnrepro.report.products
    article: str  # the id of its article (config articles)
    section: str  # the section of the article it belongs to
    # when(config) -> bool: the cases it reads exist (beyond its experiments being on);
    # None: every run of its experiments has them
    when: object = None
    # its note says this machine's speed against its article's (results/speed.csv, the ledger's):
    # the tables of machine-bound times
    speed: bool = False

    @property
    def module(self):
        """The module that builds it: ``attnrepro.report.products.<module>``."""
        return f"attnrepro.report.products.{self.builder.partition(':')[0]}"

    @property
    def function(self):
        return self.builder.partition(":")[2]

    @property
    def outputs(self):
        if self.kind == "table":
            return {"md": paths.table_path(self.name, "md"), "csv": paths.table_path(self.name, "csv")}
        return {"svg": paths.figure_path(self.name)}


def _product(kind, name, experiments, builder, article=None, section=None, when=None, speed=False):
    first = plan.EXPERIMENTS[experiments[0]]
    return Product(name, kind, tuple(experiments), builder, article or first.article,
                   section or first.section, when, speed)


def table(name, experiments, builder, **where):
    """A table product; ``where``: article, section (when not its first experiment's), when, speed."""
    return _product("table", name, experiments, builder, **where)


def figure(name, experiments, builder, **where):
    """A figure product; ``where`` as for :func:`table`."""
    return _product("figure", name, experiments, builder, **where)


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


_O_T2 = "The count that decides everything: O(T²)"

PRODUCTS = {
    p.name: p
    for p in [
        # the verification listings (non-training, non-timing) of 000, 001 and 003
        table("attention_check", ["attention_vs_sdpa"], "tables_checks:build_attention_check"),
        table("attention_weights", ["attention_vs_sdpa"], "tables_checks:build_attention_weights"),
        table("scale_sweep", ["scale_sweep"], "tables_checks:build_scale_sweep"),
        table("multihead_check", ["multihead_vs_torch"], "tables_checks:build_multihead_check"),
        table("multihead_params", ["multihead_vs_torch"], "tables_checks:build_multihead_params"),
        table("position_check", ["permutation_position"], "tables_checks:build_position_check"),
        table("causal_change", ["causal_change"], "tables_checks:build_causal_change"),
        table("batched_shapes", ["batched_attention"], "tables_checks:build_batched_shapes"),
        table("sdpa_check", ["sdpa_causal"], "tables_checks:build_sdpa_check"),
        table("scale_table", ["scale_table"], "tables_checks:build_scale_table"),
        table("mask_before_after", ["mask_before_after"], "tables_checks:build_mask_before_after"),
        table("mask_patterns", ["mask_before_after"], "tables_checks:build_mask_patterns"),
        table("multihead_shapes", ["multihead_shapes"], "tables_checks:build_multihead_shapes"),
        table("multihead_permutation", ["multihead_shapes"], "tables_checks:build_multihead_permutation"),
        table("exercises", ["exercises"], "tables_checks:build_exercises"),
        table("self_attention_weights", ["self_attention_tokens"],
              "tables_checks:build_self_attention_weights"),
        table("saturation", ["saturation"], "tables_checks:build_saturation"),
        table("causal_weights", ["causal_weights"], "tables_checks:build_causal_weights"),
        table("order_blindness", ["order_blindness"], "tables_checks:build_order_blindness"),
        table("positional_encoding", ["order_blindness"], "tables_checks:build_positional_encoding"),
        table("torch_modules", ["torch_modules"], "tables_checks:build_torch_modules"),
        table("two_heads", ["two_heads"], "tables_checks:build_two_heads"),
        figure("scale_sweep_curves", ["scale_sweep"], "figures_checks:draw_scale_sweep_curves"),
        figure("causal_change_bars", ["causal_change"], "figures_checks:draw_causal_change_bars"),
        figure("scale_table_curves", ["scale_table"], "figures_checks:draw_scale_table_curves"),
        figure("mask_before_after_heatmaps", ["mask_before_after"],
               "figures_checks:draw_mask_before_after_heatmaps"),
        figure("positional_encoding_heatmap", ["order_blindness"],
               "figures_checks:draw_positional_encoding_heatmap"),
        figure("position_check_heatmap", ["permutation_position"],
               "figures_checks:draw_position_check_heatmap"),
        # the NumPy decoder of 001: parameter count, gradient checks, trainings, attention map
        table("block_params", ["block_params"], "tables_decoder:build_block_params"),
        table("block_breakdown", ["block_params"], "tables_decoder:build_block_breakdown"),
        table("grad_check", ["grad_check"], "tables_decoder:build_grad_check"),
        table("autograd_check", ["autograd_check"], "tables_decoder:build_autograd_check"),
        table("autograd_tensors", ["autograd_check"], "tables_decoder:build_autograd_tensors"),
        table("train_accuracy", ["train"], "tables_decoder:build_train_accuracy"),
        table("ablations", ["train"], "tables_decoder:build_ablations",
              section="Three ablations, and two that show nothing", when=has_ablations),
        table("copy_without_position", ["train"], "tables_decoder:build_copy_without_position",
              section="Three ablations, and two that show nothing", when=has_blind_ablation),
        table("attention_map", ["attention_map"], "tables_decoder:build_attention_map"),
        figure("attention_heatmap", ["attention_map"], "figures_decoder:draw_attention_heatmap"),
        figure("attention_heads", ["attention_map"], "figures_decoder:draw_attention_heads"),
        figure("train_accuracy_points", ["train"], "figures_decoder:draw_train_accuracy_points"),
        figure("loss_curves", ["train"], "figures_decoder:draw_loss_curves"),
        figure("ablation_bars", ["train"], "figures_decoder:draw_ablation_bars",
               section="Three ablations, and two that show nothing", when=has_ablations),
        figure("block_breakdown_bars", ["block_params"], "figures_decoder:draw_block_breakdown_bars"),
        # timings: 000's n² cost, 001's O(T²) and key-value cache, and their extensions
        table("quadratic_cost", ["quadratic_cost"], "tables_timing:build_quadratic_cost", speed=True),
        table("score_memory", ["score_memory"], "tables_timing:build_score_memory"),
        table("causal_timing", ["causal_timing"], "tables_timing:build_causal_timing", speed=True),
        table("timing_exponent", ["timing_exponent"], "tables_timing:build_timing_exponent"),
        table("timing_exponent_points", ["timing_exponent"], "tables_timing:build_timing_exponent_points",
              speed=True),
        table("kv_cache", ["kv_cache"], "tables_timing:build_kv_cache", speed=True),
        table("kv_speedup", ["kv_speedup"], "tables_timing:build_kv_speedup", speed=True),
        figure("attention_cost_loglog", ["quadratic_cost", "causal_timing", "timing_exponent"],
               "figures_timing:draw_attention_cost_loglog", article="001", section=_O_T2),
        figure("kv_speedup_curve", ["kv_speedup", "kv_cache"], "figures_timing:draw_kv_speedup_curve"),
        figure("score_memory_curve", ["score_memory"], "figures_timing:draw_score_memory_curve"),
    ]
}


def sections(product):
    """The --sections of a figure's job (attnrepro.report.products.style): the article and section
    of its experiments and its own, which its title names."""
    return {"experiments": {e: [plan.EXPERIMENTS[e].article, plan.EXPERIMENTS[e].section]
                            for e in product.experiments},
            "products": {product.name: [product.article, product.section]}}


def all_sections():
    """The sections of every experiment and product: what a figure drawn by hand is titled with."""
    return {"experiments": {e.id: [e.article, e.section] for e in plan.EXPERIMENTS.values()},
            "products": {p.name: [p.article, p.section] for p in PRODUCTS.values()}}


def enabled(config):
    """The products whose experiments are all part of the run, and whose cases exist in it."""
    on = set(plan.enabled(config))
    return [p for p in PRODUCTS.values()
            if set(p.experiments) <= on and (p.when is None or p.when(config))]


def of_experiment(experiment_id):
    """The products that read ``experiment_id``'s results."""
    return [p for p in PRODUCTS.values() if experiment_id in p.experiments]


def input_files(product, config):
    """The Parquet files a product reads under ``config``."""
    return [path for e in product.experiments for path in plan.experiment_outputs(e, config)]


def all_outputs(config):
    return [path for p in enabled(config) for path in p.outputs.values()]

