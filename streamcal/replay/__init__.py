"""Prequential replay of prediction logs through calibrators.

:func:`replay` reads a log of events (a score, or one probability per class, and a
label), and for each event lets every calibrator predict from the score, scores the
prediction with streaming metrics, then lets the calibrator learn the label: the
*prequential* (test-then-train) protocol, in which each prediction uses only the labels
known when it is made. Labels may arrive late (a label-time column, or label records
joined on an event id); the whole state can be checkpointed and a replay resumed with
exactly the outputs of an uninterrupted one; malformed rows are reported with their line
number and skipped, or stop the replay.

:func:`log_format` and :func:`read_header` tell how a log file will be read and its
columns (for a command line that checks column names before replaying).
"""

from streamcal.replay._errors import ReplayError
from streamcal.replay._metrics import WINDOW_SUFFIX
from streamcal.replay._checkpoint import CHECKPOINT_FORMAT
from streamcal.replay._readers import log_format, read_header
from streamcal.replay._replay import replay
from streamcal.replay._result import ReplayResult

__all__ = [
    "CHECKPOINT_FORMAT",
    "WINDOW_SUFFIX",
    "ReplayError",
    "ReplayResult",
    "log_format",
    "read_header",
    "replay",
]
