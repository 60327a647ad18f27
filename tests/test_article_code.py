"""The article's own code as the yardstick of a time: its listing built from the text, timed
beside ours, and the ledger's rule that judges a time against it (report.ledger.yardstick)."""

import hashlib
import os
import subprocess
import sys
import textwrap

import pytest

from attnrepro.articles import timed
from attnrepro.dag import config as cfg
from attnrepro.experiments import _article_code
from attnrepro.report.ledger import yardstick
from attnrepro.report.ledger.claims import Claim

from conftest import REPO, not_in_a_mutant

ARTICLE = textwrap.dedent('''\
    A test article

    import numpy as np

    def double(x):
        """Twice x."""
        return helper(x) * 2

    def helper(x):
        return np.asarray(x)

    noise = np.ones(3)
    print(double(1))

    2

    Timing

    import time
    t0 = time.perf_counter(); y = double(3); t1 = time.perf_counter() - t0
    t0 = time.perf_counter(); z = double(4); t2 = time.perf_counter() - t0
    print(y, z)

    6 8
    ''')


def written(tmp_path, text=ARTICLE):
    path = tmp_path / "t.txt"
    path.write_text(text)
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_listing_gets_exactly_the_definitions_it_needs_from_earlier_ones(tmp_path):
    path, digest = written(tmp_path)
    program = timed.program(path, "t", 2, digest)
    assert program.name == "t.listing-2" and program.sha256 == digest
    # double, and what double reads (helper, np), in the article's order; nothing that computes
    assert program.source.index("import numpy") < program.source.index("def double") \
        < program.source.index("def helper") < program.source.index("import time")
    assert "noise" not in program.source and "print(double(1))" not in program.source
    timed_once = _article_code.run_once(program, expected=2)
    assert timed_once.printed == "6 8\n" and len(timed_once.seconds) == 2 == len(timed_once.cpu_seconds)
    assert all(s > 0 for s in timed_once.seconds)


def test_a_needed_name_that_an_earlier_listing_computes_is_refused_in_one_line(tmp_path):
    path, digest = written(tmp_path, ARTICLE.replace("y = double(3)", "y = double(noise)"))
    with pytest.raises(ValueError, match=r"t.listing-2 needs 'noise', which an earlier listing computes"):
        timed.program(path, "t", 2, digest)


def test_another_text_and_a_listing_that_times_nothing_are_refused(tmp_path):
    path, digest = written(tmp_path)
    with pytest.raises(ValueError, match=r"t.txt: SHA-256 .*articles\[i\]\.sha256"):
        timed.program(path, "t", 2, "0" * 64)
    with pytest.raises(ValueError, match="t.listing-1 reads no time.perf_counter"):
        timed.program(path, "t", 1, digest)
    with pytest.raises(ValueError, match="no listing 3 \\(it has 2\\)"):
        timed.program(path, "t", 3, digest)


def test_clock_reads_that_do_not_pair_up_and_a_failing_listing_stop_in_one_line():
    odd = timed.Program("import time\nt0 = time.perf_counter()\n", "x.listing-1")
    with pytest.raises(_article_code.ArticleCodeError, match="read time.perf_counter 1 times, not an even"):
        _article_code.run_once(odd)
    two = timed.Program("import time\nfor _ in range(2): time.perf_counter()\n", "x.listing-1")
    with pytest.raises(_article_code.ArticleCodeError, match="2 times, not 4"):
        _article_code.run_once(two, expected=2)
    failing = timed.Program("1 / 0\n", "x.listing-2")
    with pytest.raises(_article_code.ArticleCodeError, match="x.listing-2 failed: ZeroDivisionError"):
        _article_code.run_once(failing)
    import time
    assert time.perf_counter.__name__ == "perf_counter"  # the clock is the real one again


def test_intervals_are_the_listings_own_and_cpu_reads_lie_outside_them():
    clock = iter(range(100))
    program = timed.Program("import time\na = time.perf_counter(); b = time.perf_counter()\n"
                            "c = time.perf_counter(); d = time.perf_counter()\n", "x.listing-1")
    once = _article_code.run_once(program, wall=lambda: next(clock), cpu=lambda: next(clock))
    # reads in order: cpu 0, wall 1 | wall 2, cpu 3 | cpu 4, wall 5 | wall 6, cpu 7
    assert once.seconds == [1, 1] and once.cpu_seconds == [3, 3]
    groups = _article_code.grouped([1, 2, 3, 4, 5], [2, 3])
    assert groups == [[1, 2], [3, 4, 5]]
    with pytest.raises(_article_code.ArticleCodeError, match="do not split into groups of \\[2, 2\\]"):
        _article_code.grouped([1, 2, 3], [2, 2])


def test_article_code_needs_the_articles_own_sizes():
    config = cfg.load(cfg.DEFAULT)
    assert cfg.validate(config)  # the default: the article's sizes, article_code on
    config["causal_timing"]["passes"] = 2  # ours only: free
    cfg.validate(config)
    config["causal_timing"]["d_k"] = 32
    wanted = (r"causal_timing.article_code: the article's listing times d_k = 64, this config 32: "
              r"set causal_timing.article_code: false")
    with pytest.raises(cfg.ConfigError, match=wanted):
        cfg.validate(config)
    config["causal_timing"]["article_code"] = False
    cfg.validate(config)


def claim(column="min_ms", raw_time=True, published="1.28"):
    return Claim(id="x.t", article="001", section="s", claim="c", published=published, cls="machine-bound",
                 source={"experiment": "causal_timing", "where": {"T": 128}, "column": column},
                 raw_time=raw_time)


def judged(measured, c=None):
    return yardstick.judge(c or claim(), measured, lambda low, high: f"{measured.value:.3g}")


def test_a_time_within_the_passes_spread_of_the_article_codes_is_within_tolerance():
    m = yardstick.Measured(0.20, 0.19, (0.20, 0.22, 0.21), (0.19, 0.20, 0.21), (True,) * 3)
    verdict, _, reason = result = judged(m)
    spread = 0.21 / 0.19  # the article code's max / min: larger than ours' 0.22 / 0.20
    assert verdict == "within tolerance"
    assert result.window == pytest.approx((0.19 / spread, 0.19 * spread))
    assert "paired ratios ours / the article's code 1 to 1.1 over 3 passes" in reason
    assert "this machine runs it 6.74x as fast" in reason  # 1.28 / 0.19: information


def test_the_window_is_never_narrower_than_the_floor_and_outside_it_differs():
    tight = yardstick.Measured(0.2, 0.2 * yardstick.FLOOR * 1.01, (0.2, 0.2), (0.21, 0.21), (True, True))
    verdict, _, reason = result = judged(tight)
    assert verdict == "differs" and result.window[0] == pytest.approx(0.2 * 1.01)
    assert f"÷× {yardstick.FLOOR:g}, the least window" in reason
    slope = yardstick.Measured(2.02, 2.0, (2.02, 2.021), (2.0, 2.001), (True, True))
    verdict, _, _ = result = judged(slope, claim("loglog_slope", raw_time=False, published="2.04"))
    assert verdict == "within tolerance"
    assert result.window == pytest.approx((2.0 - yardstick.SLOPE_FLOOR, 2.0 + yardstick.SLOPE_FLOOR))


def test_disturbed_passes_are_left_out_and_said_and_one_pass_is_no_spread():
    m = yardstick.Measured(0.5, 0.2, (0.2, 0.9, 0.2), (0.2, 0.2, 0.2), (True, False, True))
    verdict, _, reason = judged(m)
    assert verdict == "disturbed"  # outside the window of the two quiet passes, a pass disturbed
    assert "1 of 3 passes disturbed (ours or the article code's), left out; the other 2" in reason
    one = yardstick.Measured(0.2, 0.2, (0.2,), (0.2,), (True,))
    assert judged(one)[0] == "inconclusive" and judged(one).window is None


@pytest.mark.full
@pytest.mark.parametrize("fixed", [True, False], ids=["thresholds-fixed", "glibc-defaults"])
def test_the_kv_cache_and_the_articles_code_agree_whatever_the_allocators_state(fixed):
    """The key-value cache's two generations, ours and the article's listing, timed pass by pass
    in one process: their speed-ups agree within the window the passes state, with the
    allocator's thresholds fixed (the timing jobs' state) and with glibc's adaptive defaults."""
    not_in_a_mutant("times the key-value cache for seconds")
    script = textwrap.dedent(f"""
        import json, hashlib
        from attnrepro.dag import config as cfg
        from attnrepro.articles import timed, catalog
        from attnrepro.experiments import kv_cache, _allocator
        config = cfg.load(cfg.DEFAULT)
        article = catalog.from_config(config)["001"]
        program = timed.program(article.text, "001", kv_cache.EXPERIMENT["article_code"], article.sha256)
        if not {fixed}:
            _allocator.steady_state = lambda: {{"allocator": "glibc defaults"}}
        tables = kv_cache.run({{**config["kv_cache"], "passes": 5}}, article_code=program)
        print(json.dumps({{t: tables[t][["speedup", "disturbed"]].to_dict("list")
                          for t in ("passes", "article_passes")}}))
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    import json
    found = json.loads(proc.stdout.splitlines()[-1])
    ours, theirs = found["passes"]["speedup"], found["article_passes"]["speedup"]
    quiet = [not (a or b) for a, b in zip(found["passes"]["disturbed"], found["article_passes"]["disturbed"])]
    measured = yardstick.Measured(min(ours), min(theirs), tuple(ours), tuple(theirs), tuple(quiet))
    c = claim("speedup", raw_time=False, published="56.6")
    verdict, _, reason = judged(measured, c)
    assert verdict in ("within tolerance", "disturbed"), reason


class Tables:
    """A ledger load of one timing experiment: ours and the article code's tables, per pass."""

    def __init__(self, ours, theirs, disturbed=()):
        def rows(values, table):
            return [{"T": 128, "pass": p, "min_ms": v, "disturbed": (table, p) in disturbed}
                    for p, v in enumerate(values)]

        other = {"T": 512, "pass": 0, "min_ms": 9.0, "disturbed": False}  # another row: not read
        self.frames = {"main": [{"T": 128, "min_ms": min(ours)}, {"T": 512, "min_ms": 9.0}],
                       "article_main": [{"T": 128, "min_ms": min(theirs)}],
                       "passes": rows(ours, "passes") + [other],
                       "article_passes": rows(theirs, "article_passes")}

    def __call__(self, experiment, table):
        import pandas as pd

        assert experiment == "causal_timing"
        if table not in self.frames:
            raise FileNotFoundError(table)
        return pd.DataFrame(self.frames[table]).assign(case="default")


def test_the_measurement_is_read_pass_by_pass_from_both_codes_tables():
    load = Tables([0.20, 0.22, 0.21], [0.19, 0.20, 0.23], disturbed={("article_passes", 1)})
    m = yardstick.read(claim(), load)
    assert m == yardstick.Measured(0.20, 0.19, (0.20, 0.22, 0.21), (0.19, 0.20, 0.23), (True, False, True))
    assert m.kept == ((0.20, 0.21), (0.19, 0.23))
    # another class, another table, a ratio over another selection, a range per row: not this rule's
    for other in (Claim(**{**claim().__dict__, "cls": "exact"}),
                  Claim(**{**claim().__dict__, "source": {**claim().source, "table": "passes"}}),
                  Claim(**{**claim().__dict__, "source": {**claim().source, "over": {"where": {"T": 512}}}}),
                  Claim(**{**claim().__dict__, "source": {**claim().source, "per": "T"}})):
        assert yardstick.read(other, load) is None
    missing = Tables([0.2], [0.2])
    del missing.frames["article_main"]  # an experiment that timed no article code
    assert yardstick.read(claim(), missing) is None
    uneven = Tables([0.2, 0.3], [0.2])
    assert yardstick.read(claim(), uneven) is None  # passes that do not pair up judge nothing
    quiet = Tables([0.2, 0.3], [0.2, 0.3])
    quiet.frames["passes"] = [{k: v for k, v in r.items() if k != "disturbed"}
                              for r in quiet.frames["passes"]]
    assert yardstick.read(claim(), quiet).quiet == (True, True)  # no column: nothing found disturbed


def test_a_reason_says_both_values_the_window_the_pairs_and_the_machine_with_its_note():
    c = Claim(**{**claim().__dict__, "note": "a raw time"})
    m = yardstick.Measured(0.20, 0.19, (0.20, 0.22, 0.21), (0.19, 0.20, 0.21), (True,) * 3)
    verdict, text, reason = yardstick.judge(c, m, lambda low, high: "0.200" if low is None else "0.2000",
                                            lambda v: f"{v:.3g}")
    assert (verdict, text) == ("within tolerance", "0.2000")
    assert reason == (
        "ours 0.2000 against the article's own code timed here beside it, article-code 0.19: accepted 0.172 "
        "to 0.21 (÷× 1.11, the larger max / min of the two's passes); paired ratios ours / the article's "
        "code 1 to 1.1 over 3 passes; as information, the author's machine: published 1.28, the article's "
        "code here 0.19: this machine runs it 6.74x as fast; a raw time")
    ratio = Claim(**{**claim("time_ratio", raw_time=False, published="20.2").__dict__})
    said = yardstick.judge(ratio, m, lambda low, high: "0.2", lambda v: f"{v:.3g}")[2]
    assert "; as information, the author's machine printed 20.2; the article's code gives 0.19 here" in said
    ranged = Claim(**{**claim().__dict__, "published": "1.2-1.5"})
    ranged_reason = yardstick.judge(ranged, m, lambda lo, hi: "0.2")[2]
    assert "this machine runs it 6.32x to 7.89x as fast" in ranged_reason
    one = yardstick.Measured(0.2, 0.19, (0.2,), (0.19,), (True,))
    assert yardstick.judge(c, one, lambda lo, hi: "0.200")[2].startswith(
        "ours 0.200 against the article's own code timed here beside it, article-code 0.19; 1 undisturbed "
        "pass: no spread to judge by; as information")
    gone = yardstick.Measured(0.2, 0.19, (0.2, 0.3), (0.19, 0.2), (True, False))
    assert yardstick.judge(c, gone, lambda lo, hi: "0.200")[0] == "disturbed"


def test_the_rule_at_its_edges():
    """What the mutants of report.ledger.yardstick asked: each edge of the rule, said."""
    seen = []

    def written(low, high):
        seen.append((low, high))
        return "w"

    at_low = yardstick.Measured(0.19 / yardstick.FLOOR, 0.19, (0.2, 0.2), (0.19, 0.19), (True, True))
    verdict, text, _ = result = yardstick.judge(claim(), at_low, written)
    assert verdict == "within tolerance" and text == "w"  # the window's ends belong to it
    assert seen == [(None, None), result.window]  # the value written beside the window that judged it
    at_high = yardstick.Measured(0.19 * yardstick.FLOOR, 0.19, (0.2, 0.2), (0.19, 0.19), (True, True))
    assert yardstick.judge(claim(), at_high, written)[0] == "within tolerance"
    wide = yardstick.Measured(0.2, 0.2, (0.2, 0.3), (0.2, 0.21), (True, True))
    low, high, said = yardstick.window(claim(), 0.2, wide.ours, wide.theirs)
    assert (low, high) == pytest.approx((0.2 / 1.5, 0.3)) and said.startswith("÷× 1.5, the larger max / min")
    slope = claim("loglog_slope", raw_time=False)
    low, high, said = yardstick.window(slope, 2.0, (1.9, 2.0), (2.0, 2.01))
    assert (low, high) == pytest.approx((1.9, 2.1)) and said == "± 0.1, the larger range of the two's passes"
    said = yardstick.window(slope, 2.0, (2.0, 2.001), (2.0, 2.0))[2]
    assert said == f"± {yardstick.SLOPE_FLOOR:g}, the least window: the passes' ranges are narrower, 0.001"
    noted = Claim(**{**claim().__dict__, "note": "its note"})
    one = yardstick.Measured(0.2, 0.19, (0.2, 0.9), (0.19, 0.2), (True, False))
    verdict, text, reason = yardstick.judge(noted, one, lambda lo, hi: "w")
    assert (verdict, text) == ("disturbed", "w")
    assert "; 1 undisturbed pass: no spread to judge by; 1 of 2 passes disturbed" in reason
    assert reason.endswith("; its note")
    zero = yardstick.Measured(0.2, 0.0, (0.2, 0.2), (0.0, 0.0), (True, True))
    assert "the article's code gives 0 here" in yardstick.machine(claim(), zero, lambda v: f"{v:g}")


def test_a_selector_without_rows_named_and_one_of_another_table_are_read_right():
    load = Tables([0.2, 0.3], [0.2, 0.3])
    for table in ("main", "article_main", "passes", "article_passes"):  # kv_cache's: one row, no where
        load.frames[table] = [{k: v for k, v in r.items() if k != "T"} for r in load.frames[table]
                              if r.get("T") == 128]
    whole = Claim(**{**claim().__dict__, "source": {"experiment": "causal_timing", "column": "min_ms"}})
    assert yardstick.read(whole, load) == yardstick.Measured(0.2, 0.2, (0.2, 0.3), (0.2, 0.3), (True, True))
    load.frames["single"] = [{"min_ms": 0.3}]
    other = Claim(**{**whole.__dict__, "source": {**whole.source, "table": "single"}})
    assert yardstick.read(other, load) is None  # a table other than main: not a time of the passes


def test_the_ledger_judges_a_time_by_the_article_code_and_says_both_values():
    """verdicts.evaluate on the tables of a timing experiment that timed the article's code: the
    yardstick decides, the article code's value fills column article_code, its window the bounds;
    the speed factor is published over the article's code here."""
    from attnrepro.report.ledger import speed, verdicts

    load = Tables([0.20, 0.22, 0.21], [0.19, 0.20, 0.21])
    row = verdicts.evaluate([claim()], load).iloc[0]
    assert (row["article_code"], row["reproduced"], row["verdict"]) == ("0.190", "0.200", "within tolerance")
    assert (row["accepted_low"], row["accepted_high"]) == pytest.approx((0.19 / (0.21 / 0.19), 0.21))
    assert row["reason"].startswith("ours 0.200 against the article's own code timed here beside it, "
                                    "article-code 0.190: accepted 0.172 to 0.210")
    factors = verdicts.raw_time_factors([claim()], load)
    assert factors["001"].ratios == {"x.t": pytest.approx(1.28 / 0.19)}  # the article's code, not ours
    assert speed.judging(verdicts.evaluate([claim()], load), None) == {"001": None}
    exact = Claim(**{**claim().__dict__, "cls": "exact", "published": "0.2"})
    plain = verdicts.evaluate([exact], load).iloc[0]
    assert (plain["article_code"], plain["verdict"]) == ("", "reproduced")  # no time: no yardstick
    missing = Claim(**{**claim().__dict__, "source": {**claim().source, "where": {"T": 4096}}})
    assert verdicts.evaluate([missing], load).iloc[0]["article_code"] == ""  # no value: nothing to judge


def test_a_time_the_article_measured_alone_is_not_comparable_and_says_what_the_factor_makes_of_it():
    from attnrepro.report.ledger import speed, verdicts

    alone = Claim(**{**claim().__dict__, "published": "35 s", "why": verdicts.ALONE,
                     "rationale": "alone there"})
    ranged = Claim(**{**alone.__dict__, "published": "28-42 s", "note": "its note"})
    assert verdicts.judge(ranged, 5.37, factor=speed.Factor("001", 7.0, 6.0, 8.0, {"a": 7.0}))[2].endswith(
        "the published time would be about 4 to 6 s here; its note")
    factor = speed.Factor("001", 7.0, 6.0, 8.0, {"a": 7.0})
    assert verdicts.judge(alone, 5.37, factor=factor, rule=speed.Rule(3.0, "w")) == (
        "inconclusive", "5.37 s", "not comparable (alone there); as information, at this machine's speed "
        "factor for the article, 7x (from the article's code timed here), the published time would be "
        "about 5 s here")
    assert verdicts.judge(alone, 5.37) == ("inconclusive", "5.37 s", "not comparable (alone there)")


def test_a_time_on_its_windows_edge_is_written_with_the_digits_that_put_it_outside():
    from attnrepro.report.ledger import verdicts

    load = Tables([0.21001, 0.21001], [0.2, 0.2])  # the window: 0.2 / 1.05 to 0.2 x 1.05 = 0.21
    row = verdicts.evaluate([claim()], load).iloc[0]
    assert (row["verdict"], row["reproduced"]) == ("differs", "0.21001")  # "0.210" would read inside


def test_a_value_on_a_rounding_tie_at_its_claims_decimals_says_so():
    from attnrepro.report.ledger import verdicts

    tied = Claim(id="x", article="001", section="s", claim="c", published="1.0", cls="exact",
                 source={"experiment": "e", "column": "c"}, decimals=3)
    assert verdicts.judge(tied, 0.9995)[2].startswith("on an exact rounding tie: 0.9995 rounds to 1.000")


def test_a_prose_value_is_rewritten_like_itself_on_its_side_of_the_cells_window():
    from attnrepro.report.ledger import verdicts

    assert verdicts._on_its_side("0.90 s", 0.905, 0.5, 0.9) == "0.91 s"  # its unit kept, outside as 0.905 is
    assert verdicts._on_its_side("n/a", 0.905, 0.5, 0.9) == "n/a"
