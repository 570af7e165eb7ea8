"""Analysis of genbench result files: loading into pandas, reports with plots, comparisons.

    >>> import genbench_analysis as ga
    >>> r = ga.load("results/run.h5")
    >>> name = next(iter(r.benchmarks))
    >>> r.points, r.ranks, r.system, r.attrs, r.samples(name)
    >>> b = r.benchmarks[name]; b.headline, b.metrics, b.units, b.description.plot, b.description.extra_plots
"""

from .describe import Column, CompareHints, ExtraPlot, Metric, OpDescription, Panel, PlotHints, metric_label
from .loader import (FORMAT, SCHEMA_VERSION, SCHEMA_VERSIONS, Benchmark, DescriptionError, HeldBackWarning,
                     NotGenbenchFileError, NotHDF5Error, Result, ResultFileError, ResultStateWarning,
                     SchemaVersionError, holding_reasons, load)

from . import compare, model, oldfiles, plots, report  # noqa: E402  (ga.compare.compare, ga.model.compose, ...)

__version__ = "0.1.0"

__all__ = ["load", "Result", "Benchmark", "ResultFileError", "NotHDF5Error", "NotGenbenchFileError",
           "SchemaVersionError", "DescriptionError", "ResultStateWarning", "HeldBackWarning", "holding_reasons",
           "OpDescription", "Column", "Metric", "PlotHints", "CompareHints", "ExtraPlot", "Panel", "metric_label",
           "FORMAT", "SCHEMA_VERSION", "SCHEMA_VERSIONS", "__version__"]
