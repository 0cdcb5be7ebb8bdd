"""The metric catalogue: every metric the replay, the command line, the registry and the
report know by name, with what each measures, its direction and its components.

Each metric class carries its own entry as class attributes (``short_name``,
``aliases``, ``description``, ``bigger_is_better``, ``component_directions`` and
``task``; see :class:`streamcal.metrics.base.StreamingMetric`); this module only lists
the classes, in display order, and reads the rest from them. Everything that names,
describes or ranks metrics derives from here: :data:`streamcal.registry.METRIC_NAMES`,
:func:`streamcal.registry.bigger_is_better`, the replay's metric names and keys, and the
column table of a replay's result (:func:`columns`), so that nothing has to parse a key
such as ``"corp.dsc@window"`` back to learn what it is.

=====================  ===========================  ==================================
name                   binary metric                multiclass metric
=====================  ===========================  ==================================
``brier``              ``Brier``                    ``MulticlassBrier`` (in [0, 2])
``log_loss``           ``LogLoss``                  ``CrossEntropy``
``ece``                ``ECE``                      ``ConfidenceECE`` (top-class view;
                                                    also ``confidence_ece``)
``sharpness``          ``Sharpness``
``roc_auc``            ``ROCAUC``
``calibration_refinement`` ``CalibrationRefinement``
``murphy``             ``MurphyDecomposition``
``corp``               ``CORP``
``top_label_ece``                                   ``TopLabelECE``
``classwise_ece``                                   ``ClasswiseECE``
``tece``                                            ``TECE``
=====================  ===========================  ==================================

Examples
--------
>>> from streamcal.metrics import catalogue
>>> catalogue.metric_names("multiclass")
('brier', 'log_loss', 'ece', 'top_label_ece', 'classwise_ece', 'tece')
>>> info = catalogue.metric_info("corp", "binary")
>>> info.cls.__name__, info.bigger_is_better, info.components
('CORP', False, (('mcb', False), ('dsc', True), ('unc', None)))
>>> [c.key for c in catalogue.columns("corp", info.cls(), window=500)]
['corp@window', 'corp.mcb@window', 'corp.dsc@window', 'corp.unc@window']

"""

from __future__ import annotations

import dataclasses
import inspect

from streamcal.metrics._binned import ECE, MurphyDecomposition, Sharpness
from streamcal.metrics._corp import CORP
from streamcal.metrics._multiclass import ClasswiseECE, ConfidenceECE, TopLabelECE
from streamcal.metrics._ranking import ROCAUC
from streamcal.metrics._refinement import CalibrationRefinement
from streamcal.metrics._scoring import Brier, CrossEntropy, LogLoss, MulticlassBrier
from streamcal.metrics._tece import TECE
from streamcal.metrics.base import StreamingMetric

__all__ = [
    "TASKS",
    "WINDOW_SUFFIX",
    "Column",
    "MetricInfo",
    "column_key",
    "columns",
    "metric_info",
    "metric_key",
    "metric_names",
    "metric_table",
    "metric_values",
]

#: The kinds of forecasts a metric scores: binary probabilities, or dicts of class
#: probabilities.
TASKS = ("binary", "multiclass")

#: Suffix of the keys of the values over a replay's window (``"brier@window"``).
WINDOW_SUFFIX = "@window"

# The classes of the catalogue, in display order: the only list kept here; names,
# descriptions and directions are read from the classes.
_CLASSES = {
    "binary": (
        Brier,
        LogLoss,
        ECE,
        Sharpness,
        ROCAUC,
        CalibrationRefinement,
        MurphyDecomposition,
        CORP,
    ),
    "multiclass": (
        MulticlassBrier,
        CrossEntropy,
        ConfidenceECE,
        TopLabelECE,
        ClasswiseECE,
        TECE,
    ),
}


@dataclasses.dataclass(frozen=True)
class MetricInfo:
    """The catalogue's entry for one metric class, read from the class's attributes.

    Attributes
    ----------
    name
        The short name used by the replay and the command line (``"brier"``, ``"tece"``).
    task
        ``"binary"`` or ``"multiclass"``.
    cls
        The metric class; ``cls()`` builds it with its default parameters.
    description
        One sentence: what it measures, its range and, for a multiclass metric, which
        view of the forecast it takes.
    bigger_is_better
        Whether a larger value is better.
    components
        ``((component, bigger_is_better or None), ...)``: the float attributes reported
        next to the value, in report order (None: the term does not rank forecasters).
    aliases
        Other names accepted for the metric.

    Examples
    --------
    >>> from streamcal.metrics.catalogue import metric_info
    >>> info = metric_info("ece", "multiclass")
    >>> info.cls.__name__, info.aliases
    ('ConfidenceECE', ('confidence_ece',))
    >>> info.description.startswith("Confidence ECE (top-class view)")
    True

    """

    name: str
    task: str
    cls: type
    description: str
    bigger_is_better: bool
    components: tuple
    aliases: tuple = ()

    @classmethod
    def of(cls, metric_class: type) -> MetricInfo:
        """The entry that ``metric_class``'s own attributes describe (the class need not
        be in the catalogue; it must have a ``short_name``).

        Examples
        --------
        >>> from streamcal.metrics import Brier
        >>> MetricInfo.of(Brier).name
        'brier'

        """
        return cls(
            name=metric_class.short_name,
            task=metric_class.task,
            cls=metric_class,
            description=metric_class.description,
            bigger_is_better=_direction(metric_class),
            components=tuple(
                (str(c), None if d is None else bool(d))
                for c, d in metric_class.component_directions
            ),
            aliases=tuple(metric_class.aliases),
        )


def _direction(metric) -> bool:
    """``bigger_is_better`` of a metric or a metric class (a class attribute, or else a
    property read from a default instance)."""
    if isinstance(metric, type):
        value = metric.bigger_is_better
        if not isinstance(value, bool):  # a property: river's way
            value = metric().bigger_is_better
        return bool(value)
    return bool(metric.bigger_is_better)


def _build() -> tuple[dict, dict, dict]:
    """name (and alias) -> info per task, the names in order per task, class -> info."""
    by_name: dict = {}
    names: dict = {}
    by_class: dict = {}
    for task, classes in _CLASSES.items():
        table: dict = {}
        for klass in classes:
            info = MetricInfo.of(klass)
            # the class attributes must be complete and consistent: fail at import time
            if info.task != task or not info.name or not info.description:
                raise RuntimeError(f"Incomplete catalogue entry for {klass.__name__}.")
            for name in (info.name, *info.aliases):
                if name in table:
                    raise RuntimeError(f"Two {task} metrics are named {name!r}.")
                table[name] = info
            by_class[klass] = info
        by_name[task] = table
        names[task] = tuple(info.name for info in dict.fromkeys(table.values()))
    return by_name, names, by_class


_BY_NAME, _NAMES, _BY_CLASS = _build()


def _check_task(task, function: str, optional: bool = False) -> None:
    if task in TASKS or (optional and task is None):
        return
    tail = " or None" if optional else ""
    raise ValueError(
        f"The 'task' argument of {function} must be a str among "
        f"{{{', '.join(repr(t) for t in TASKS)}}}{tail}. Got {task!r} instead."
    )


def metric_names(task: str) -> tuple[str, ...]:
    """The short names of the metrics of ``task``, in display order (aliases left out).

    Examples
    --------
    >>> metric_names("binary")
    ('brier', 'log_loss', 'ece', 'sharpness', 'roc_auc', 'calibration_refinement', 'murphy', 'corp')

    """
    _check_task(task, "metric_names")
    return _NAMES[task]


def metric_table(task: str) -> dict[str, MetricInfo]:
    """Every name the catalogue accepts for a metric of ``task`` (aliases after their
    metric's name, in display order) -> its entry.

    Examples
    --------
    >>> list(metric_table("multiclass"))
    ['brier', 'log_loss', 'ece', 'confidence_ece', 'top_label_ece', 'classwise_ece', 'tece']

    """
    _check_task(task, "metric_table")
    return dict(_BY_NAME[task])


def metric_info(name_or_metric, task: str | None = None) -> MetricInfo:
    """The catalogue entry of a metric given by name, class or instance.

    Parameters
    ----------
    name_or_metric
        A short name or alias (``"tece"``, ``"confidence_ece"``), a spec whose
        parameters are ignored (``"ece:n_bins=15"``), a metric class, or a metric.
    task
        ``"binary"``, ``"multiclass"``, or None. A name used by both tasks (``brier``,
        ``log_loss``, ``ece``) needs it; a class or a metric is checked against it.

    Raises
    ------
    ValueError
        For an unknown name (the known names are listed), a name or metric of the other
        task (the message says "binary only" or "multiclass only"), a name of both tasks
        without ``task``, or a class outside the catalogue (a subclass included: it may
        measure something else).
    TypeError
        For anything but a str, a class or a metric.

    Examples
    --------
    >>> metric_info("tece").cls.__name__
    'TECE'
    >>> metric_info("brier", "multiclass").description
    'Multiclass Brier score: squared distance between the probability vector and the one-hot outcome, summed over the classes and averaged over the events, in [0, 2] (twice the binary Brier score for two classes).'
    >>> metric_info("sharpness", "multiclass")
    Traceback (most recent call last):
    ...
    ValueError: The metric 'sharpness' is binary only: it scores binary probabilities. Multiclass metrics: brier, log_loss, ece, top_label_ece, classwise_ece, tece.
    >>> metric_info("brir", "binary")
    Traceback (most recent call last):
    ...
    ValueError: Unknown binary metric 'brir'. Binary metrics: brier, log_loss, ece, sharpness, roc_auc, calibration_refinement, murphy, corp.

    """
    _check_task(task, "metric_info", optional=True)
    if isinstance(name_or_metric, str):
        return _info_of_name(name_or_metric, task)
    if isinstance(name_or_metric, StreamingMetric):
        klass = type(name_or_metric)
    elif isinstance(name_or_metric, type) and issubclass(name_or_metric, StreamingMetric):
        klass = name_or_metric
    else:
        raise TypeError(
            "The 'name_or_metric' argument of metric_info must be a metric name, a "
            f"metric class or a metric. Got {name_or_metric!r} instead."
        )
    info = _BY_CLASS.get(klass)
    if info is None:
        raise ValueError(
            f"The metric class {klass.__name__} is not in the metric catalogue; its "
            f"classes: {', '.join(k.__name__ for k in _BY_CLASS)}."
        )
    if task is not None and info.task != task:
        raise ValueError(_wrong_task(repr(info.name) + f" ({klass.__name__})", info.task))
    return info


def _wrong_task(what: str, its_task: str) -> str:
    other = TASKS[1 - TASKS.index(its_task)]
    scores = (
        "binary probabilities"
        if its_task == "binary"
        else "dicts of class probabilities (logs with one score column per class)"
    )
    return (
        f"The metric {what} is {its_task} only: it scores {scores}. "
        f"{other.capitalize()} metrics: {', '.join(_NAMES[other])}."
    )


def _info_of_name(text: str, task: str | None) -> MetricInfo:
    name = text.partition(":")[0].strip().lower()
    tasks = (task,) if task is not None else TASKS
    found = [_BY_NAME[t][name] for t in tasks if name in _BY_NAME[t]]
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise ValueError(
            f"The metric name {name!r} is both a binary and a multiclass metric; give "
            "task='binary' or task='multiclass'."
        )
    if task is not None:
        other = TASKS[1 - TASKS.index(task)]
        if name in _BY_NAME[other]:
            raise ValueError(_wrong_task(repr(name), other))
        raise ValueError(
            f"Unknown {task} metric {name!r}. {task.capitalize()} metrics: "
            f"{', '.join(_NAMES[task])}."
        )
    raise ValueError(
        f"Unknown metric {name!r}. Binary metrics: {', '.join(_NAMES['binary'])}; "
        f"multiclass metrics: {', '.join(_NAMES['multiclass'])}."
    )


def _spec_value(value) -> str:
    # as streamcal.registry writes a spec's values, so that a key builds its metric back
    from streamcal.registry import spec_value

    return spec_value(value)


def metric_key(metric) -> str:
    """The key of a metric in a replay's summary: its catalogue name, then the
    parameters that differ from their defaults, as a spec (``"ece:n_bins=15"``) that
    :func:`streamcal.registry.make_metric` builds back. A class outside the catalogue
    (a subclass included) is keyed by its class name.

    Examples
    --------
    >>> from streamcal.metrics import ECE, LogLoss, ConfidenceECE
    >>> metric_key(ECE()), metric_key(ECE(n_bins=15)), metric_key(LogLoss(eps=1e-6))
    ('ece', 'ece:n_bins=15', 'log_loss:eps=1e-06')
    >>> metric_key(ConfidenceECE(n_bins=5))
    'ece:n_bins=5'

    """
    cls = type(metric)
    info = _BY_CLASS.get(cls)
    base = info.name if info is not None else cls.__name__
    changed = []
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        value = getattr(metric, name, param.default)
        if param.default is inspect.Parameter.empty or value != param.default:
            changed.append(f"{name}={_spec_value(value)}")
    return base + (":" + ",".join(changed) if changed else "")


def metric_values(metric) -> dict:
    """The value of a metric and of its components, as a replay reports them:
    ``{None: metric.get(), component: value, ...}`` in report order. The components are
    those of the metric's class attribute ``component_directions``. Cost: ``get()`` and
    each component's.

    Examples
    --------
    >>> from streamcal.metrics import CORP
    >>> m = CORP()
    >>> m.update_many([0, 1, 1, 0], [0.2, 0.6, 0.9, 0.7])
    >>> {k: round(v, 4) for k, v in metric_values(m).items()}
    {None: 0.175, 'mcb': 0.05, 'dsc': 0.125, 'unc': 0.25}

    """
    out = {None: metric.get()}
    for component, _ in getattr(type(metric), "component_directions", ()):
        out[component] = getattr(metric, component)
    return out


@dataclasses.dataclass(frozen=True)
class Column:
    """One number a replay reports per calibrator: a metric's value or one of its
    components, over the whole replay or over its window. A replay's result lists its
    columns in :attr:`streamcal.replay.ReplayResult.columns`, so that what a column is
    (which metric, which component, which window, which direction) is read there, not
    parsed back from its key.

    Attributes
    ----------
    key
        The key in the replay's summary and series (``"brier"``, ``"corp.dsc"``,
        ``"ece:n_bins=15@window"``).
    metric
        The metric's key (``"corp"``, ``"ece:n_bins=15"``, or a name given by the user).
    component
        The component (``"dsc"``), or None for the metric's value.
    window
        The length of the window, in scored events, of a value over the replay's last
        events; None for a value over all of them.
    bigger_is_better
        Whether a larger value is better; None when it does not rank forecasters.
    name
        The metric's catalogue name (``"ece"``), or None for a metric outside it.
    task
        ``"binary"`` or ``"multiclass"``, or None for a metric outside the catalogue.
    description
        What the metric measures (its class's ``description``; a component shares its
        metric's), or None when the class has none.

    ``dataclasses.asdict(column)`` is JSON-safe and ``Column(**d)`` builds it back.

    Examples
    --------
    >>> from streamcal.metrics import MurphyDecomposition
    >>> col = columns("murphy", MurphyDecomposition())[2]
    >>> col.key, col.component, col.bigger_is_better, col.window
    ('murphy.resolution', 'resolution', True, None)
    >>> col.description.startswith("Murphy decomposition")
    True

    """

    key: str
    metric: str
    component: str | None
    window: int | None
    bigger_is_better: bool | None
    name: str | None = None
    task: str | None = None
    description: str | None = None


def column_key(metric_key: str, component: str | None = None, window=None) -> str:
    """The summary key of a column: ``metric_key``, ``.component`` if any, and
    :data:`WINDOW_SUFFIX` for a value over a window (``window`` its length, or None).

    Examples
    --------
    >>> column_key("corp", "dsc", window=500)
    'corp.dsc@window'
    >>> column_key("corp")
    'corp'

    """
    key = metric_key if component is None else f"{metric_key}.{component}"
    return key + WINDOW_SUFFIX if window is not None and window is not False else key


def columns(metric_key: str, metric, window: int | None = None) -> list[Column]:
    """The columns that a replay reports for ``metric`` under ``metric_key``: its value,
    then its components in report order (the keys of :func:`metric_values`), over all
    events, or, with ``window`` (its length in events), over the replay's window.

    ``metric`` is a metric or a metric class; directions and the description come from
    its class attributes, so a metric outside the catalogue gets columns too (``name``
    and ``task`` None).

    Examples
    --------
    >>> from streamcal.metrics import CalibrationRefinement, TECE
    >>> [(c.key, c.bigger_is_better) for c in columns("cr", CalibrationRefinement())]
    [('cr', False), ('cr.calibration', False), ('cr.refinement', False)]
    >>> col, = columns("tece", TECE, window=500)
    >>> col.key, col.window, col.bigger_is_better, col.name, col.task
    ('tece@window', 500, False, 'tece', 'multiclass')

    """
    cls = metric if isinstance(metric, type) else type(metric)
    info = _BY_CLASS.get(cls)
    name, task = (info.name, info.task) if info is not None else (None, None)
    window = None if window is None or window is False else window
    description = getattr(cls, "description", None) or None
    out = [
        Column(
            column_key(metric_key, None, window),
            metric_key,
            None,
            window,
            _direction(metric),
            name,
            task,
            description,
        )
    ]
    for component, direction in getattr(cls, "component_directions", ()):
        out.append(
            Column(
                column_key(metric_key, component, window),
                metric_key,
                component,
                window,
                None if direction is None else bool(direction),
                name,
                task,
                description,
            )
        )
    return out
