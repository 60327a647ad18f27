"""attnrepro: reproduce three articles on attention and transformers.

The package holds the science (``core``, ``model``, ``experiments``), the file
formats (``io``, ``provenance``), the run plan shared with Snakemake (``plan``)
and the report layer (``report``). Importing it imports no numerical library,
so that thread limits can be set before NumPy loads.
"""

__version__ = "0.1.0"
