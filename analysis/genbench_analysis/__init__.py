"""Analysis of genbench result files: loading into pandas, reports with plots, comparisons.

    >>> import genbench_analysis as ga
    >>> r = ga.load("results/run.h5")
    >>> r.points, r.ranks, r.system, r.attrs, r.samples("gemm")
"""

from .loader import (FORMAT, SCHEMA_VERSION, Benchmark, HeldBackWarning, NotGenbenchFileError, NotHDF5Error, Result,
                     ResultFileError, ResultStateWarning, SchemaVersionError, holding_reasons, load)

from . import compare, plots, report  # noqa: E402  (ga.compare.compare, ga.plots.PLOTS, ...)

__version__ = "0.1.0"

__all__ = ["load", "Result", "Benchmark", "ResultFileError", "NotHDF5Error", "NotGenbenchFileError",
           "SchemaVersionError", "ResultStateWarning", "HeldBackWarning", "holding_reasons", "FORMAT",
           "SCHEMA_VERSION", "__version__"]
