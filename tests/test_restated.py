"""One rule per number (report.ledger.restated): a prose claim takes the verdict of the cells it restates."""

import itertools

import pandas as pd
import pytest

from attnrepro.report.ledger import restated, verdicts
from attnrepro.report.ledger.claims import Claim


@pytest.fixture(scope="module")
def claims():
    return verdicts.load_claims("config/published.yaml")


def by_id(claims, claim_id):
    return next(c for c in claims if c.id == claim_id)


def test_the_cells_of_a_prose_claim_are_found_by_what_it_reads(claims):
    found = restated.restatements(claims)
    # a range stated of every row (per: L) restates no cell: its legend's rule, row by row, judges it
    assert "001.prose.train.sort-sequence-share" not in found
    assert "001.prose.train.sort-token-range" not in found
    assert found["001.prose.causal_timing.slope"] == ["001.causal_timing.slope"]
    assert found["001.prose.causal_timing.T-512.min-ms"] == ["001.causal_timing.T-512.min-ms"]
    assert found["000.prose.scale_sweep.jacobian-unscaled-4"] == [
        "000.scale_sweep.d_k-4.jacobian_norm_unscaled"]
    # a statistic of several cells (a mean over d_k, a minimum over positions) restates none of them
    assert "000.prose.scale_sweep.max-weight-scaled-around" not in found
    assert "000.prose.causal_change.none-min" not in found
    assert all(restated.PROSE in prose and not any(restated.PROSE in c for c in cells)
               for prose, cells in found.items())


def test_a_restating_prose_claim_has_the_class_of_its_cells_and_no_band_of_its_own(claims):
    for prose_id, cell_ids in restated.restatements(claims).items():
        prose = by_id(claims, prose_id)
        assert {by_id(claims, c).cls for c in cell_ids} == {prose.cls}, prose_id
        assert prose.band is None, f"{prose_id}: judged by its cells' rule, so no band of its own"
        assert prose.tolerance is None, prose_id


def test_the_least_good_verdict_wins():
    assert restated.worst(["reproduced", "within tolerance"]) == "within tolerance"
    assert restated.worst(["within tolerance", "differs", "reproduced"]) == "differs"
    assert restated.worst(["missing", "differs"]) == "missing"
    assert restated.worst(["reproduced", "a verdict not listed"]) == "a verdict not listed"
    for a, b in itertools.combinations(restated.ORDER, 2):
        assert restated.worst([a, b]) == restated.worst([b, a]) == b


def prose_claim(cls="stochastic"):
    return Claim(id="001.prose.x", article="001", section="s", claim="c", published="95-98%", cls=cls,
                 source={"experiment": "train", "column": "sequence_accuracy"})


def test_a_prose_claim_is_never_stricter_nor_looser_than_its_cells():
    cells = {"a": ("within tolerance", "r1"), "b": ("within tolerance", "r2")}
    verdict, reason, decider = restated.judge(prose_claim(), ("differs", "its own range"), cells)
    assert (verdict, decider) == ("within tolerance", "a")  # its own, stricter judgement does not count
    assert "a: within tolerance, b: within tolerance" in reason
    looser = ("within tolerance", "")
    verdict, _, decider = restated.judge(prose_claim(), looser, {**cells, "c": ("differs", "r3")})
    assert (verdict, decider) == ("differs", "c")  # nor does its own, looser one


def test_the_first_of_the_least_good_cells_decides():
    cells = {"a": ("reproduced", ""), "b": ("differs", ""), "c": ("differs", ""),
             "d": ("within tolerance", "")}
    assert restated.judge(prose_claim(), ("reproduced", ""), cells)[::2] == ("differs", "b")
    # an exact prose claim's own digit mismatch decides only when it is worse than every cell
    assert restated.judge(prose_claim("exact"), ("differs", "digits"), cells)[::2] == ("differs", "b")
    assert restated.judge(prose_claim("exact"), ("differs", "digits"), {"a": ("reproduced", "")})[::2] == (
        "differs", None)


def test_an_exact_prose_claim_whose_own_digits_differ_says_so():
    cells = {"a": ("reproduced", "")}
    own = ("differs", "exact claim: digits differ")
    verdict, reason, _ = restated.judge(prose_claim("exact"), own, cells)
    assert verdict == "differs" and "its own digits differ" in reason
    assert restated.judge(prose_claim("exact"), ("reproduced", ""), cells)[0] == "reproduced"


@pytest.mark.parametrize("cell_verdicts", [
    ("reproduced", "reproduced", "reproduced"),
    ("within tolerance", "reproduced", "differs"),
    ("missing", "within tolerance", "within tolerance"),
])
def test_the_ledger_gives_every_prose_claim_the_verdict_of_its_cells(claims, cell_verdicts):
    """Walk every prose claim of published.yaml: with its cells' verdicts set, the ledger's pass
    gives it the least good of them."""
    found = restated.restatements(claims)
    rows = {c.id: {"id": c.id, "verdict": "reproduced", "reason": ""} for c in claims}
    for cell_ids in found.values():
        for cell_id, verdict in zip(cell_ids, itertools.cycle(cell_verdicts)):
            rows[cell_id]["verdict"] = verdict
    verdicts._take_cells_verdicts(claims, rows)
    for prose_id, cell_ids in found.items():
        assert rows[prose_id]["verdict"] == restated.worst(rows[c]["verdict"] for c in cell_ids), prose_id
        assert all(c in rows[prose_id]["reason"] for c in cell_ids), prose_id


def _sort_ledger(mean_at_8):
    """The ledger of the L = 4 and L = 8 sequence-mean cells and the prose "95-98%" stated of every L,
    built by verdicts.evaluate, the L = 8 seeds around ``mean_at_8``."""
    at_8 = [mean_at_8 - 0.03, mean_at_8 + 0.01, mean_at_8 + 0.02]
    frame = pd.DataFrame({"task": "sort", "ablation": "full", "L": [4] * 3 + [8] * 3, "seed": [0, 1, 2] * 2,
                          "sequence_accuracy": [0.99, 0.98, 0.97, *at_8]})
    cells = [Claim(id=f"001.train.sort-L{L}.sequence-mean", article="001", section="s", claim="c",
                   published=p,
                   cls="stochastic", source={"experiment": "train", "where": {"task": "sort", "L": L,
                                                                              "ablation": "full"},
                                             "column": "sequence_accuracy", "reduce": "mean"})
             for L, p in ((4, "0.981"), (8, "0.951"))]
    prose = Claim(id="001.prose.train.share", article="001", section="s", claim="c", published="95-98%",
                  cls="stochastic",
                  source={"experiment": "train", "where": {"task": "sort", "ablation": "full"},
                                            "column": "sequence_accuracy", "reduce": "mean", "per": "L"})
    return verdicts.evaluate(cells + [prose], lambda e, t: frame).set_index("id")


def test_a_range_over_rows_is_judged_row_by_row_with_the_range_as_its_bounds():
    """The sort rows: the prose "95-98%" is stated of every L's mean; the legend's rule (each row
    inside the range) judges it, not its cells' (each within its seeds' spread), and its row shows
    the range as its bounds."""
    ledger = _sort_ledger(0.94)
    # the L = 8 mean, 0.940, lies outside 95-98%; its seeds (0.91 to 0.96) reach 0.951: within tolerance
    assert ledger.loc["001.train.sort-L8.sequence-mean", "verdict"] == "within tolerance"
    prose = ledger.loc["001.prose.train.share"]
    assert (prose["verdict"], prose["reproduced"]) == ("differs", "94-98%")
    assert (prose["accepted_low"], prose["accepted_high"]) == (0.95, 0.98)
    assert prose["reason"].startswith("L = 8 outside the published range")
    inside = _sort_ledger(0.96).loc["001.prose.train.share"]
    assert (inside["verdict"], inside["reproduced"], inside["accepted_low"]) == (
        "within tolerance", "96-98%", 0.95)


def _c(id, cls="exact", **source):
    return Claim(id=id, article="001", section="s", claim="c", published="1", cls=cls,
                 source={"experiment": "e", "column": "v", **source})


def test_a_cell_reads_the_same_table_column_rows_and_reduction_as_its_prose():
    prose = _c("001.prose.p", where={"L": 4})
    assert restated.cells(prose, [_c("001.e.a", where={"L": 4}, table="main")]) != []  # main by default
    explicit = _c("001.prose.p", where={"L": 4}, table="main")
    assert restated.cells(explicit, [_c("001.e.a", where={"L": 4})]) != []
    assert restated.cells(prose, [_c("001.e.b", where={"L": 4}, table="other")]) == []
    other = _c("001.prose.p", where={"L": 4}, table="other")
    assert restated.cells(other, [_c("001.e.b", where={"L": 4})]) == []
    assert restated.cells(prose, [_c("001.e.c", where={"L": 4}, reduce="single")]) != []  # "single": one row
    single = _c("001.prose.p", where={"L": 4}, reduce="single")
    assert restated.cells(single, [_c("001.e.c", where={"L": 4})]) != []
    assert restated.cells(prose, [_c("001.e.d", where={"L": 4}, reduce="mean")]) == []
    assert restated.cells(prose, [_c("001.e.e", where={"L": 4}, over={"column": "w"})]) == []  # a ratio
    assert restated.cells(prose, [_c("001.e.f", where={"L": 4}, per="L")]) == []  # a range is no cell
    ranged = _c("001.prose.r", reduce="mean", per="L", where={"task": "sort"})
    assert restated.cells(ranged, [_c("001.e.g", reduce="mean", where={"task": "sort"})]) == []  # no L
    row = _c("001.e.h", reduce="mean", where={"task": "sort", "L": 6})
    assert restated.cells(ranged, [row]) == []  # a range stated of every row: its own rule, row by row
    assert [c.id for c in restated.cells(_c("001.prose.s", reduce="mean", where={"task": "sort", "L": 6}),
                                         [row])] == ["001.e.h"]


def test_only_an_exact_or_echo_prose_claim_says_its_own_digits():
    cells = {"a": ("reproduced", "")}
    for cls in ("exact", "echo"):
        verdict, reason, _ = restated.judge(prose_claim(cls), ("differs", "digits differ"), cells)
        assert verdict == "differs" and reason.startswith("restates the cells a: reproduced")
        assert reason.endswith("; its own digits differ: digits differ")
    verdict, reason, _ = restated.judge(prose_claim("stochastic"), ("differs", "its range"), cells)
    assert verdict == "reproduced" and "its own digits" not in reason
