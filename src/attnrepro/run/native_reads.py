"""Reads that pyarrow makes in C++, made visible: its readers that take a path raise the read event.

pyarrow opens a file named by its path in C++, where Python raises no ``open`` audit event. Seen
2026-12-07 (pyarrow 26.0.1, pandas 3.1.1): ``parquet.read_table``, ``ParquetFile``,
``read_schema``, ``read_metadata``, ``ParquetDataset``, ``dataset.dataset``, ``memory_map``,
``OSFile``, ``input_stream``, ``feather.read_table`` and ``ipc.open_file`` raise none;
``pandas.read_parquet`` calls ``pyarrow.parquet.read_table`` (looked up at each call), and
``pandas.read_feather`` opens its file in Python, as does a reader given a file object.

:func:`watch` wraps the readers of :data:`READERS` (module attributes, so a caller's ``pq.read_table``
goes through the wrapper) in the modules loaded now, and in the others when they are imported (a
finder first on ``sys.meta_path``), so that each call raises :data:`READ_EVENT` for the path it is
given, or for each file of a folder. Nothing is imported here: a module not loaded is wrapped once it is.
"""

import functools
import os
import sys

READ_EVENT = "attnrepro.read"  # sys.audit(READ_EVENT, path): a file read outside Python's open
READERS = {  # module: its readers whose first argument (or keyword of PATH_KEYWORDS) may be a path
    "pyarrow": ("memory_map", "input_stream", "OSFile"),
    "pyarrow.parquet": ("read_table", "read_pandas", "read_schema", "read_metadata", "ParquetFile",
                        "ParquetDataset"),
    "pyarrow.dataset": ("dataset",),
    "pyarrow.feather": ("read_table", "read_feather"),
    "pyarrow.ipc": ("open_file", "open_stream"),
    "pyarrow.csv": ("read_csv", "open_csv"),
    "pyarrow.json": ("read_json",),
    "pyarrow.orc": ("read_table", "ORCFile"),
}
PATH_KEYWORDS = ("source", "where", "path_or_paths", "path", "input_file")
MARK = "_raises_read_event"  # set on a wrapper: a reader is wrapped once


def files_of(source):
    """The files a reader given ``source`` reads: a path, each file under a folder (sorted), each of
    a list's; nothing for anything else (a file object, a buffer: opened already, or no file)."""
    if isinstance(source, (list, tuple)):
        return [path for item in source for path in files_of(item)]
    if not isinstance(source, (str, os.PathLike)):
        return []
    path = os.fsdecode(os.fspath(source))
    if not os.path.isdir(path):
        return [path]
    return sorted(os.path.join(folder, name) for folder, _, names in os.walk(path) for name in names)


def announce(args, kwargs):
    """Raise READ_EVENT for each file a reader called with ``args`` and ``kwargs`` reads."""
    source = args[0] if args else next((kwargs[k] for k in PATH_KEYWORDS if k in kwargs), None)
    for path in files_of(source):
        sys.audit(READ_EVENT, path)


def _function(reader):
    @functools.wraps(reader)
    def wrapper(*args, **kwargs):
        announce(args, kwargs)
        return reader(*args, **kwargs)

    setattr(wrapper, MARK, True)
    return wrapper


def _initialiser(base_init):
    @functools.wraps(base_init)
    def __init__(self, *args, **kwargs):
        announce(args, kwargs)
        if base_init is not object.__init__:  # an extension type opens in __cinit__: nothing to call
            base_init(self, *args, **kwargs)

    setattr(__init__, MARK, True)
    return __init__


def wrapped(reader):
    """``reader`` made to raise READ_EVENT: a function wrapped; a Python class's ``__init__``
    wrapped in place (its instances stay its own); an extension type (``OSFile``), whose
    ``__init__`` cannot be set, subclassed."""
    if getattr(reader, MARK, False) or getattr(getattr(reader, "__init__", None), MARK, False):
        return reader
    if not isinstance(reader, type):
        return _function(reader)
    if "__init__" in vars(reader) and not isinstance(vars(reader)["__init__"], type(object.__init__)):
        reader.__init__ = _initialiser(reader.__init__)
        return reader
    return type(reader.__name__, (reader,), {"__init__": _initialiser(reader.__init__),
                                             "__module__": reader.__module__, "__doc__": reader.__doc__})


def wrap(module):
    """Wrap the readers of ``module`` (one of READERS), those it has."""
    for name in READERS[module.__name__]:
        if hasattr(module, name):
            setattr(module, name, wrapped(getattr(module, name)))


class _Loader:
    """A module's loader that wraps its readers once it has run its body."""

    def __init__(self, loader):
        self.loader = loader

    def __getattr__(self, name):
        return getattr(self.loader, name)

    def create_module(self, spec):
        return self.loader.create_module(spec)  # pragma: no mutate (equivalent: a source loader makes none)

    def exec_module(self, module):
        self.loader.exec_module(module)
        wrap(module)


class _Finder:
    """First on ``sys.meta_path``: a module of READERS is found by the finders after it, and its
    loader wraps its readers once it is loaded."""

    def find_spec(self, name, path=None, target=None):
        if name not in READERS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


def watch():
    """Wrap the readers of the modules of READERS loaded now, and of the others when they are
    imported (once per process: what is wrapped stays so; the event is no matter outside a job)."""
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    for name in READERS:
        module = sys.modules.get(name)
        if module is not None:
            wrap(module)
