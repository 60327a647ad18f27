"""A usage error: a mistake in what a job was asked, said on one line, with status 2.

A usage error is the asker's to fix: a bad value, a bad or missing file, an unknown name
(experiment, case, parameter, table), an output that would replace a file. The job entries raise
:class:`UsageError`, naming the option, key or file; the job harness (:mod:`attnrepro.run.harness`)
ends the job with :func:`refuse`: one line on stderr, no traceback, status 2. Status 1 stays for a
job the harness stopped (an ended run, a corrupt or stale input); a bug keeps its traceback.
This module imports nothing of attnrepro, so that any layer may raise it.
"""

import argparse
import json
import sys

STATUS = 2  # of a usage error (argparse's own, for a bad command line)
EXIT_STATUS = """\
exit status: 0 done; 1 stopped by the job harness (a corrupt or stale input, an ended Snakemake run);
  2 a usage error (a bad value, a bad or missing file, an unknown name, an output that exists):
  one line on stderr names the option, key or file."""


class UsageError(Exception):
    """A mistake in what the job was asked; the message names the option, key or file."""


def one_line(text):
    """``text`` on one line: a line ending in a colon runs on with a space, others with "; "."""
    out = ""
    for line in (line.strip() for line in str(text).splitlines()):
        if line:
            out += ("" if not out else " " if out.endswith(":") else "; ") + line
    return out


def printable(text):
    """``text`` safe for a terminal: every character that is not printable (an escape sequence, a
    carriage return, a NUL) written as its Python escape (``\x1b``), so that what an article or an
    archive holds cannot erase or fake a line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def yaml_problem(error):
    """A YAML parser's error in a few words: where (line, column) and its problem, else its text."""
    problem, mark = getattr(error, "problem", None), getattr(error, "problem_mark", None)
    if not problem or mark is None:
        return one_line(error)
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"


def refuse(error, prefix):
    """Print ``error`` on one line after the entry's ``prefix``, to stderr; status 2."""
    print(f"{prefix}: {one_line(error)}", file=sys.stderr)
    return STATUS


def json_object(text, option):
    """The JSON object ``text`` of ``option`` ({} for None), or a UsageError naming the option."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as error:
        raise UsageError(f"{option}: not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{option}: a JSON object {{...}}, not {text!r}")
    return value


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose command-line errors are one line (status 2, as argparse's)."""

    def error(self, message):
        self.exit(STATUS, f"{self.prog}: {message} (see {self.prog} --help)\n")
