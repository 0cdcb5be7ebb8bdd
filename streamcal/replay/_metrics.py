"""The metrics of a replay: resolving names and objects to templates, their windowed
forms, and the values (with decomposition components) a replay reports."""

from __future__ import annotations

import inspect

from streamcal import _validation as V
from streamcal.metrics import MulticlassCalibrationMetric, catalogue
from streamcal.metrics.base import StreamingMetric
from streamcal.metrics.catalogue import (
    WINDOW_SUFFIX,
    columns,
    metric_key,
    metric_values,
)

# ---------------------------------------------------------------------- metric names

# the names that replay resolves (from streamcal.metrics.catalogue)
_BINARY_METRICS = {k: i.cls for k, i in catalogue.metric_table("binary").items()}
_MULTICLASS_METRICS = {k: i.cls for k, i in catalogue.metric_table("multiclass").items()}

# kept for old callers: the key of a metric is the catalogue's
_metric_key = metric_key


def _resolve_metrics(metrics, multiclass: bool) -> dict:
    """key -> a fresh template metric (cloned again per calibrator)."""
    kind = "multiclass" if multiclass else "binary"
    table = _MULTICLASS_METRICS if multiclass else _BINARY_METRICS
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
                other = _BINARY_METRICS if multiclass else _MULTICLASS_METRICS
                why = (
                    f", a {'binary' if multiclass else 'multiclass'} metric only"
                    if spec in other
                    else ""
                )
                raise ValueError(
                    f"The 'metrics' argument of replay must name {kind} metrics among "
                    f"{{{', '.join(repr(n) for n in table)}}} or be metric objects. "
                    f"Got {spec!r} instead{why}."
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
            key = metric_key(metric) if key is None else key
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
    (and ``key.component``) followed by ``suffix``: the keys of
    :func:`streamcal.metrics.catalogue.columns`."""
    for component, value in metric_values(metric).items():
        name = key if component is None else f"{key}.{component}"
        out[name + suffix] = value


def _columns(templates: dict, window: int | None) -> tuple:
    """The column table of a replay of the metrics ``templates`` (key -> metric, as
    :func:`_resolve_metrics` returns) with a ``window`` of that many events (or None):
    a tuple of :class:`streamcal.metrics.catalogue.Column` in the order of the keys of
    the replay's summary per calibrator, every metric's value and components, then,
    with a window, the same over the window (:attr:`ReplayResult.columns`)."""
    out = [c for k, m in templates.items() for c in columns(k, m)]
    if window is not None:
        out += [c for k, m in templates.items() for c in columns(k, m, window=window)]
    return tuple(out)
