"""Short names for calibrators and metrics, with their parameters: ``"isotonic:window_size=5000"``.

The ``streamcal`` command (and anyone who configures calibrators from text: a config
file, a job argument) names a calibrator or a metric by a *spec*::

    name[:param=value[,param=value ...]]

for instance ``"isotonic"``, ``"isotonic:window_size=5000"``,
``"histogram:n_bins=20,strategy=quantile"`` or ``"ece:n_bins=15"``. The name is one of
:data:`CALIBRATOR_NAMES` (or :data:`METRIC_NAMES`), the parameters are those of the
class's constructor, and each value is read as an int (``5000``), a float (``1e-4``,
``0.5``), ``None``, ``True``, ``False``, or else a string (``quantile``; quotes
around a string are optional, and make ``'1'`` the string ``"1"``). The ``base`` of a
calibeater is given by its short name: ``"tracking:base=isotonic"``.

=================  ====================================================
calibrator name    object built
=================  ====================================================
``isotonic``       ``OnlineIsotonic()``
``venn_abers``     ``VennAbers()`` (inductive Venn-ABERS, merged probability)
``histogram``      ``HistogramBinning()``
``platt``          ``OnlinePlatt()``
``beta``           ``OnlineBeta()``
``tracking``       ``TrackingCalibeater()``
``hedging``        ``HedgingCalibeater(seed=0)``
``foster``         ``EpsilonCalibratedForecaster(seed=0)``
``tops``           ``TrackingCalibeater(base=OnlinePlatt())`` (TOPS)
``hops``           ``HedgingCalibeater(base=OnlinePlatt(), seed=0)`` (HOPS)
=================  ====================================================

Multiclass calibrators (for logs with one score column per class) have their own names,
:data:`MULTICLASS_CALIBRATOR_NAMES`, built by :func:`make_multiclass_calibrator`:

====================  ====================================================
multiclass name       object built
====================  ====================================================
``temperature``       ``TemperatureScaling()``
``vector_scaling``    ``VectorScaling()``
``matrix_scaling``    ``MatrixScaling()``
``dirichlet``         ``DirichletCalibration()``
``fir``               ``FIR()``
``nafir``             ``NAFIR()``
``ovr_isotonic``      ``OneVsRestIsotonic()``
``scir``              ``SCIR()``
``irp``               ``MulticlassIRP()`` (for binary logs, ``irp`` is ``IRP()``)
``top_label``         ``TopLabel(calibrator=OnlineIsotonic(prior_strength=2))``
``class_wise``        ``ClassWise(calibrator=OnlineIsotonic(prior_strength=0.5))``
====================  ====================================================

``top_label`` and ``class_wise`` wrap isotonic regression under a prior
(:mod:`streamcal.core.prior`), not the exact fit ``OnlineIsotonic()``: over the exact
fit a pure block makes a class certain or impossible, and on the streams of
``simulations/multiclass_compare.py`` the observed class got probability 0 on 2 to 40
scored events per stream. Every strength from 0.5 to 8 gave none there; the
strengths are those of the lowest mean log loss over the five streams, each lower than
the exact fit's on every stream (class-wise: 0.5; top-label: 2, within 0.0003 of 4's;
``simulations/priors_multiclass.py``, table in ``simulations/README.md``). A class-wise
calibrator sees every event, a top-label one only those where its class is on top, so
the first needs the lighter prior. The binary calibrator is given by its spec:
``"top_label:calibrator=isotonic"`` is the exact fit,
``"class_wise:calibrator=platt"``, ``"top_label:calibrator=isotonic:prior_strength=1"``,
or, quoted when it has several parameters (a comma inside quotes does not end a
parameter), ``"class_wise:calibrator='isotonic:prior_strength=1,window_size=500'"``.

Metrics come from the metric catalogue, :mod:`streamcal.metrics.catalogue`, which reads
each metric class's own name, description and direction: :data:`METRIC_NAMES` are
``brier``, ``log_loss``, ``ece``, ``sharpness``, ``roc_auc``,
``calibration_refinement``, ``murphy`` and ``corp``; :data:`MULTICLASS_METRIC_NAMES`
are ``brier`` (the multiclass Brier score, in [0, 2]), ``log_loss`` (cross-entropy),
``ece`` (the confidence ECE, also ``confidence_ece``), ``top_label_ece``,
``classwise_ece`` and ``tece``. ``make_metric(spec, task="multiclass")`` builds the
latter.

A bad spec raises a ValueError (a TypeError for a parameter value of the wrong type)
that quotes the spec and names what is wrong: the unknown name and the known ones, the
unknown parameter and the parameters of that name, or the constructor's own message
about a bad value.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping

__all__ = [
    "CALIBRATOR_NAMES",
    "DEFAULT_CALIBRATORS",
    "DEFAULT_METRICS",
    "DEFAULT_MULTICLASS_CALIBRATORS",
    "METRIC_NAMES",
    "MULTICLASS_CALIBRATOR_NAMES",
    "MULTICLASS_METRIC_NAMES",
    "bigger_is_better",
    "calibrator_description",
    "calibrator_parameters",
    "canonical_spec",
    "make_calibrator",
    "make_metric",
    "make_multiclass_calibrator",
    "metric_parameters",
    "parse_spec",
    "spec_value",
]


class _ClassTable(Mapping):
    """name -> (class, fixed defaults applied before the spec's own parameters), each
    class imported when its entry is first read, so that building one calibrator
    imports only that calibrator's module."""

    def __init__(self, entries):
        self._entries = entries  # name -> (class name in streamcal.calibrators, fixed)

    def __getitem__(self, name):
        class_name, fixed = self._entries[name]
        from streamcal import calibrators

        return getattr(calibrators, class_name), fixed

    def __iter__(self):
        return iter(self._entries)

    def __len__(self):
        return len(self._entries)


_CALIBRATOR_TABLE = _ClassTable(
    {
        "isotonic": ("OnlineIsotonic", {}),
        "histogram": ("HistogramBinning", {}),
        "platt": ("OnlinePlatt", {}),
        "beta": ("OnlineBeta", {}),
        "tracking": ("TrackingCalibeater", {}),
        "hedging": ("HedgingCalibeater", {"seed": 0}),  # seeded: a replay is reproducible
        "foster": ("EpsilonCalibratedForecaster", {"seed": 0}),
        "tops": ("TrackingCalibeater", {"base": "platt"}),
        "hops": ("HedgingCalibeater", {"base": "platt", "seed": 0}),
        "irp": ("IRP", {}),
        "venn_abers": ("VennAbers", {}),
    }
)

_MULTICLASS_CALIBRATOR_TABLE = _ClassTable(
    {
        "temperature": ("TemperatureScaling", {}),
        "vector_scaling": ("VectorScaling", {}),
        "matrix_scaling": ("MatrixScaling", {}),
        "dirichlet": ("DirichletCalibration", {}),
        "fir": ("FIR", {}),
        "nafir": ("NAFIR", {}),
        "ovr_isotonic": ("OneVsRestIsotonic", {}),
        "scir": ("SCIR", {}),
        "irp": ("MulticlassIRP", {}),
        "top_label": ("TopLabel", {"calibrator": "isotonic:prior_strength=2"}),
        "class_wise": ("ClassWise", {"calibrator": "isotonic:prior_strength=0.5"}),
    }
)


def _calibrators():
    return _CALIBRATOR_TABLE


def _multiclass_calibrators():
    return _MULTICLASS_CALIBRATOR_TABLE


def _metrics(task: str = "binary"):
    """name (and alias) -> (class, {}) for the metrics of ``task``, from the catalogue."""
    from streamcal.metrics import catalogue

    return {k: (info.cls, {}) for k, info in catalogue.metric_table(task).items()}


def _metric_names(task: str) -> tuple[str, ...]:
    from streamcal.metrics import catalogue

    return catalogue.metric_names(task)


def __getattr__(name: str):
    # METRIC_NAMES and MULTICLASS_METRIC_NAMES derive from the metric catalogue, read
    # when first asked for (importing the registry does not import the metrics)
    if name == "METRIC_NAMES":
        return _metric_names("binary")
    if name == "MULTICLASS_METRIC_NAMES":
        return _metric_names("multiclass")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: The calibrator short names, in the order of their table (derived from it).
CALIBRATOR_NAMES = tuple(_CALIBRATOR_TABLE)

#: The multiclass calibrator short names, in the order of their table (derived from it).
MULTICLASS_CALIBRATOR_NAMES = tuple(_MULTICLASS_CALIBRATOR_TABLE)

#: The multiclass calibrators that ``streamcal replay`` compares by default.
DEFAULT_MULTICLASS_CALIBRATORS = ("temperature", "fir", "ovr_isotonic", "class_wise")

#: The calibrators that ``streamcal replay`` compares side by side by default.
DEFAULT_CALIBRATORS = ("isotonic", "venn_abers", "histogram", "platt", "beta", "tops")

# METRIC_NAMES (the binary metric short names) and MULTICLASS_METRIC_NAMES, in the
# catalogue's display order, are read from streamcal.metrics.catalogue by __getattr__.

#: The metrics that ``streamcal replay`` reports by default (binary and multiclass).
DEFAULT_METRICS = ("brier", "log_loss", "ece")

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
_INT = re.compile(r"[+-]?\d+(_\d+)*\Z")


def _parse_value(text: str):
    """Read a parameter value: int, float, None, True, False, else str."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in ("None", "none", "null"):
        return None
    if text in ("True", "true"):
        return True
    if text in ("False", "false"):
        return False
    if _INT.match(text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def _split_items(tail: str) -> list[str]:
    """``tail`` split at the commas outside quotes: a quoted value may hold commas (the
    spec of a wrapper's binary calibrator, ``calibrator='isotonic:a=1,b=2'``)."""
    items, start, quote = [], 0, None
    for i, ch in enumerate(tail):
        if quote is not None:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == ",":
            items.append(tail[start:i])
            start = i + 1
    items.append(tail[start:])
    return items


def parse_spec(spec: str, kind: str = "calibrator") -> tuple[str, dict]:
    """Split a spec ``"name:param=value,..."`` into its name and parameter dict.

    Only the syntax is checked (not whether the name or the parameters exist); values
    are read as described in the module docstring. ``kind`` only words the errors.
    Cost O(len(spec)).

    Examples
    --------
    >>> parse_spec("histogram:n_bins=20,strategy=quantile")
    ('histogram', {'n_bins': 20, 'strategy': 'quantile'})
    >>> parse_spec("isotonic: resolution = 1e-4, window_size=None")
    ('isotonic', {'resolution': 0.0001, 'window_size': None})
    >>> parse_spec("class_wise:calibrator='isotonic:prior_strength=1,window_size=50'")
    ('class_wise', {'calibrator': 'isotonic:prior_strength=1,window_size=50'})
    >>> parse_spec("isotonic:window_size")
    Traceback (most recent call last):
    ...
    ValueError: Invalid calibrator spec 'isotonic:window_size': 'window_size' is not of the form param=value.

    """
    if not isinstance(spec, str):
        raise TypeError(
            f"A {kind} spec must be a str such as 'isotonic:window_size=5000'. Got {spec!r} instead."
        )
    head, sep, tail = spec.partition(":")
    name = head.strip().lower()
    if not _NAME.match(name):
        raise ValueError(
            f"Invalid {kind} spec {spec!r}: it must start with a {kind} name "
            f"(lower-case letters, digits, '_'), then optionally ':param=value,...'."
        )
    params: dict = {}
    if sep and not tail.strip():
        raise ValueError(
            f"Invalid {kind} spec {spec!r}: nothing after ':' (give param=value,... or drop the ':')."
        )
    for item in _split_items(tail) if sep else ():
        key, eq, text = item.partition("=")
        key, text = key.strip(), text.strip()
        if not eq or not key:
            raise ValueError(
                f"Invalid {kind} spec {spec!r}: {item.strip()!r} is not of the form param=value."
            )
        if not key.isidentifier():
            raise ValueError(
                f"Invalid {kind} spec {spec!r}: {key!r} is not a parameter name."
            )
        if key in params:
            raise ValueError(
                f"Invalid {kind} spec {spec!r}: parameter {key!r} is given twice."
            )
        params[key] = _parse_value(text)
    return name, params


def canonical_spec(spec: str, kind: str = "calibrator") -> str:
    """The spec written the one standard way: lower-case name, no spaces, values as
    Python writes them (two spellings of the same parameter values, of the same types,
    in the same order have the same canonical form). Only the text is normalised:
    ``isotonic``, ``isotonic:prior_strength=0`` and ``isotonic:prior_strength=0.0``
    build the same object under three canonical forms (``streamcal replay`` refuses
    such specs as duplicates by comparing the objects they build). Cost O(len(spec)).

    Examples
    --------
    >>> canonical_spec("Isotonic: window_size = 5_000, resolution=1e-4")
    'isotonic:window_size=5000,resolution=0.0001'

    """
    name, params = parse_spec(spec, kind)
    if not params:
        return name
    return name + ":" + ",".join(f"{k}={spec_value(v)}" for k, v in params.items())


def spec_value(value) -> str:
    """A parameter value as a spec writes it, so that :func:`parse_spec` reads it back
    equal: ``repr`` for numbers, None and booleans; a string bare unless it would read
    as something else (``"1"``, ``"None"``) or holds a comma.

    Examples
    --------
    >>> spec_value(1e-06), spec_value("quantile"), spec_value("None"), spec_value(None)
    ('1e-06', 'quantile', "'None'", 'None')

    """
    if isinstance(value, str):
        # keep the quotes when the bare text would read as something else
        return (
            value if _parse_value(value) == value and "," not in value else repr(value)
        )
    return repr(value)


def _parameters(cls) -> tuple[str, ...]:
    return tuple(p for p in inspect.signature(cls).parameters if p != "self")


def _describe(table, name) -> str:
    cls, fixed = table[name]
    args = ", ".join(f"{k}={_format_value(v)}" for k, v in fixed.items())
    return f"{cls.__name__}({args})"


def _format_value(value) -> str:
    """A fixed default as written in the help: a binary calibrator's spec as the object
    it builds (``OnlineIsotonic(prior_strength=2)``), anything else as its repr."""
    if isinstance(value, str) and value.split(":")[0] in CALIBRATOR_NAMES:
        name, params = parse_spec(value)
        cls, fixed = _calibrators()[name]
        args = ", ".join(f"{k}={_format_value(v)}" for k, v in {**fixed, **params}.items())
        return f"{cls.__name__}({args})"
    return repr(value)


def calibrator_description(name: str, task: str = "binary") -> str:
    """The class and fixed defaults that calibrator ``name`` (of ``task``, ``"binary"``
    or ``"multiclass"``) stands for, as written in the command's help.

    Examples
    --------
    >>> print(calibrator_description("tops"))
    TrackingCalibeater(base=OnlinePlatt())
    >>> print(calibrator_description("class_wise", task="multiclass"))
    ClassWise(calibrator=OnlineIsotonic(prior_strength=0.5))

    """
    table = _calibrators() if task == "binary" else _multiclass_calibrators()
    known = CALIBRATOR_NAMES if task == "binary" else MULTICLASS_CALIBRATOR_NAMES
    _check_name(name, name, table, "calibrator", known)
    return _describe(table, name)


def calibrator_parameters(name: str) -> tuple[str, ...]:
    """The parameters that a spec of calibrator ``name`` may set.

    Examples
    --------
    >>> calibrator_parameters("histogram")
    ('n_bins', 'strategy', 'window_size', 'prior_strength')

    """
    table = _calibrators()
    _check_name(name, name, table, "calibrator", CALIBRATOR_NAMES)
    return _parameters(table[name][0])


def metric_parameters(name: str, task: str = "binary") -> tuple[str, ...]:
    """The parameters that a spec of metric ``name`` (of ``task``, ``"binary"`` or
    ``"multiclass"``) may set.

    Examples
    --------
    >>> metric_parameters("ece")
    ('n_bins', 'strategy', 'window_size', 'half_life')
    >>> metric_parameters("ece", task="multiclass")
    ('n_bins', 'strategy')

    """
    table = _metrics(task)
    _check_metric_name(name, name, table, task)
    return _parameters(table[name][0])


def _check_name(name, spec, table, kind, known):
    if name not in table:
        raise ValueError(
            f"Unknown {kind} {name!r} in spec {spec!r}. Known {kind}s: {', '.join(known)}."
        )


def _check_metric_name(name, spec, table, task):
    """As _check_name, saying "binary only" / "multiclass only" for a metric of the
    other task rather than "unknown"."""
    if name in table:
        return
    from streamcal.metrics import catalogue

    other = "multiclass" if task == "binary" else "binary"
    if name in _metrics(other):
        raise ValueError(
            f"Invalid metric spec {spec!r}: {name!r} is a {other} metric only; "
            f"{task} metrics: {', '.join(catalogue.metric_names(task))}."
        )
    known = ", ".join(catalogue.metric_names(task))
    label = "" if task == "binary" else f"{task} "
    raise ValueError(
        f"Unknown {label}metric {name!r} in spec {spec!r}. Known {label}metrics: {known}."
    )


def _build(spec, kind, table, known, resolve_base: bool, check_name=None):
    name, given = parse_spec(spec, kind)
    if check_name is None:
        _check_name(name, spec, table, kind, known)
    else:
        check_name(name, spec, table)
    cls, fixed = table[name]
    allowed = _parameters(cls)
    for key in given:
        if key not in allowed:
            listed = ", ".join(allowed) if allowed else "(none)"
            raise ValueError(
                f"Invalid {kind} spec {spec!r}: {name} ({_describe(table, name)}) has no "
                f"parameter {key!r}. Its parameters: {listed}."
            )
    params = {**fixed, **given}
    if resolve_base and isinstance(params.get("base"), str):
        base = params["base"]
        if base not in table:
            raise ValueError(
                f"Invalid {kind} spec {spec!r}: the 'base' parameter must be a calibrator "
                f"name among {', '.join(known)}, or None. Got {base!r} instead."
            )
        params["base"] = _build(base, kind, table, known, resolve_base)
    if isinstance(params.get("calibrator"), str):  # the binary calibrator of a wrapper
        inner = params["calibrator"]
        if parse_spec(inner, "calibrator")[0] not in CALIBRATOR_NAMES:
            raise ValueError(
                f"Invalid {kind} spec {spec!r}: the 'calibrator' parameter must be a binary "
                f"calibrator name among {', '.join(CALIBRATOR_NAMES)}. Got {inner!r} instead."
            )
        params["calibrator"] = make_calibrator(inner)
    try:
        return cls(**params)
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"Invalid {kind} spec {spec!r}: {exc}") from None


def make_calibrator(spec: str):
    """Build a fresh calibrator from its spec, e.g. ``"isotonic:window_size=5000"``.

    See the module docstring for the names and the syntax. Cost: parsing the spec and
    constructing the calibrator.

    Parameters
    ----------
    spec
        ``name[:param=value[,param=value ...]]`` with ``name`` in
        :data:`CALIBRATOR_NAMES`.

    Returns
    -------
    streamcal.base.BinaryCalibrator

    Raises
    ------
    ValueError, TypeError
        Quoting the spec: an unknown name (the known ones are listed), an unknown
        parameter (the name's parameters are listed), or the constructor's message
        about a bad value.

    Examples
    --------
    >>> make_calibrator("isotonic:window_size=5000")
    OnlineIsotonic (
      interpolation="step"
      window_size=5000
      half_life=None
      resolution=None
      prior_strength=0.
    )
    >>> make_calibrator("tops").base.__class__.__name__
    'OnlinePlatt'
    >>> make_calibrator("isotonic:windowsize=5000")
    Traceback (most recent call last):
    ...
    ValueError: Invalid calibrator spec 'isotonic:windowsize=5000': isotonic (OnlineIsotonic()) has no parameter 'windowsize'. Its parameters: interpolation, window_size, half_life, resolution, prior_strength.
    >>> make_calibrator("isotonc")
    Traceback (most recent call last):
    ...
    ValueError: Unknown calibrator 'isotonc' in spec 'isotonc'. Known calibrators: isotonic, histogram, platt, beta, tracking, hedging, foster, tops, hops, irp, venn_abers.

    """
    return _build(
        spec, "calibrator", _calibrators(), CALIBRATOR_NAMES, resolve_base=True
    )


def make_multiclass_calibrator(spec: str):
    """Build a fresh multiclass calibrator from its spec, e.g. ``"fir:window_size=5000"``
    or ``"class_wise:calibrator=platt"`` (names: :data:`MULTICLASS_CALIBRATOR_NAMES`).

    Errors are worded as for :func:`make_calibrator`.

    Examples
    --------
    >>> make_multiclass_calibrator("fir:window_size=500").window_size
    500
    >>> type(make_multiclass_calibrator("class_wise:calibrator=platt").calibrator).__name__
    'OnlinePlatt'
    >>> make_multiclass_calibrator("isotonic")
    Traceback (most recent call last):
    ...
    ValueError: Unknown calibrator 'isotonic' in spec 'isotonic'. Known calibrators: temperature, vector_scaling, matrix_scaling, dirichlet, fir, nafir, ovr_isotonic, scir, irp, top_label, class_wise.

    """
    return _build(
        spec,
        "calibrator",
        _multiclass_calibrators(),
        MULTICLASS_CALIBRATOR_NAMES,
        resolve_base=False,
    )


def make_metric(spec: str, task: str = "binary"):
    """Build a fresh streaming metric from its spec, e.g. ``"ece:n_bins=15"``.

    As :func:`make_calibrator`, with ``name`` in :data:`METRIC_NAMES`, or for
    ``task="multiclass"`` in :data:`MULTICLASS_METRIC_NAMES` (or an alias such as
    ``confidence_ece``). A name of the other task raises a ValueError saying so.
    The key of a replay's metric (:func:`streamcal.metrics.catalogue.metric_key`) is
    such a spec.

    Examples
    --------
    >>> m = make_metric("ece:n_bins=15,strategy=quantile")
    >>> m.n_bins, m.strategy
    (15, 'quantile')
    >>> make_metric("ece:bins=15")
    Traceback (most recent call last):
    ...
    ValueError: Invalid metric spec 'ece:bins=15': ece (ECE()) has no parameter 'bins'. Its parameters: n_bins, strategy, window_size, half_life.
    >>> make_metric("ece:n_bins=5", task="multiclass")
    ConfidenceECE: 0.000000
    >>> make_metric("tece")
    Traceback (most recent call last):
    ...
    ValueError: Invalid metric spec 'tece': 'tece' is a multiclass metric only; binary metrics: brier, log_loss, ece, sharpness, roc_auc, calibration_refinement, murphy, corp.

    """
    if task not in ("binary", "multiclass"):
        raise ValueError(
            "The 'task' argument of make_metric must be a str among {'binary', "
            f"'multiclass'}}. Got {task!r} instead."
        )
    return _build(
        spec,
        "metric",
        _metrics(task),
        _metric_names(task),
        resolve_base=False,
        check_name=lambda name, spec, table: _check_metric_name(name, spec, table, task),
    )


def bigger_is_better(column: str) -> bool | None:
    """Whether a larger value of a summary column is better (None: neither).

    ``column`` is a metric spec's name (``"roc_auc"``, ``"ece:n_bins=15"``, binary or
    multiclass: ``"tece"``) or a decomposition component ``"<metric>.<component>"``
    (``"corp.dsc"``), possibly with a suffix such as ``"@window"`` (the value over a
    window of a replay); None for columns that do not rank forecasters (the uncertainty
    terms, unknown names). The directions are those of the metric catalogue
    (:mod:`streamcal.metrics.catalogue`), whose :func:`~streamcal.metrics.catalogue.columns`
    gives them without parsing keys: prefer it in new code.

    Examples
    --------
    >>> bigger_is_better("brier"), bigger_is_better("roc_auc"), bigger_is_better("corp.unc")
    (False, True, None)
    >>> bigger_is_better("corp.dsc@window"), bigger_is_better("tece")
    (True, False)

    """
    from streamcal.metrics import catalogue

    column = column.partition("@")[0]
    name = re.split(r"[:.]", column, maxsplit=1)[0].strip().lower()
    infos = []
    for task in catalogue.TASKS:
        try:
            infos.append(catalogue.metric_info(name, task))
        except ValueError:
            pass
    if "." in column:
        component = column.rpartition(".")[2]
        # a metric's own components; for a metric the catalogue does not know (a name
        # given by the user), the components of any catalogue metric
        known = infos or [
            catalogue.metric_info(n, t)
            for t in catalogue.TASKS
            for n in catalogue.metric_names(t)
        ]
        directions = {d for info in known for c, d in info.components if c == component}
        if len(directions) == 1:
            return directions.pop()
    directions = {info.bigger_is_better for info in infos}
    return directions.pop() if len(directions) == 1 else None
