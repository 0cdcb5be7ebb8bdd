"""Isotonic recursive partitioning (IRP) and its baselines, under one name: this module
re-exports

- :mod:`streamcal.core.irp_interval`: binary IRP on the score line, :func:`fit_irp`
  and its :class:`IntervalFit`;
- :mod:`streamcal.core.irp_simplex`: multiclass IRP on the probability simplex,
  :func:`fit_multiclass_irp`, its :class:`SimplexFit` and its grid of split points
  (:func:`simplex_grid`);
- :mod:`streamcal.core.recursive_binning`: the recursive binning baselines without the
  monotony constraint, :func:`fit_recursive_binning` and
  :func:`fit_multiclass_recursive_binning`.

The former names ``irp_fit``, ``multiclass_irp_fit``, ``recursive_binning_fit`` and
``multiclass_recursive_binning_fit`` still work for one release, with a
DeprecationWarning.

Examples
--------
>>> fit_irp([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1]).values.tolist()
[0.0, 0.5, 1.0]
"""

from __future__ import annotations

from streamcal.core._deprecated import deprecated_alias
from streamcal.core.irp_interval import IntervalFit, fit_irp
from streamcal.core.irp_simplex import (
    GRID_BUDGET,
    GRID_MAX,
    SimplexFit,
    capped_grid_size,
    default_grid_size,
    fit_multiclass_irp,
    grid_count,
    is_roc_monotone,
    simplex_grid,
)
from streamcal.core.recursive_binning import (
    fit_multiclass_recursive_binning,
    fit_recursive_binning,
)

__all__ = [
    "GRID_BUDGET",
    "GRID_MAX",
    "IntervalFit",
    "SimplexFit",
    "capped_grid_size",
    "default_grid_size",
    "fit_irp",
    "fit_multiclass_irp",
    "fit_multiclass_recursive_binning",
    "fit_recursive_binning",
    "grid_count",
    "is_roc_monotone",
    "simplex_grid",
]

# deprecated names, kept for one release (not in __all__)
irp_fit = deprecated_alias(fit_irp, "irp_fit")
multiclass_irp_fit = deprecated_alias(fit_multiclass_irp, "multiclass_irp_fit")
recursive_binning_fit = deprecated_alias(fit_recursive_binning, "recursive_binning_fit")
multiclass_recursive_binning_fit = deprecated_alias(
    fit_multiclass_recursive_binning, "multiclass_recursive_binning_fit"
)
