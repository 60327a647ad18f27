"""Timings on a busy machine: the measurement protocol (experiments._timing.measure), the ledger's
"disturbed" verdict and the cross-check of causal_timing against timing_exponent (report.ledger.disturbed)."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

from attnrepro.experiments import _timing, causal_timing
from attnrepro.report.ledger import ledger_md
from attnrepro.report.ledger import claims as published, disturbed, verdicts
from conftest import not_in_a_mutant
from report_helpers import FrameLoad

PUBLISHED = Path(__file__).resolve().parents[1] / "config" / "published.yaml"


class FakeMachine:
    """Clocks for measure(): each call of ``work`` takes 1 s of wall time, and the timing process
    runs ``shares[attempt]`` of it; the sleep before a re-measurement moves to the next attempt."""

    def __init__(self, shares):
        self.shares, self.attempt, self.wall, self.cpu = shares, 0, 0.0, 0.0
        self.slept, self.seen = [], []

    def work(self, inputs):
        self.seen.append(inputs)
        self.wall += 1.0
        self.cpu += self.shares[self.attempt]
        return len(self.seen)

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.attempt += 1

    def measure(self, inputs, calls=4, **kw):
        return _timing.measure([(self.work, (inputs,))] * calls, warmup=[(self.work, (inputs,))],
                               clocks=(lambda: self.wall, lambda: self.cpu), sleep=self.sleep, **kw)


def test_a_descheduled_batch_is_timed_again_on_the_same_inputs_until_quiet():
    machine, inputs = FakeMachine([0.5, 0.6, 0.95]), object()
    batch = machine.measure(inputs, attempts=3, pause=0.25)
    assert batch.attempts == 3 and batch.cpu_share == pytest.approx(0.95) and not batch.disturbed
    assert machine.slept == [0.25, 0.25]  # a pause before each re-measurement
    assert len(machine.seen) == 3 * (1 + 4) and all(s is inputs for s in machine.seen)  # nothing new drawn
    assert batch.seconds == [1.0] * 4 and batch.cpu_seconds == pytest.approx([0.95] * 4)
    assert batch.result == 15  # the last timed call's


def test_the_pause_before_a_re_measurement_is_at_most_the_last_batchs_wall_time():
    machine = FakeMachine([0.5, 0.5, 0.5])
    machine.measure(object(), calls=2, attempts=3, pause=5.0)
    assert machine.slept == [2.0, 2.0]  # two timed calls of 1 s each: re-measuring costs at most 2x


def test_a_quiet_first_batch_is_kept_without_a_second():
    machine = FakeMachine([0.95, 0.1])
    batch = machine.measure(object())
    assert (batch.attempts, machine.slept, batch.disturbed) == (1, [], False)


def test_past_the_bound_the_quietest_batch_is_kept_and_recorded_as_disturbed(monkeypatch):
    monkeypatch.setattr(_timing, "ATTEMPTS", 3)
    machine = FakeMachine([0.5, 0.7, 0.6, 1.0])
    batch = machine.measure(object(), pause=0)
    assert batch.attempts == 3 and len(machine.slept) == 2  # the bound: never a fourth batch
    record = batch.record()
    assert set(record) == {"cpu_share", "attempts", "disturbed", "load_before", "load_after"}
    assert record["cpu_share"] == pytest.approx(0.7) and record["disturbed"] is True
    assert record["attempts"] == 3
    assert _timing.summary([batch, FakeMachine([1.0]).measure(object())])["disturbed"] is True
    with pytest.raises(ValueError, match="attempts must be >= 1"):
        machine.measure(object(), attempts=0)


def test_the_new_columns_are_measured_columns():
    from attnrepro.dag import plan

    columns = ["T", "min_ms", "cpu_share", "attempts", "disturbed", "load_before", "load_after", "qkv_mib"]
    assert plan.measured_columns("causal_timing", columns) == columns[1:-1]


# ---- the ledger ------------------------------------------------------------------------------

def _claim(id, column, T, raw_time=False, band=(0.0, 1e9), published="1.0"):
    return verdicts.Claim.from_dict({
        "id": id, "article": "001", "section": "s", "claim": id, "published": published,
        "class": "machine-bound", "band": list(band), "location": {"line": 1, "column": 1},
        "source": {"experiment": "causal_timing", "where": {"T": T}, "column": column},
        **({"raw_time": True} if raw_time else {})})


def _causal(min_ms, disturbed_rows=(), d_k=64):
    T = [128, 512, 2048]
    return pd.DataFrame({
        "d_k": d_k, "T": T, "min_ms": min_ms, "time_ratio": [float("nan"), 20.0, 14.0],
        "cpu_share": [0.52 if t in disturbed_rows else 0.99 for t in T],
        "attempts": [3 if t in disturbed_rows else 1 for t in T],
        "disturbed": [t in disturbed_rows for t in T], "load_before": 3.31, "load_after": 3.4})


def _repeats(length, lengths, minima, spread=(1.0, 1.05, 1.3)):
    """A repeats table: three timed calls per length, ``minima`` (seconds) their minimum."""
    return pd.DataFrame({length: [n for n in lengths for _ in range(3)],
                         "seconds": [s * f for s in minima for f in spread]})


def _timed(minima_ms):
    """causal_timing's tables: main and the repeats whose minima are ``minima_ms``."""
    return {("causal_timing", "main"): _causal(minima_ms), ("causal_timing", "machine"): MACHINE,
            ("causal_timing", "repeats"): _repeats("T", [128, 512, 2048], [m / 1e3 for m in minima_ms])}


MACHINE = pd.DataFrame({"cpu": ["x"], "agreement": [1.5]})  # what experiments._timing records


def _exponent(minima, d_k=64):
    return {("timing_exponent", "main"): pd.DataFrame({"d_k": [d_k]}),
            ("timing_exponent", "machine"): MACHINE,
            # sweeps spread more than trials in a row: medians 1.5x the minimum, compared never
            ("timing_exponent", "repeats"): _repeats("n", [64, 128, 256, 512, 1024, 2048], minima,
                                                     spread=(1.0, 1.5, 2.5))}


CLAIMS = [_claim("raw-128", "min_ms", 128, raw_time=True, band=(0.05, 0.3), published="0.25"),
          _claim("raw-2048", "min_ms", 2048, raw_time=True, band=(1, 10), published="5"),
          _claim("ratio-512", "time_ratio", 512, band=(30, 40), published="35")]


def test_a_claim_read_from_a_disturbed_row_is_disturbed_never_differs_and_says_which():
    load = FrameLoad({("causal_timing", "main"): _causal([0.2, 4.0, 120.0], disturbed_rows=[2048])})
    table = verdicts.evaluate(CLAIMS, load).set_index("id")
    assert table.loc["raw-128", "verdict"] == "within tolerance"  # its own row was quiet
    raw = table.loc["raw-2048"]
    assert raw.verdict == "disturbed"
    assert raw.reason.startswith("disturbed measurement: causal_timing case default, T = 2048: the timing "
                                 "process ran 52% of the wall time (below the share a quiet core gives: "
                                 "experiments._timing) after 3 attempts; 1-minute load 3.31 before, "
                                 "3.40 after")
    assert "judged on these times it would be differs" in raw.reason
    # a ratio combines the case's rows: one disturbed row disturbs it
    assert table.loc["ratio-512", "verdict"] == "disturbed"
    quiet = verdicts.evaluate(CLAIMS, FrameLoad({("causal_timing", "main"): _causal([0.2, 4.0, 120.0])}))
    assert list(quiet["verdict"]) == ["within tolerance", "differs", "differs"]


def test_the_speed_factor_leaves_the_disturbed_raw_times_out():
    load = FrameLoad({("causal_timing", "main"): _causal([0.1, 4.0, 50.0], disturbed_rows=[2048])})
    assert verdicts.raw_time_factors(CLAIMS, load)["001"].ratios == {"raw-128": pytest.approx(2.5)}
    quiet = FrameLoad({("causal_timing", "main"): _causal([0.1, 4.0, 50.0])})
    assert set(verdicts.raw_time_factors(CLAIMS, quiet)["001"].ratios) == {"raw-128", "raw-2048"}


def test_the_cross_check_finds_the_slower_of_two_times_of_the_same_function():
    # issue 38's run (the allocator's history): causal_timing's minimum at T = 512 5.32 ms, timing_exponent's
    # 2.50 ms
    frames = {**_timed([0.21, 5.32, 62.0]),
              **_exponent([0.00005, 0.000207, 0.0009, 0.0025, 0.017, 0.0613])}
    common, found = disturbed.cross_check(FrameLoad(frames))
    assert common == [128, 512, 2048] and [d.length for d in found] == [512]
    assert found[0].slower == "causal_timing"
    assert ("minima 5.32 ms and 2.5 ms, 2.13x apart (a quiet machine gives them within 1.5x)"
            in found[0].sentence())
    table = verdicts.evaluate(CLAIMS, FrameLoad(frames)).set_index("id")
    assert table.loc["raw-128", "verdict"] == "within tolerance"
    assert table.loc["ratio-512", "verdict"] == "disturbed"
    assert "2.13x apart" in table.loc["ratio-512", "reason"]
    line = disturbed.lines(FrameLoad(frames))
    assert len(line) == 1 and "lengths 128, 512, 2048" in line[0]
    assert "causal_timing's measurement was slowed" in line[0]
    assert line[0] in ledger_md.markdown(verdicts.evaluate(CLAIMS, FrameLoad(frames)), timings=line)


def test_the_cross_check_agrees_within_its_factor_and_compares_only_the_same_d_k():
    # the allocator steady (2026-12-04, this machine kind): minima 1.24x apart at T = 128, 1.1x at 512
    frames = {**_timed([0.205, 3.0, 62.0]),
              **_exponent([0.00005, 0.000255, 0.0009, 0.0033, 0.017, 0.0613])}
    assert disturbed.cross_check(FrameLoad(frames)) == ([128, 512, 2048], [])
    assert disturbed.lines(FrameLoad(frames))[0].endswith("they agree within 1.5x.")
    # the faster side is not the disturbed one: timing_exponent slowed, causal_timing's claims judged
    slow = {**frames, **_exponent([0.00005, 0.0009, 0.0009, 0.00419, 0.017, 0.0613])}
    assert disturbed.cross_check(FrameLoad(slow))[1][0].slower == "timing_exponent"
    assert "disturbed" not in set(verdicts.evaluate(CLAIMS, FrameLoad(slow))["verdict"])
    other = {**frames, **_exponent([0.00005, 0.0009, 0.0009, 0.00419, 0.017, 0.0613], d_k=32)}
    assert disturbed.cross_check(FrameLoad(other)) == ([], []) and disturbed.lines(FrameLoad(other)) == []
    # the factor is the one the experiments record: the looser of the two, never a constant of the ledger
    looser = {**frames, ("timing_exponent", "machine"): MACHINE.assign(agreement=1.2)}
    assert disturbed.lines(FrameLoad(looser))[0].endswith("they agree within 1.5x.")
    strict = {**frames, **{(e, "machine"): MACHINE.assign(agreement=1.05) for e in ("causal_timing",
                                                                                     "timing_exponent")}}
    assert [d.length for d in disturbed.cross_check(FrameLoad(strict))[1]] == [128, 512]
    unrecorded = {k: v for k, v in frames.items() if k != ("timing_exponent", "machine")}
    assert disturbed.cross_check(FrameLoad(unrecorded)) == ([], [])


HEAD = ("**Cross-check of timings** (causal_timing against timing_exponent, minimum times at lengths "
        "128, 512, 2048): ")


def test_a_factor_given_replaces_the_recorded_one():
    frames = {**_timed([0.21, 5.32, 62.0]),  # 2.13x apart at T = 512
              **_exponent([0.00005, 0.000207, 0.0009, 0.0025, 0.017, 0.0613])}
    load = lambda experiment, table: frames[(experiment, table)]  # noqa: E731 (a loader(experiment, table))
    assert disturbed.cross_check(load, 3.0) == ([128, 512, 2048], [])
    assert disturbed.lines(load, 3.0) == [HEAD + "they agree within 3x."]
    assert [d.length for d in disturbed.cross_check(load)[1]] == [512]  # the recorded 1.5x


def test_minima_exactly_the_factor_apart_agree():
    # binary-exact seconds: 4 ms is 2 x 2 ms exactly
    frames = {**_timed([0.25, 4.0, 64.0]), **_exponent([0.00005, 0.00025, 0.0009, 0.002, 0.017, 0.064]),
              **{(e, "machine"): MACHINE.assign(agreement=2.0) for e in ("causal_timing", "timing_exponent")}}
    assert disturbed.cross_check(FrameLoad(frames)) == ([128, 512, 2048], [])
    slower = {**frames, **_timed([0.25, 4.01, 64.0])}
    assert [d.length for d in disturbed.cross_check(FrameLoad(slower))[1]] == [512]


def test_each_disagreement_is_one_sentence_of_the_line():
    strict = MACHINE.assign(agreement=1.05)  # 1.24x apart at T = 128, 1.1x at 512
    frames = {**_timed([0.205, 3.0, 62.0]), **_exponent([0.00005, 0.000255, 0.0009, 0.0033, 0.017, 0.0613]),
              **{(e, "machine"): strict for e in ("causal_timing", "timing_exponent")}}
    first, second = disturbed.cross_check(FrameLoad(frames))[1]
    assert disturbed.lines(FrameLoad(frames)) == [
        HEAD + f"{first.sentence()}; {second.sentence()}. The claims read from the slowed measurement "
               "are judged *disturbed*."]


# ---- a busy machine ----------------------------------------------------------------------------

@pytest.fixture
def busy_machine():
    """Two busy processes per CPU this process may use, started before and stopped after the test:
    with one per CPU, the scheduler could leave this process a CPU of its own (three tasks on two
    CPUs), and the check would rightly find nothing (seen once in a full `make test`)."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(2 * len(os.sched_getaffinity(0)))]
    time.sleep(0.3)  # every spinner on a core
    yield len(spinners)
    for spinner in spinners:
        spinner.kill()
        spinner.wait()


def test_causal_timing_on_a_busy_machine_is_quiet_or_disturbed_never_differs(busy_machine, monkeypatch):
    not_in_a_mutant("times attention on a loaded machine for seconds")
    monkeypatch.setattr(_timing, "PAUSE", 0.05)
    # a timing job runs one BLAS thread from its start (--threads 1): its process's CPU time is its
    # thread's; this test process keeps OpenBLAS's pool, whose idle threads the process clock counts
    monkeypatch.setattr(_timing, "CLOCKS", (time.perf_counter, time.thread_time))
    params = {"seed": 0, "d_k": 64, "T": [128, 512, 2048], "trials": [20, 5, 2], "passes": 1,
              "article_code": False}
    with threadpool_limits(limits=1):
        tables = causal_timing.run(params)
    main = tables["main"]
    assert len(tables["repeats"]) == 20 + 5 + 2  # the kept batches only: never more trials
    assert main["disturbed"].any()  # the busy processes were seen ...
    assert (main.loc[main["disturbed"], "attempts"] == _timing.ATTEMPTS).all()  # ... and retried to the bound
    claims = [c for c in published.load_claims(PUBLISHED)
              if c.source["experiment"] == "causal_timing" and c.cls == "machine-bound"]
    load = FrameLoad({("causal_timing", "main"): main})
    table = verdicts.evaluate(claims, load, rule=published.load_speed(PUBLISHED)).set_index("id")
    for claim in claims:
        read = pd.concat([rows for _, rows in disturbed._rows_read(claim, load)])
        verdict = table.loc[claim.id, "verdict"]
        assert verdict == "disturbed" if read["disturbed"].any() else verdict != "disturbed", claim.id
    assert "disturbed" in set(table["verdict"])  # so "differs" only where every row read was quiet


def _rows(cases, disturbed_rows=(), attempts=3):
    """A timing table over ``cases`` {case: [T, ...]}: T = 2048 rows of ``disturbed_rows`` cases slowed."""
    rows = [{"case": case, "T": T, "min_ms": float(T), "time_ratio": 4.0,
             "cpu_share": 0.5 if case in disturbed_rows and T == 2048 else 0.99,
             "attempts": attempts if case in disturbed_rows and T == 2048 else 1,
             "disturbed": case in disturbed_rows and T == 2048}
            for case, lengths in cases.items() for T in lengths]
    return pd.DataFrame(rows)


def test_a_ratio_reads_every_row_of_its_own_case_and_of_its_divisor():
    frame = _rows({"a": [128, 2048], "b": [128, 2048]}, disturbed_rows=["b"])
    load = FrameLoad({("causal_timing", "main"): frame})
    check = disturbed.Check(load)
    ratio = _claim("r", "time_ratio", 128)
    ratio.source["where"] = {"T": 128, "case": "a"}
    assert check.finding(ratio) == ""  # case b's slowed row is not case a's
    ratio.source["where"] = {"T": 128, "case": "b"}
    assert check.finding(ratio).startswith(
        "disturbed measurement: causal_timing case b, T = 2048: the timing process ran 50% of the wall time")
    raw = _claim("t", "min_ms", 128, raw_time=True)
    raw.source["where"] = {"T": 128, "case": "b"}
    assert check.finding(raw) == ""  # a raw time reads its own row only
    over = _claim("o", "min_ms", 128, raw_time=True)
    over.source.update(where={"T": 128, "case": "a"}, over={"where": {"T": 2048, "case": "b"}})
    assert "case b, T = 2048" in check.finding(over)  # the divisor's row counts too
    named = _claim("n", "min_ms", 2048, raw_time=True)
    named.source.update(table="main", where={"T": 2048, "case": "b"})
    assert "after 3 attempts" in check.finding(named)
    back = _claim("v", "min_ms", 2048, raw_time=True)
    back.source.update(where={"T": 2048, "case": "b"}, over={"where": {"T": 128, "case": "a"}})
    assert "case b, T = 2048" in check.finding(back)  # the dividend's row counts beside a quiet divisor
    once = FrameLoad({("causal_timing", "main"): _rows({"b": [2048]}, disturbed_rows=["b"], attempts=1)})
    assert disturbed.Check(once).finding(named).endswith("after 1 attempt")  # no load columns: no load said


def test_a_claim_of_another_class_or_a_table_without_the_columns_is_never_disturbed():
    frame = _rows({"b": [2048]}, disturbed_rows=["b"])
    exact = verdicts.Claim.from_dict({**{k: v for k, v in vars(_claim("x", "min_ms", 2048)).items()
                                        if k in ("id", "article", "section", "claim", "published", "source",
                                                 "location")}, "class": "exact"})
    assert disturbed.Check(FrameLoad({("causal_timing", "main"): frame})).finding(exact) == ""
    bare = frame.drop(columns=["cpu_share"])
    bare_load = FrameLoad({("causal_timing", "main"): bare})
    assert disturbed.Check(bare_load).finding(_claim("y", "min_ms", 2048)) == ""
    unflagged = frame.assign(disturbed=[None])
    assert disturbed.Check(FrameLoad({("causal_timing", "main"): unflagged})).finding(
        _claim("z", "min_ms", 2048)) == ""  # an unknown flag is no disturbance
    # a case recorded before the column (NaN), or a nullable flag left unknown (pd.NA)
    for flag in (pd.Series([float("nan")], dtype=object), pd.array([pd.NA], dtype="boolean")):
        unmeasured = FrameLoad({("causal_timing", "main"): frame.assign(disturbed=flag)})
        assert disturbed.Check(unmeasured).finding(_claim("z", "min_ms", 2048)) == ""
    assert disturbed.Check(FrameLoad({})).finding(_claim("m", "min_ms", 2048)) == ""  # no table: no finding


def _slowed(row):
    """What a reason says of a row of _causal disturbed at T = ``row``."""
    return (f"causal_timing case default, T = {row}: the timing process ran 52% of the wall time (below the "
            "share a quiet core gives: experiments._timing) after 3 attempts; 1-minute load 3.31 before, "
            "3.40 after")


def test_every_disturbed_row_read_is_named_once_in_table_order():
    load = FrameLoad({("causal_timing", "main"): _causal([0.2, 4.0, 120.0], disturbed_rows=[512, 2048])})
    assert disturbed.Check(load).finding(_claim("r", "time_ratio", 512)) == (
        f"disturbed measurement: {_slowed(512)}; {_slowed(2048)}")


def test_a_claim_reads_the_table_it_names():
    load = FrameLoad({("causal_timing", "main"): _causal([0.2, 4.0, 120.0]),
                      ("causal_timing", "sweep"): _causal([0.2, 4.0, 120.0], disturbed_rows=[2048])})
    raw = _claim("t", "min_ms", 2048, raw_time=True)
    assert disturbed.Check(load).finding(raw) == ""
    raw.source["table"] = "sweep"
    assert disturbed.Check(load).finding(raw) == f"disturbed measurement: {_slowed(2048)}"


def test_a_table_without_cases_or_a_row_key_is_read_whole_and_named_by_its_experiment():
    frame = pd.DataFrame({"min_ms": [3.0, 5.0], "cpu_share": [0.99, 0.5], "attempts": [1, 2],
                          "disturbed": [False, True]})
    load = lambda experiment, table: {("causal_timing", "main"): frame}[(experiment, table)]  # noqa: E731
    claim = verdicts.Claim.from_dict({
        "id": "s", "article": "001", "section": "s", "claim": "s", "published": "1.0",
        "class": "machine-bound", "band": [0.0, 1e9],
        "source": {"experiment": "causal_timing", "where": {"min_ms": 3.0}, "column": "min_ms"}})
    assert disturbed.Check(load).finding(claim) == (
        "disturbed measurement: causal_timing: the timing process ran 50% of the wall time (below the "
        "share a quiet core gives: experiments._timing) after 2 attempts")
