"""Pure algorithm cores on plain data (no river imports), each stateful one with a
``_check()`` of its invariants.

- :mod:`streamcal.core.pav`: the PAV block store of online isotonic regression;
- :mod:`streamcal.core.binning`: running histogram bins and their edges;
- :mod:`streamcal.core.newton`: online Newton steps for small logistic models;
- :mod:`streamcal.core.calibeating`: per-bin outcome statistics, Foster's game,
  exponential weights;
- :mod:`streamcal.core.eprocess`: the mixture test martingale of the calibration monitor;
- :mod:`streamcal.core.irp`: isotonic recursive partitioning (binary and multiclass) and
  recursive binning;
- :mod:`streamcal.core.scir`: sorted cumulative isotonic regression (2-D isotonic fit);
- :mod:`streamcal.core.fir`: flattened, normalisation-aware flattened and one-vs-rest
  isotonic regression;
- :mod:`streamcal.core.temperature`: the temperature-scaling fit.

The multiclass batch functions (``irp_fit``, ``multiclass_irp_fit``, ``fit_scir``,
``fir_fit``, ``nafir_fit``, ``ovr_fit``, ``fit_temperature``) work on arrays on their own.
"""

from streamcal.core.binning import (
    HistogramBinner,
    ScoreCells,
    quantile_edges,
    uniform_edges,
)
from streamcal.core.calibeating import (
    BinOutcomes,
    ExponentialWeights,
    FosterGame,
    bin_index,
    uniform,
)
from streamcal.core.eprocess import MixtureEProcess
from streamcal.core.fir import fir_fit, nafir_fit, ovr_fit
from streamcal.core.irp import irp_fit, multiclass_irp_fit, recursive_binning_fit
from streamcal.core.newton import OnlineNewtonLogistic
from streamcal.core.pav import BlockView, IsotonicBlockStore, pav_blocks
from streamcal.core.scir import fit_scir
from streamcal.core.temperature import fit_temperature

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
    "fir_fit",
    "fit_scir",
    "fit_temperature",
    "irp_fit",
    "multiclass_irp_fit",
    "nafir_fit",
    "ovr_fit",
    "pav_blocks",
    "quantile_edges",
    "recursive_binning_fit",
    "uniform",
    "uniform_edges",
]
