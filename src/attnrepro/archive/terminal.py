"""What ``verify`` prints: every line escaped, since any of it may come from an archive.

A claim id, a file name, a package version or a crate's version is the archive's text. Printed raw,
a control character in it would act on the terminal: ``ESC[2K ESC[1A`` erases the line above,
``ESC[8m`` hides what follows, a carriage return overwrites a line, U+202E reverses it. So all
that verify writes on stdout and stderr passes through :func:`escaped` (:class:`escaping`): a
character that is not printable is shown as its Python escape (``\\x1b``, ``\\u202e``), whoever
made the string. Backslashes are left as they are.
"""

import sys


def _escape(char):
    code = ord(char)
    if code < 0x100:  # pragma: no mutate (equivalent: U+0100 is printable, never escaped)
        return f"\\x{code:02x}"
    if code < 0x10000:  # pragma: no mutate (equivalent: U+10000 is printable, never escaped)
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def escaped(text):
    """``text`` with every character that is not printable (``str.isprintable``: control, format,
    separator and unassigned characters but the space) escaped; line breaks kept, "\\n" only."""
    return "\n".join("".join(c if c.isprintable() else _escape(c) for c in line)
                     for line in str(text).split("\n"))


class _Escaping:
    """A text stream that writes to ``stream`` what it is given, escaped."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        return self.stream.write(escaped(text))

    def flush(self):
        self.stream.flush()

    def __getattr__(self, name):  # encoding, isatty, fileno: the stream's own
        return getattr(self.stream, name)


class escaping:  # noqa: N801 (a context manager, used like a function)
    """``with escaping():``: whatever is printed on stdout and stderr meanwhile is escaped
    (:func:`escaped`), so that no message, table or warning can write raw text; restored after."""

    def __enter__(self):
        self.previous = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = _Escaping(sys.stdout), _Escaping(sys.stderr)
        return self

    def __exit__(self, *exc):
        sys.stdout, sys.stderr = self.previous
        return False
