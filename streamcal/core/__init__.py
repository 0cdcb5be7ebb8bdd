"""Pure algorithm cores on plain data (no river imports), each stateful one with a
``_check()`` of its invariants.

- :mod:`streamcal.core.pav`: the PAV block store of online isotonic regression;
- :mod:`streamcal.core.binning`: running histogram bins and their edges;
- :mod:`streamcal.core.newton`: online Newton steps for small logistic models;
- :mod:`streamcal.core.calibeating`: per-bin outcome statistics, Foster's game,
  exponential weights;
- :mod:`streamcal.core.eprocess`: the mixture test martingale of the calibration monitor.
"""

from streamcal.core.binning import HistogramBinner, ScoreCells, quantile_edges, uniform_edges
from streamcal.core.calibeating import BinOutcomes, ExponentialWeights, FosterGame, bin_index, uniform
from streamcal.core.eprocess import MixtureEProcess
from streamcal.core.newton import OnlineNewtonLogistic
from streamcal.core.pav import BlockView, IsotonicBlockStore, pav_blocks

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
    "pav_blocks",
    "quantile_edges",
    "uniform",
    "uniform_edges",
]
