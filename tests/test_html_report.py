"""`snakemake --report` builds a self-contained HTML report that renders in headless Chromium."""

import re
import shutil
import subprocess

import pytest

from conftest import snakemake

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (CI installs it)")


@pytest.fixture(scope="module")
def rendered(small_run, tmp_path_factory):
    report = small_run / "report.html"
    proc = snakemake(small_run, "--report", str(report))
    assert proc.returncode == 0, proc.stderr[-3000:]
    profile = tmp_path_factory.mktemp("chromium-profile")
    browser = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=15000", "--dump-dom", report.as_uri()],
        capture_output=True, text=True, timeout=180,
    )
    assert browser.returncode == 0, browser.stderr[-3000:]
    visible = re.sub(r"<(script|style)\b.*?</\1>", " ", browser.stdout, flags=re.S)
    text = " ".join(re.sub(r"<[^>]+>", " ", visible).split())
    console = [line for line in browser.stderr.splitlines() if ":CONSOLE" in line]
    return report, text, console


def test_report_is_self_contained(rendered):
    report, _, _ = rendered
    html = report.read_text()
    assert report.stat().st_size > 100_000
    assert not re.search(r"<(img|link|script)[^>]+(src|href)=\"https?://", html)


def test_report_renders_every_article_and_the_ledger(rendered):
    _, text, _ = rendered
    assert "Loading Snakemake Report" in text  # the static shell ...
    for category in ("Results", "Article 000", "Article 001", "Article 003", "Ledger"):
        assert category in text  # ... and what its script rendered


def test_report_has_no_console_errors(rendered):
    _, _, console = rendered
    errors = [line for line in console if re.search(r"Uncaught|Error|Failed to load", line)]
    assert not errors, errors
