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
- :mod:`streamcal.core.irp`: isotonic recursive partitioning and recursive binning,
  re-exported from :mod:`~streamcal.core.irp_interval` (binary),
  :mod:`~streamcal.core.irp_simplex` (multiclass, with its grid) and
  :mod:`~streamcal.core.recursive_binning` (the baselines);
- :mod:`streamcal.core.scir`: sorted cumulative isotonic regression (2-D isotonic fit);
- :mod:`streamcal.core.fir`: flattened, normalisation-aware flattened and one-vs-rest
  isotonic regression;
- :mod:`streamcal.core.temperature`: the temperature-scaling fit;
- :mod:`streamcal.core.matrix_scaling`: the vector-scaling, matrix-scaling and Dirichlet
  calibration fits;
- :mod:`streamcal.core.prior`: the prior on block and bin means (``prior_strength``).

The multiclass batch functions (``fit_irp``, ``fit_multiclass_irp``, ``fit_scir``,
``fit_fir``, ``fit_nafir``, ``fit_ovr``, ``fit_temperature``, ``fit_vector_scaling``,
``fit_matrix_scaling``, ``fit_dirichlet``) work on arrays on their own.

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
    "fit_fir": "streamcal.core.fir",
    "fit_nafir": "streamcal.core.fir",
    "fit_ovr": "streamcal.core.fir",
    "fit_irp": "streamcal.core.irp_interval",
    "fit_multiclass_irp": "streamcal.core.irp_simplex",
    "fit_multiclass_recursive_binning": "streamcal.core.recursive_binning",
    "fit_recursive_binning": "streamcal.core.recursive_binning",
    "fit_dirichlet": "streamcal.core.matrix_scaling",
    "fit_matrix_scaling": "streamcal.core.matrix_scaling",
    "fit_vector_scaling": "streamcal.core.matrix_scaling",
    "OnlineNewtonLogistic": "streamcal.core.newton",
    "BlockView": "streamcal.core.pav",
    "IsotonicBlockStore": "streamcal.core.pav",
    "pav_blocks": "streamcal.core.pav",
    "posterior_mean": "streamcal.core.prior",
    "fit_scir": "streamcal.core.scir",
    "fit_temperature": "streamcal.core.temperature",
}

# former names of the batch fits, kept for one release with a DeprecationWarning (not
# in __all__)
_DEPRECATED = {
    old: module
    for module, olds in (
        ("streamcal.core.fir", ("fir_fit", "nafir_fit", "ovr_fit")),
        (
            "streamcal.core.irp",
            (
                "irp_fit",
                "multiclass_irp_fit",
                "multiclass_recursive_binning_fit",
                "recursive_binning_fit",
            ),
        ),
    )
    for old in olds
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_attributes(globals(), {**_LAZY, **_DEPRECATED})
