"""verify against the corpus of hostile inputs (tests/hostile.py): each is refused with exit 2 and
one line naming what is wrong, before its cost is paid, writing nothing and leaving nothing."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import hostile
from attnrepro.archive import verify, verify_extract, verify_limits, verify_rerun, verify_warnings
from attnrepro.run import bounded

MiB = 1 << 20


# verify as `python -m attnrepro verify` runs it, then its peak memory in kB: VmHWM, its own address
# space's (ru_maxrss would count the test process's memory at the fork that started it)
MEASURED = textwrap.dedent("""
    import re, sys
    from pathlib import Path
    from attnrepro import cli
    try:
        status = cli.main(["verify", *sys.argv[2:]])
    finally:
        peak = re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text())[1]
        Path(sys.argv[1]).write_text(peak)
    sys.exit(status)
""")


def _verify(tmp_path, *args, timeout=120):
    """``python -m attnrepro verify ARGS`` as a user runs it, its temporary folders under
    tmp_path/tmp; (the process, verify's peak memory in MiB)."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    peak = tmp_path / "peak"
    proc = subprocess.run([sys.executable, "-c", MEASURED, str(peak), *map(str, args)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=timeout)
    return proc, int(peak.read_text()) / 1024


@pytest.mark.parametrize("name", hostile.CORPUS)
def test_a_hostile_archive_is_refused_in_one_line_writing_nothing(tmp_path, name):
    build, args, expected = hostile.CORPUS[name]
    (tmp_path / "built").mkdir()
    archive = build(tmp_path / "built")
    start = time.perf_counter()
    proc, peak = _verify(tmp_path, archive, *args)
    seconds = time.perf_counter() - start
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("verify: ") and expected in line, line
    assert "verdict" not in proc.stdout and "rerunning" not in proc.stdout  # no rerun started
    assert not (tmp_path / "built" / hostile.PAYLOAD).exists() and not (tmp_path / hostile.PAYLOAD).exists()
    assert list((tmp_path / "tmp").iterdir()) == []  # the temporary folder removed
    assert seconds < 30 and peak < 1024, (seconds, peak)  # refused before its cost, not after


@pytest.mark.parametrize("name", hostile.READ_AS_DATA)
def test_a_forgery_of_what_verify_reads_as_data_is_compared_and_warned_of(tmp_path, name):
    build, expected = hostile.READ_AS_DATA[name]
    (tmp_path / "built").mkdir()
    archive = build(tmp_path / "built")
    results = tmp_path / "built/run/results"
    start = time.perf_counter()
    proc, peak = _verify(tmp_path, archive, "--results", results)
    seconds = time.perf_counter() - start
    assert proc.returncode in (0, 1) and proc.stderr == "", proc.stdout + proc.stderr
    assert any(expected in line for line in proc.stdout.splitlines()), proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("verdict: ")
    assert seconds < 30 and peak < 1024, (seconds, peak)


def test_a_file_named_by_forty_manifest_lines_is_hashed_once_in_the_time_of_one(tmp_path, monkeypatch):
    archive = hostile.manifest_naming_one_file_forty_times(tmp_path)
    top = verify.extract(archive, tmp_path / "out")
    hashed = []
    real = verify_warnings.digests.file_sha256
    monkeypatch.setattr(verify_warnings.digests, "file_sha256",
                        lambda path: hashed.append(path.name) or real(path))
    bad, repeated = verify_warnings.manifest_mismatches(top)
    assert ("results/big.bin" in bad, repeated, hashed.count("big.bin")) == (False, 39, 1)


def test_the_config_is_bounded_before_it_is_loaded_wherever_the_crate_points(tmp_path):
    """The archive's config (config.resolved.yaml, or the file its crate names) past its cap is refused
    from its size, before the YAML loader reads a byte."""
    top = tmp_path / "top"
    top.mkdir()
    cap = verify_limits.Limits().config_bytes
    (top / "config.resolved.yaml").write_text("skip: []\n" + "#" * (cap - 9))
    assert verify_rerun.config_for_rerun(top).config == {"skip": []}  # the cap itself is read
    (top / "config.resolved.yaml").write_text("skip: []\n" + "#" * (cap - 8))
    with pytest.raises(verify_rerun.ConfigRefused) as refused:
        verify_rerun.config_for_rerun(top)
    assert str(refused.value) == (
        "the archive's config top/config.resolved.yaml holds more than 1,048,576 bytes")


def test_a_file_beyond_its_cap_after_extraction_refuses_the_archive_in_one_line(tmp_path, capsys):
    archive = hostile.manifest_of_many_lines(tmp_path)
    assert verify.main([str(archive), "--results", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == (
        "", f"verify: {archive}: refused: its MANIFEST.sha256 holds more than 50,000 lines\n")


def test_a_lock_beyond_its_lines_is_refused_naming_it(tmp_path):
    top = tmp_path / "top"
    (top / "requirements").mkdir(parents=True)
    (top / "requirements/runtime.lock").write_text("\n" * 50_001)
    with pytest.raises(bounded.Exceeded) as raised:
        verify_warnings._lock_warnings(top)
    assert str(raised.value) == "requirements/runtime.lock holds more than 50,000 lines"
    (top / "requirements/runtime.lock").write_text("pkg==1\n" * 50_000)
    assert verify_warnings._lock_warnings(top)[0].startswith(  # the cap itself is read
        "requirements/runtime.lock differs: archive ['pkg==1', 'pkg==1', 'pkg==1'], here [")


def test_a_missing_file_verify_reads_is_not_a_bound(tmp_path):
    top = tmp_path / "top"
    top.mkdir()
    assert verify_warnings.manifest_mismatches(top) == (["MANIFEST.sha256 (absent)"], 0)
    assert verify_warnings._environment(top) == ({}, [])


def test_the_honest_archive_of_the_corpus_verifies(tmp_path):
    archive = hostile.honest(tmp_path)
    proc, _ = _verify(tmp_path, archive, "--results", tmp_path / "run/results")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "verdict: REPRODUCED: all 1 compared files are equal"


def test_the_ceiling_is_stated_and_raised_by_max_size(tmp_path, capsys):
    archive = hostile.zeros_member(tmp_path / "z.tar.gz", "top/results/zeros.bin", 3 * MiB)
    assert verify.main([str(archive), "--results", str(tmp_path), "--max-size", "2M"]) == 2
    assert capsys.readouterr().err == (
        f"verify: {archive}: refused before extraction: its files take more than 2.0 MiB once extracted "
        "(at member 'top/results/zeros.bin', 3.0 MiB); --max-size raises the ceiling\n")
    assert verify.main([str(archive), "--results", str(tmp_path), "--max-size", "3M"]) == 1  # extracted
    assert capsys.readouterr().out.splitlines()[-1] == "verdict: NOTHING COMPARED: neither side holds results"


def test_what_follows_the_gzip_stream_is_named_as_the_compressed_files(tmp_path, capsys):
    archive = hostile.zeros_after_the_gzip_stream(tmp_path)
    assert verify.main([str(archive), "--results", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"verify: {archive}: refused: more than 1.0 MiB of the compressed file follow the end of its tar at "
        "byte 1024\n")


@pytest.mark.parametrize("text, size", [("4G", 4 << 30), ("512M", 512 * MiB), ("3GiB", 3 << 30),
                                        ("1000", 1000), ("1.5K", 1536), ("2mb", 2 * MiB)])
def test_sizes_are_read_as_people_write_them(text, size):
    assert verify_limits.parse_size(text) == size


@pytest.mark.parametrize("text", ["", "G", "-1G", "0", "four", "1X"])
def test_a_size_that_is_none_is_a_usage_error(tmp_path, text):
    proc, _ = _verify(tmp_path, "a.tar.gz", f"--max-size={text}")
    (line,) = proc.stderr.splitlines()
    assert proc.returncode == 2 and line.startswith("attnrepro verify: argument --max-size: "), line


def test_a_full_local_disk_is_named_as_the_local_disk(tmp_path, capsys, monkeypatch):
    archive = hostile.honest(tmp_path)
    free = type("Usage", (), {"free": 10 * MiB})
    monkeypatch.setattr(verify_extract.shutil, "disk_usage", lambda path: free)
    assert verify.main([str(archive), "--results", str(tmp_path / "run/results")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("verify: the local disk holding ") and "has 10.0 MiB free; extracting its" in line
    assert "archive" not in line.split("needs")[0].replace(str(tmp_path), "")  # the disk, not the archive


def test_a_write_error_of_the_local_disk_is_not_blamed_on_the_archive(tmp_path):
    import errno

    error = OSError(errno.ENOSPC, "No space left on device")
    assert verify_extract.local_problem(error, tmp_path / "new/folder") == (
        f"the local disk holding {tmp_path} is full (No space left on device): the archive is not to blame")
    assert verify_extract.local_problem(OSError(errno.EIO, "I/O error"), tmp_path) is None


def test_a_workdir_holding_anything_is_refused_before_extraction(tmp_path, capsys):
    archive = hostile.honest(tmp_path)
    (tmp_path / "work/results").mkdir(parents=True)
    assert verify.main([str(archive), "--workdir", str(tmp_path / "work")]) == 2
    assert capsys.readouterr().err == (
        f"verify: --workdir {tmp_path / 'work'}: not empty; a rerun starts from nothing (an earlier run's "
        "results there would be compared instead of a rerun's): give a new or empty folder\n")
    (tmp_path / "file").write_text("")
    assert verify.main([str(archive), "--workdir", str(tmp_path / "file")]) == 2
    assert capsys.readouterr().err == f"verify: --workdir {tmp_path / 'file'}: not a folder\n"


# ---- nothing outlives verify ---------------------------------------------------------------

# verify, with Snakemake replaced by a program that starts a grandchild and sleeps: both write
# their pids, so the test can look for them after verify is killed
FAKE_RERUN = textwrap.dedent("""
    import subprocess, sys, time
    from attnrepro.archive import verify, verify_rerun
    child = ("import os, subprocess, sys, time; "
             "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); "
             "open('pids', 'w').write(f'{os.getpid()} {g.pid}'); time.sleep(120)")
    verify_rerun.snakemake_command = lambda cores, config: [sys.executable, "-c", child]
    sys.exit(verify.main(sys.argv[1:]))
""")


def _alive(pid):
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _pids(tmp_path, wait=60):
    """The pids the fake rerun wrote: its own and its grandchild's."""
    deadline = time.monotonic() + wait
    while True:
        found = [p.read_text() for p in (tmp_path / "tmp").glob("attnrepro-verify-*/rerun/pids")]
        if found and found[0]:
            return tuple(map(int, found[0].split()))
        assert time.monotonic() < deadline, "the fake rerun never started"
        time.sleep(0.1)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_ends_the_rerun_and_its_descendants_and_removes_the_temporary_folder(tmp_path, signum):
    archive = hostile.honest(tmp_path)
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    proc = subprocess.Popen([sys.executable, "-c", FAKE_RERUN, str(archive)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rerun, grandchild = _pids(tmp_path)
    assert _alive(rerun) and _alive(grandchild)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, err
    assert err.splitlines()[-1] == (f"verify: stopped by {signal.Signals(signum).name}: the rerun was ended "
                                    "and the temporary folder removed")
    assert not _alive(rerun) and not _alive(grandchild)
    assert list((tmp_path / "tmp").iterdir()) == []


def test_the_rerun_and_its_descendants_end_and_the_folder_goes_when_verify_is_killed_outright(tmp_path):
    """SIGKILL cannot be caught: the kernel closes verify's end of the pipe to the rerun's guard,
    which ends the rerun and every descendant and removes the temporary folder."""
    archive = hostile.honest(tmp_path)
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    proc = subprocess.Popen([sys.executable, "-c", FAKE_RERUN, str(archive)], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rerun, grandchild = _pids(tmp_path)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10

    def left():
        return _alive(rerun) or _alive(grandchild) or any((tmp_path / "tmp").iterdir())

    while left() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(rerun) and not _alive(grandchild)
    assert list((tmp_path / "tmp").iterdir()) == []


def _working_in(folder):
    """The pids of the processes whose working directory is inside ``folder``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cwd = os.readlink(f"/proc/{entry}/cwd")
            except OSError:
                continue
            if cwd.startswith(str(folder)) and _alive(int(entry)):
                found.append(int(entry))
    return found


@pytest.mark.full
def test_killing_verify_during_a_real_rerun_leaves_no_process_and_no_folder(tmp_path):
    """~30 s: the default config's rerun, stopped once its first jobs run (Snakemake, its jobs)."""
    archive = hostile.honest(tmp_path)
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    proc = subprocess.Popen([sys.executable, "-m", "attnrepro", "verify", str(archive), "--cores", "2"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 180
    while not list((tmp_path / "tmp").glob("attnrepro-verify-*/rerun/results/logs/**/*.log")):
        assert time.monotonic() < deadline and proc.poll() is None, "no job of the rerun started"
        time.sleep(0.5)
    running = _working_in(tmp_path / "tmp")
    assert len(running) >= 2, running  # Snakemake and at least one job
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert _working_in(tmp_path / "tmp") == []
    assert not any(_alive(pid) for pid in running)
    assert list((tmp_path / "tmp").iterdir()) == []
