"""How a listing's output is told from its code, in every form: the ways authors show output.

- ``# Output:`` (or ``# outputs:``, in any case) comment lines after the code: the mark, any text
  after its colon, and the comment lines after it are output (:data:`MARK`);
- a ``>>>`` transcript: the lines after ``>>> `` and ``... `` prompts are code (the prompt left
  out, its width kept as the block's offset), the lines after them up to the next prompt are what
  that statement showed (:data:`PROMPT`);
- in plain text, where nothing marks the output: the longest leading run of lines that compiles as
  Python is code, and the rest is output. A printed value that happens to be valid Python
  (``tensor([[0.5]])``, ``array([1., 2.])``, ``[1, 2, 3]``, ``0.5``: :func:`printed_value`)
  standing as a statement ends the code, and a later chunk of the output (after a blank line)
  that opens with a statement only code writes (:func:`_strong`) starts the next listing.

:func:`split` applies them to a listing's lines; the plain and Markdown parsers call it. Pure
Python (the :mod:`ast` of the code, never run).
"""

import ast
import re

from attnrepro.articles.blocks import Block

# an output comment: "# Output:", "#outputs:", "# OUTPUT: 0.5" (the text after the colon is output)
MARK = re.compile(r"^(?P<indent>\s*)#\s*outputs?\s*:\s?(?P<rest>.*)$", re.IGNORECASE)
# a prompt of the Python interpreter: ">>> " or "... ", or either alone on its line
PROMPT = re.compile(r"^(?P<indent>\s*)(?:>>>|\.\.\.)(?: |$)")
# the callables whose repr a listing prints: NumPy's scalars and arrays, torch's tensors
REPRS = frozenset({
    "array", "tensor", "Tensor", "Parameter", "masked_array", "matrix", "bool_", "str_", "bytes_",
    "float16", "float32", "float64", "float128", "longdouble", "complex64", "complex128",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intp",
    "datetime64", "timedelta64", "Fraction", "Decimal",
})
_SPECIAL = frozenset({"nan", "inf", "NaN", "Inf"})  # names a printed array may hold


def compiles(lines):
    """The lines are Python source, as a whole."""
    try:
        compile("\n".join(lines) + "\n", "<listing>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def _literal(node, calls=True):
    """A value as a repr prints it: a constant, a signed number, a container of them, and (with
    ``calls``) a repr's call (:func:`printed_value`)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id in _SPECIAL
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _literal(node.operand, calls)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_literal(e, calls) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _literal(k, calls) and _literal(v, calls)
                   for k, v in zip(node.keys, node.values))
    return calls and isinstance(node, ast.Call) and printed_value(node)


def _dotted(node):
    """A name or an attribute chain (``torch.float32``), as a keyword of a repr may be."""
    return isinstance(node, ast.Name) or (isinstance(node, ast.Attribute) and _dotted(node.value))


def printed_value(node):
    """``node`` (an expression) reads as a printed value rather than code: a literal, or a call of
    a repr's callable (:data:`REPRS`) on literals, its keywords literals or names (``dtype=...``)."""
    if not isinstance(node, ast.Call):
        return _literal(node)
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return (name in REPRS and _dotted(func) and bool(node.args) and all(_literal(a) for a in node.args)
            and all(_literal(k.value) or _dotted(k.value) for k in node.keywords))


def value_line(line):
    """One line that is a printed value (:func:`printed_value`): ``42``, ``tensor(0.5000)``."""
    try:
        tree = ast.parse(line.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return False
    return printed_value(tree.body)


def _trim(first, lines):
    """(first, lines) without the blank lines at either end."""
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return first + start, lines[start:end]


def _block(kind, first, lines, offset, display=""):
    """A block of the lines without blank lines at either end, or None when all are blank."""
    first, lines = _trim(first, lines)
    return Block(kind, first, lines, display=display, offset=offset) if lines else None


def _value(statement):
    """A statement that is a printed value standing alone (a string is not: it may be a docstring),
    or a printed ``label: value`` line, which Python reads as an annotation (``first: 1.4142``)."""
    if isinstance(statement, ast.AnnAssign):
        return statement.value is None and printed_value(statement.annotation)
    return (isinstance(statement, ast.Expr) and printed_value(statement.value)
            and not (isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)))


def _start(statement):
    """The index of a statement's first line (its decorators')."""
    return min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", []))]) - 1


def _strong(statement):
    """A statement only code writes: a compound statement, an import, a call, an assignment of
    more than a literal (a printed ``loss = 0.25`` compiles too)."""
    if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return statement.value is not None and not _literal(statement.value, calls=False)
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Call) and not printed_value(statement.value)
    return True


def _opens_code(lines):
    """The lines, up to the first blank one, are code that opens with a statement only code writes."""
    chunk = lines[:next((k for k, line in enumerate(lines) if not line.strip()), len(lines))]
    if not compiles(chunk):
        return False
    body = ast.parse("\n".join(chunk) + "\n").body
    return bool(body) and _strong(body[0])


def _guessed(first, lines, offset, display):
    """Code then output, nothing marking them. The code is the longest leading run of lines that
    compiles, up to a printed value standing as a statement; the output runs from there to the
    next chunk (after a blank line) that opens with code, where the next listing starts."""
    end = next(k for k in range(len(lines), -1, -1) if compiles(lines[:k]))
    body = ast.parse("\n".join(lines[:end]) + "\n").body
    at = next((k for k, statement in enumerate(body) if _value(statement)), len(body))
    after = next((k for k in range(at, len(body)) if not _value(body[k])), len(body))
    code_end = _start(body[at]) if at < len(body) else end
    if after < len(body):
        resume = _start(body[after])
    else:
        resume = _resumes(lines, max(code_end, end) + 1)
    blocks = [_block("code", first, lines[:code_end], offset, display),
              _block("output", first + code_end, lines[code_end:resume], offset)]
    rest = _guessed(first + resume, lines[resume:], offset, display) if resume < len(lines) else []
    return [b for b in blocks if b is not None] + rest


def _marked(first, lines, at, offset, display, guess):
    """The code before the mark on line ``at``, then its output: the mark and the comment (or blank)
    lines after it, and the lines after those when they split as output; then what follows."""
    head = _block("code", first, lines[:at], offset, display)
    end = at + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].lstrip().startswith("#")):
        end += 1
    rest = split(first + end, lines[end:], offset, display, guess)
    if rest and rest[0].kind == "output":  # the output goes on without comment signs
        end = rest.pop(0).numbers.stop - first
    output = _block("output", first + at, lines[at:end], offset)
    return [b for b in (head, output, *rest) if b is not None]


def _width(line):
    """The characters of a prompted line before its code: indentation, prompt and its space."""
    match = PROMPT.match(line)
    return match.end() if match else 0


def _resumes(lines, start):
    """The index, from ``start``, of the first chunk (after a blank line) that opens with code,
    or len(lines)."""
    return next((k for k in range(max(start, 1), len(lines))
                 if not lines[k - 1].strip() and lines[k].strip() and _opens_code(lines[k:])), len(lines))


def _transcript(first, lines, offset, display, guess):
    """A ``>>>`` transcript: each run of prompted lines is code (display "each", the prompts left
    out), the lines after it up to the next prompt are its output; the transcript ends at a chunk
    that opens with code without a prompt, which is split again."""
    blocks, k = [], 0
    while k < len(lines):
        prompted = bool(PROMPT.match(lines[k]))
        end = k + 1
        while end < len(lines) and bool(PROMPT.match(lines[end])) == prompted:
            end += 1
        if prompted:
            code = [line[_width(line):] for line in lines[k:end]]
            blocks.append(_block("code", first + k, code, offset + _width(lines[k]), "each"))
        else:
            resume = _resumes(lines[:end], k + 1) if guess else end
            blocks.append(_block("output", first + k, lines[k:resume], offset))
            if resume < end:
                blocks += split(first + resume, lines[resume:], offset, display, guess)
                break
        k = end
    return [b for b in blocks if b is not None]


def split(first, lines, offset=0, display="print", guess=True):
    """The code and output blocks of a listing's ``lines`` (the first is line ``first`` of the
    text, ``offset`` characters of each left out): a transcript; output marks; or, when ``guess``
    (plain text), the longest run of lines that compiles is code and the rest output."""
    prompted = [k for k, line in enumerate(lines) if PROMPT.match(line)]
    if prompted:
        start = prompted[0]
        return (split(first, lines[:start], offset, display, guess)
                + _transcript(first + start, lines[start:], offset, display, guess))
    marks = [k for k, line in enumerate(lines) if MARK.match(line)]
    if marks:
        return _marked(first, lines, marks[0], offset, display, guess)
    if guess:
        return _guessed(first, lines, offset, display)
    return [b for b in (_block("code", first, lines, offset, display),) if b is not None]
