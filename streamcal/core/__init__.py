"""Pure algorithm cores on plain data (no river imports), each stateful one with a
``_check()`` of its invariants.

- :mod:`streamcal.core.pav`: the PAV block store of online isotonic regression;
- :mod:`streamcal.core.bins`: the bin and edge rules (equal width, equal mass) every
  binned calibrator and metric uses;
- :mod:`streamcal.core.binning`: running histogram bins;
- :mod:`streamcal.core.decay`: the power-of-two forgetting clock (``half_life``);
- :mod:`streamcal.core.newton`: online Newton steps for small logistic models;
- :mod:`streamcal.core.calibeating`: per-bin outcome statistics, Foster's game,
  exponential weights;
- :mod:`streamcal.core.eprocess`: the mixture test martingale of the calibration monitor;
- :mod:`streamcal.core.irp`: isotonic recursive partitioning (binary and multiclass) and
  recursive binning;
- :mod:`streamcal.core.scir`: sorted cumulative isotonic regression (2-D isotonic fit);
- :mod:`streamcal.core.fir`: flattened, normalisation-aware flattened and one-vs-rest
  isotonic regression;
- :mod:`streamcal.core.temperature`: the temperature-scaling fit;
- :mod:`streamcal.core.prior`: the prior on block and bin means (``prior_strength``).

The multiclass batch functions (``irp_fit``, ``multiclass_irp_fit``, ``fit_scir``,
``fir_fit``, ``nafir_fit``, ``ovr_fit``, ``fit_temperature``) work on arrays on their own.

The names below are imported on first use (PEP 562), so that a calibrator imports only
the cores it runs on (scipy, say, only with the cores that call it).
"""

from streamcal._lazy import lazy_attributes

# public name -> the module defining it, imported on first access
_LAZY = {
    "HistogramBinner": "streamcal.core.binning",
    "ScoreCells": "streamcal.core.binning",
    "edge_bins": "streamcal.core.bins",
    "floor_bin": "streamcal.core.bins",
    "linear_quantile_edges": "streamcal.core.bins",
    "quantile_edges": "streamcal.core.bins",
    "uniform_bin": "streamcal.core.bins",
    "uniform_bins": "streamcal.core.bins",
    "uniform_edges": "streamcal.core.bins",
    "BinOutcomes": "streamcal.core.calibeating",
    "ExponentialWeights": "streamcal.core.calibeating",
    "FosterGame": "streamcal.core.calibeating",
    "bin_index": "streamcal.core.calibeating",
    "uniform": "streamcal.core.calibeating",
    "MixtureEProcess": "streamcal.core.eprocess",
    "fir_fit": "streamcal.core.fir",
    "nafir_fit": "streamcal.core.fir",
    "ovr_fit": "streamcal.core.fir",
    "irp_fit": "streamcal.core.irp",
    "multiclass_irp_fit": "streamcal.core.irp",
    "recursive_binning_fit": "streamcal.core.irp",
    "OnlineNewtonLogistic": "streamcal.core.newton",
    "BlockView": "streamcal.core.pav",
    "IsotonicBlockStore": "streamcal.core.pav",
    "pav_blocks": "streamcal.core.pav",
    "posterior_mean": "streamcal.core.prior",
    "fit_scir": "streamcal.core.scir",
    "fit_temperature": "streamcal.core.temperature",
}

__all__ = [
    "BinOutcomes",
    "BlockView",
    "ExponentialWeights",
    "FosterGame",
    "HistogramBinner",
    "IsotonicBlockStore",
    "MixtureEProcess",
    "OnlineNewtonLogistic",
    "ScoreCells",
    "bin_index",
    "edge_bins",
    "fir_fit",
    "fit_scir",
    "fit_temperature",
    "floor_bin",
    "irp_fit",
    "linear_quantile_edges",
    "multiclass_irp_fit",
    "nafir_fit",
    "ovr_fit",
    "pav_blocks",
    "posterior_mean",
    "quantile_edges",
    "recursive_binning_fit",
    "uniform",
    "uniform_bin",
    "uniform_bins",
    "uniform_edges",
]


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
