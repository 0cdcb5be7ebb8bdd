"""The metrics of a replay: resolving names and objects to templates, their windowed
forms, and the values (with decomposition components) a replay reports."""

from __future__ import annotations

import inspect

from streamcal import _validation as V
from streamcal.metrics import (
    CORP,
    ECE,
    ROCAUC,
    TECE,
    Brier,
    CalibrationRefinement,
    ClasswiseECE,
    ConfidenceECE,
    CrossEntropy,
    LogLoss,
    MulticlassBrier,
    MurphyDecomposition,
    Sharpness,
    TopLabelECE,
)
from streamcal.metrics._multiclass import MulticlassCalibrationMetric
from streamcal.metrics.base import StreamingMetric

#: Suffix of the keys of windowed metrics in ``ReplayResult.series`` / ``summary``.
WINDOW_SUFFIX = "@window"

# ---------------------------------------------------------------------- metric names

_BINARY_METRICS = {
    "brier": Brier,
    "log_loss": LogLoss,
    "ece": ECE,
    "sharpness": Sharpness,
    "roc_auc": ROCAUC,
    "calibration_refinement": CalibrationRefinement,
    "murphy": MurphyDecomposition,
    "corp": CORP,
}

_MULTICLASS_METRICS = {
    "brier": MulticlassBrier,
    "log_loss": CrossEntropy,
    "ece": ConfidenceECE,
    "confidence_ece": ConfidenceECE,
    "top_label_ece": TopLabelECE,
    "classwise_ece": ClasswiseECE,
    "tece": TECE,
}

_SHORT_NAMES = {cls: name for name, cls in _BINARY_METRICS.items()}
_SHORT_NAMES.update({cls: name for name, cls in reversed(_MULTICLASS_METRICS.items())})

# Components of the decompositions, reported as "<metric>.<component>".
_COMPONENTS = {
    CORP: ("mcb", "dsc", "unc"),
    CalibrationRefinement: ("calibration", "refinement"),
    MurphyDecomposition: (
        "reliability",
        "resolution",
        "uncertainty",
        "within_bin_variance",
        "within_bin_covariance",
    ),
}


def _spec_value(value) -> str:
    return value if isinstance(value, str) else repr(value)


def _metric_key(metric) -> str:
    """``"ece"`` for ``ECE()``, ``"ece:n_bins=15"`` for ``ECE(n_bins=15)``: the short
    name of the class and the parameters that differ from their defaults."""
    cls = type(metric)
    base = _SHORT_NAMES.get(cls, cls.__name__)
    changed = []
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        value = getattr(metric, name, param.default)
        if param.default is inspect.Parameter.empty or value != param.default:
            changed.append(f"{name}={_spec_value(value)}")
    return base + (":" + ",".join(changed) if changed else "")


def _resolve_metrics(metrics, multiclass: bool) -> dict:
    """key -> a fresh template metric (cloned again per calibrator)."""
    table = _MULTICLASS_METRICS if multiclass else _BINARY_METRICS
    kind = "multiclass" if multiclass else "binary"
    if isinstance(metrics, (str, StreamingMetric)):
        metrics = (metrics,)
    items = (
        list(metrics.items())
        if isinstance(metrics, dict)
        else [(None, m) for m in metrics]
    )
    out = {}
    for key, spec in items:
        if isinstance(spec, str):
            if spec not in table:
                raise ValueError(
                    f"The 'metrics' argument of replay must name {kind} metrics among "
                    f"{{{', '.join(repr(n) for n in table)}}} or be metric objects. "
                    f"Got {spec!r} instead."
                )
            metric = table[spec]()
            key = spec if key is None else key
        elif isinstance(spec, StreamingMetric):
            is_mc = isinstance(spec, MulticlassCalibrationMetric)
            if is_mc != multiclass:
                raise ValueError(
                    f"The 'metrics' argument of replay must hold {kind} metrics for a "
                    f"{kind} log. Got {type(spec).__name__} instead."
                )
            metric = spec.clone()
            key = _metric_key(metric) if key is None else key
        else:
            raise TypeError(
                "The 'metrics' argument of replay must hold metric short names or "
                f"StreamingMetric objects. Got {V.format_value(spec)} instead."
            )
        if not isinstance(key, str) or not key:
            raise TypeError(
                f"Metric names must be non-empty strings. Got {key!r} instead."
            )
        if key in out:
            raise ValueError(
                f"Two metrics are named {key!r}; pass a dict name -> metric to name them apart."
            )
        out[key] = metric
    return out


def _windowed(template: StreamingMetric, window: int):
    """A metric for the last ``window`` events: a clone updated and reverted by the
    replay (revertible metrics), or a clone with ``window_size=window``."""
    if template._revertible:
        return template.clone(), True
    params = inspect.signature(type(template).__init__).parameters
    if "window_size" in params:
        new = {"window_size": window}
        if "half_life" in params:
            new["half_life"] = None
        return template.clone(new), False
    raise ValueError(
        f"The metric {type(template).__name__} can neither revert an event nor take a "
        "window_size, so it cannot be followed over a window; drop 'window' or this metric."
    )


def _values(metric, key: str, out: dict, suffix: str = "") -> None:
    """Put the value of ``metric`` (and of its components) into ``out``, under ``key``
    (and ``key.component``) followed by ``suffix``."""
    out[key + suffix] = metric.get()
    for part in _COMPONENTS.get(type(metric), ()):
        out[f"{key}.{part}{suffix}"] = getattr(metric, part)

