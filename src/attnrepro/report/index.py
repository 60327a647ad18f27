"""``results/README.md``: one line for every output of the run."""

import re
import types

from attnrepro import evidence
from attnrepro.articles import catalog as articles_catalog
from attnrepro.dag import plan
from attnrepro.report.products import catalog
from attnrepro import paths

CAPTIONS = paths.REPO / "workflow" / "report"
READS = ("workflow/report/*.rst",)  # the products' captions (attnrepro.dag.code_inputs)


# A caption's opening "Article 001, "<section>" (...): ": the index line names both already.
_ARTICLE_PREFIX = re.compile(r'^Article \d{3}, (?:"[^"]*"(?: \([^)]*\))?|[^":]*): ')


def render_caption(name, config):
    """``workflow/report/<name>.rst`` rendered as ``snakemake --report`` renders it: a Jinja2
    template with ``snakemake.config`` (here an undefined name is an error); "" without the file."""
    path = CAPTIONS / f"{name}.rst"
    if not path.is_file():
        return ""
    import jinja2  # only the index renders captions (jinja2 comes with snakemake)

    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    return env.from_string(path.read_text()).render(snakemake=types.SimpleNamespace(config=config))


def _caption(name, config):
    """The first sentence of the caption under ``config``, without its "Article NNN, "<section>": "."""
    text = " ".join(render_caption(name, config).split())
    if not text:
        return ""
    return _ARTICLE_PREFIX.sub("", text.split(". ")[0].rstrip(".") + ".")


def _rel(path):
    return paths.relative(path)


def _evidence_lines(config):
    """One line per evidence file the config switches on (attnrepro.evidence: its records); one
    line per product it does not."""
    on = evidence.enabled(config)
    out = []
    for name, product in evidence.PRODUCTS.items():
        files = product.paths
        if name not in on:
            stem = _rel(files["csv"]).rsplit(".", 1)[0]
            out.append(f"- {product.title} (`{stem}.{{{','.join(files)}}}`): not part of this run; "
                       f"`{product.build_command}` builds it, "
                       f"`{product.switch}: true` in the config adds it to the run.")
            continue
        for key, path in files.items():
            out.append(f"- `{_rel(path)}`: {_caption(product.captions[key], config)}")
        if product is evidence.NUMERICS:
            out.append(f"- `{_rel(paths.SETTINGS_FILE)}`: the numerics settings this machine accepts "
                       "(the `numerics_settings` probe).")
            sweep = (f"{_rel(paths.SWEEP_ROOT)}/<setting>/data/<article>/<experiment>/"
                     "<case>[.<table>].parquet")
            out.append(f"- `{sweep}`: the sweep's data, one folder per setting, laid out as `data/` "
                       "(the cases of `numerics.cases`).")
        elif product is evidence.LISTINGS:
            out.append(f"- `{_rel(paths.LISTINGS_TABLE)}`: one row per listing of the reproduced articles "
                       "(ran or failed and why, seconds, numbers printed, published and equal).")
            out.append(f"- `{_rel(paths.listing_run('<article>'))}`: each article's listings as run here "
                       "(status, seconds, what each printed, the pin and the versions).")
        else:
            trainings = _rel(plan.seed_output_path("<task>-L<L>-seed<seed>"))
            n = len(plan.seed_extra_cases(config)) * len(plan.EXPERIMENTS["train"].tables)
            out.append(f"- `{trainings}` ({n} files): its trainings beyond the run's own (`train.lengths` x "
                       "`seed_distribution.seeds`; the run's own are its files in `data/001/train/`).")
    return out


def _grid(exp):
    """The keys of the experiment's config section that fan out into one job per value."""
    keys = plan.TRAIN_FAN_OUT[:3] if exp.case_builder is not None else exp.grid
    return f" (one job per value of {' x '.join(f'`{k}`' for k in keys)})" if keys else ""


def _data_pattern(exp_id, config):
    """``data/<article>/<experiment>/*.parquet`` and how many files the run has there."""
    n = len(plan.experiment_outputs(exp_id, config))
    folder = _rel(plan.output_path(exp_id, "x")).rsplit("/", 1)[0]
    return f"`{folder}/*.parquet` ({n} file{'s' if n != 1 else ''})"


def _product_lines(product, config):
    """One product: its files and caption, then its chain from config to caption."""
    files = [f"`{_rel(path)}`" for path in product.outputs.values()]
    head = (f"- {' and '.join(files)} (article {product.article}, \u201c{product.section}\u201d): "
            f"{_caption(product.name, config)}")
    chain = []
    for exp_id in product.experiments:
        exp = plan.EXPERIMENTS[exp_id]
        chain.append(f"config `{exp_id}`{_grid(exp)} \u2192 `src/{exp.module.replace('.', '/')}.py` "
                     f"\u2192 {_data_pattern(exp_id, config)}")
    module = product.module.replace(".", "/")
    chain = "; ".join(chain) + (f" \u2192 `src/{module}.py::{product.function}` "
                                f"\u2192 caption `workflow/report/{product.name}.rst`")
    return [head, f"  {chain}"]


def _article_lines(config, unbuilt):
    """The annotated editions of the config's articles with claims (``unbuilt``: {article: why it
    is not built}) and the ledger's figures (workflow/rules/articles.smk)."""
    out = ["## Articles, annotated", ""]
    reproduced = {exp.article for exp in plan.EXPERIMENTS.values()}
    for article in articles_catalog.from_config(config).values():
        if article.id not in reproduced and article.id in unbuilt:
            out.append(f"- article {article.id} (\u201c{article.title}\u201d): not checked: "
                       f"{unbuilt[article.id]}")
            continue
        if article.id not in reproduced:  # checked from its text (articles.smk, check_<id>)
            out.append(f"- `{_rel(paths.edition_path(article.id))}` (article {article.id}, "
                       f"\u201c{article.title}\u201d): checked from its text, its listings run here; the "
                       f"claims drafted from it, `{_rel(paths.drafted_claims(article.id))}`, and the prose's "
                       f"numbers that restate none, `{_rel(paths.unclaimed_numbers(article.id))}`")
            continue
        if not article.claims:
            continue
        what = f"not built: {unbuilt[article.id]}" if article.id in unbuilt else _caption("edition", config)
        out.append(f"- `{_rel(paths.edition_path(article.id))}` (article {article.id}, "
                   f"\u201c{article.title}\u201d): {what}")
    out.append(f"- `{_rel(paths.OVERVIEW)}`: {_caption('ledger_overview', config)}")
    out.append(f"- `{_rel(paths.SPEED)}`: {_caption('machine_speed', config)}")
    return out + [""]


def lines(config, unbuilt=None, verdict=None):
    """The index; ``verdict``: the ledger's summary lines (report.ledger.headline.lines, as
    LEDGER.md opens with), first; None: the index of a run without a ledger says so."""
    out = [f"# {paths.RESULTS}/", "",
           *(verdict or ["The ledger of this run is not built: `snakemake --cores 2 ledger` builds it.", ""]),
           "Generated by the `index` rule: every output of this run. For each table and figure, its "
           "chain: the config section (in `config.resolved.yaml`) \u2192 the experiment module "
           "(`run(params)`) \u2192 its data files \u2192 the function that builds the product "
           "\u2192 its caption. `python -m attnrepro list` shows the same by experiment.", "",
           "## Ledger", "",
           "- `ledger.csv`, `LEDGER.md`: every published number beside the reproduced one, "
           "with verdicts.",
           "- `speed.csv`: this machine's speed against each article's machine, from the raw times "
           "(src/attnrepro/report/ledger/speed.py).", "",
           *_article_lines(config, unbuilt or {}), "## Tables and figures", ""]
    for product in catalog.enabled(config):
        out += _product_lines(product, config)
    out += ["", "## Data (one Parquet file per job; provenance in the file metadata)", ""]
    for exp_id in plan.enabled(config):
        exp = plan.EXPERIMENTS[exp_id]
        for path in plan.experiment_outputs(exp_id, config):
            out.append(f"- `{_rel(path)}`: {exp.id}, article {exp.article}, \"{exp.section}\"")
    out += ["", "## Evidence for the ledger", "", *_evidence_lines(config)]
    out += ["", "## Logs", "",
            "- `logs/<article>/<experiment>/<case>.log`, `logs/report/<name>.log`: each job's log.", ""]
    return "\n".join(out)
