"""Calibration monitors: an anytime-valid test martingale and river's drift detectors on
calibration residuals, for binary scores and for multiclass probabilities."""

from __future__ import annotations

import base64
import math
import struct

from river import drift, stats

from streamcal import _json
from streamcal import _validation as V
from streamcal._classes import top_class
from streamcal._snapshot import StateChecks
from streamcal.calibrators.isotonic import MIN_HALF_LIFE, MIN_RESOLUTION, OnlineIsotonic
from streamcal.core.eprocess import MixtureEProcess, log_mean_exp
from streamcal.monitor.base import BaseMonitor

__all__ = ["CalibrationMonitor", "MulticlassCalibrationMonitor"]

METHODS = ("eprocess", "adwin", "page-hinkley")
RESIDUALS = ("signed", "spread", "both")
VIEWS = ("top-label", "class-wise")
_DETECTORS = {"adwin": drift.ADWIN, "page-hinkley": drift.PageHinkley}
# exp() of a log-e-value above this overflows
_MAX_LOG = math.log(1.7976931348623157e308)


def _set_of(values) -> str:
    return "{" + ", ".join(map(repr, values)) + "}"


def _is_nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _is_json_scalar(value) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


class CalibrationMonitor(BaseMonitor):
    """Watch a stream of binary scores and their labels for miscalibration; alarm like
    river's drift detectors.

    Call ``update(score, label)`` for each event, after the label is known, then read
    :attr:`drift_detected`: True right after the update that raised an alarm. The next
    update first resets the monitor (wealth back to 1, a fresh recalibrator or fresh
    detectors), so that it watches the following events for the next drift;
    :attr:`n_events` and :attr:`n_alarms` count across resets.

    With ``method="eprocess"`` (the default) the monitor runs a sequential test of the
    hypothesis that the scores are calibrated, ``P(label = 1 | past, score) = score``,
    with a guarantee: on a calibrated stream the probability of *ever* raising an alarm
    (between two resets) is at most ``alpha``, however long the stream and however often
    one looks. For each event it bets on the label with the forecast
    ``q = (1 - lam) * g(score) + lam * score``, where ``g`` is the online isotonic
    recalibration (:class:`streamcal.OnlineIsotonic`) of the scores learnt from the
    previous events only (shrunk towards the score while it has seen few events, see
    ``prior_weight``), and multiplies its wealth by the likelihood ratio
    ``q(label) / score(label)`` (``x(1) = x``, ``x(0) = 1 - x``). Under the hypothesis
    each factor has expectation exactly 1 given the past, so the wealth is a test
    martingale; the e-value is the average wealth over the mixing weights ``lam`` (an
    average of test martingales is one), and by Ville's inequality it reaches
    ``1 / alpha`` with probability at most ``alpha``. The monitor alarms when it does.

    With ``method="adwin"`` or ``"page-hinkley"`` river's ``drift.ADWIN`` or
    ``drift.PageHinkley`` watches calibration residuals: a fast heuristic without that
    guarantee (with river's defaults, in the simulations, Page-Hinkley alarmed on about
    7% of calibrated streams of 5,000 events and ADWIN on none, but ADWIN missed most
    shifts of +0.05 in probability; neither sees a temperature change of symmetric
    scores on the ``"signed"`` residual).

    Parameters
    ----------
    alpha
        Level of the test (``method="eprocess"``): the alarm threshold on the e-value is
        ``1 / alpha``. A real number in (0, 1). Not used by the river detectors, whose
        sensitivity is set through ``detector_params``.
    method
        ``"eprocess"``, ``"adwin"`` or ``"page-hinkley"``.
    lam
        Mixing weight(s) of the raw score in the betting forecast (``"eprocess"``): a
        real number in (0, 1] or a non-empty tuple of them, whose test martingales are
        averaged. Small weights bet hard on the recalibration (fast detection of large
        miscalibration, large losses while the recalibrator is still noisy); large
        weights bet cautiously. ``lam = 1`` never bets. The default mixes five weights,
        losing at most ``log 5`` of evidence to the best of them.
    half_life
        Exponential forgetting of the recalibrator (``"eprocess"``), in events: see
        :class:`streamcal.OnlineIsotonic`. A finite real number >= 1e-18, or None for none.
        Forgetting lets the recalibrator follow a drift that happens after a long
        calibrated stretch; without it the recalibrator carries all the events since the
        last reset and follows a drift ever more slowly.
    window_size
        Sliding window of the recalibrator (``"eprocess"``): an int >= 1 or None.
    resolution
        Score grid of the recalibrator (``"eprocess"``): a real number in (0, 1], at
        least the smallest normal float, or None. It bounds the recalibrator's memory
        at ``1 / resolution + 1`` cells. The bet itself uses the exact score.
    prior_weight
        Pseudo-events at the identity (``"eprocess"``), a finite real number >= 0: the
        bet uses ``g = (n * iso(score) + prior_weight * score) / (n + prior_weight)``,
        where ``iso`` is the isotonic recalibration and ``n`` the number of events it
        has learnt since the last reset. A fit on few events is mostly noise; betting
        on it early costs wealth that a later drift must win back. 0 bets on the raw
        fit from the second event on (the first bet is always void: the empty fit
        predicts the score itself).
    residual
        What the river detectors watch (``"adwin"``, ``"page-hinkley"``):

        - ``"signed"``: ``label - score``, whose mean moves with a bias;
        - ``"spread"``: ``(label - score) * (2 * score - 1)``, positive on average when
          the outcomes are more extreme than the scores (under-confidence), negative
          when less (over-confidence), so it sees a temperature change that leaves the
          mean residual at 0;
        - ``"both"``: one detector on each; the monitor alarms when either does (and
          their false alarms add up).
    detector_params
        Keyword arguments for the river detector (``"adwin"``: ``delta``, ``clock``,
        ``max_buckets``, ``min_window_length``, ``grace_period``; ``"page-hinkley"``:
        ``min_instances``, ``delta``, ``threshold``, ``alpha``, ``mode``), as a dict of
        JSON scalars, or None for river's defaults.

    Attributes
    ----------
    drift_detected
        Whether the last update raised an alarm.
    e_value
        The e-value since the last reset (``"eprocess"``; None for the detectors): 1.0
        after a reset, ``inf`` after a label that contradicts a score of 0 or 1.
    log_e_value
        Its natural logarithm.
    n_alarms, n_events
        Alarms raised and updates made since the monitor was created.

    Notes
    -----
    The guarantee holds for any stream on which the scores are calibrated given the
    past, including dependent ones (rain after rain), because the recalibrator only
    uses past events (it predicts, then learns). It holds between resets: after ``k``
    alarms the next segment again has false-alarm probability at most ``alpha``. It is
    a test of calibration *since the last reset*, not a change detector with a bounded
    delay: while the scores are calibrated the recalibrator's noise makes the wealth
    drift below 1 (slowly: with the defaults, on calibrated streams of Beta(2, 5) or
    uniform scores, by a factor of about 4 over the first 2,000 events in the median
    stream, 10 in one stream out of ten), and a drift that comes later must first win
    that back. Forgetting (``half_life``, ``window_size``) keeps the recalibrator able
    to follow a late drift. Measured false-alarm rates and delays:
    ``simulations/results/monitor_alarms.md``.

    A score of exactly 0 or 1 is not bet against; if its label contradicts it (score 0,
    label 1 or score 1, label 0) the score is certainly wrong, the likelihood ratio is
    infinite and the monitor alarms at once, whatever ``alpha``. Clip the scores of a
    model that outputs hard 0 or 1 if that is not wanted.

    There are no sample weights: a likelihood ratio raised to a weight is no longer an
    e-value (its expectation exceeds 1), so weighting would void the guarantee.

    Cost per event: ``"eprocess"``, one prediction and one update of the recalibrator
    (O(1 / resolution) at worst, usually much less) and O(len(lam)) arithmetic;
    the detectors, O(1) amortised.

    Examples
    --------
    A calibrated forecaster for 1,000 events, then one whose outcomes happen 0.3 more
    often than it says:

    >>> import random
    >>> from streamcal.monitor import CalibrationMonitor
    >>> rng = random.Random(7)
    >>> monitor = CalibrationMonitor(alpha=0.01)
    >>> for t in range(2000):
    ...     score = rng.random()
    ...     truth = score if t < 1000 else min(1.0, score + 0.3)
    ...     monitor.update(score, rng.random() < truth)
    ...     if monitor.drift_detected:
    ...         print(f"alarm at event {t}, e-value {monitor.e_value:.0f}")
    ...         break
    alarm at event 1250, e-value 103

    The e-value so far and the reset that follows an alarm:

    >>> round(monitor.log_e_value, 2), monitor.n_alarms
    (4.64, 1)
    >>> monitor.update(0.5, 1)
    >>> monitor.drift_detected, monitor.n_events
    (False, 1252)

    A label that a score of 0 rules out:

    >>> monitor.update(0.0, 1)
    >>> monitor.drift_detected, monitor.e_value
    (True, inf)

    River's Page-Hinkley test on the residuals ``label - score``:

    >>> ph = CalibrationMonitor(method="page-hinkley", detector_params={"threshold": 20.0})
    >>> ph.e_value is None
    True

    """

    def __init__(
        self,
        alpha: float = 0.05,
        method: str = "eprocess",
        lam: float | tuple[float, ...] = (0.1, 0.3, 0.5, 0.7, 0.9),
        half_life: float | None = 500.0,
        window_size: int | None = None,
        resolution: float | None = 0.01,
        prior_weight: float = 100.0,
        residual: str = "signed",
        detector_params: dict | None = None,
    ):
        name = type(self).__name__
        V.check_param(
            name,
            "alpha",
            alpha,
            V.is_real(alpha) and 0.0 < alpha < 1.0,
            "a real number in (0, 1)",
        )
        V.check_param(
            name,
            "method",
            method,
            isinstance(method, str) and method in METHODS,
            f"a str among {_set_of(METHODS)}",
        )
        lams = lam if isinstance(lam, tuple) else (lam,)
        V.check_param(
            name,
            "lam",
            lam,
            len(lams) > 0 and all(V.is_real(x) and 0.0 < x <= 1.0 for x in lams),
            "a real number in (0, 1] or a non-empty tuple of them",
        )
        V.check_param(
            name,
            "half_life",
            half_life,
            half_life is None or (V.is_real(half_life) and MIN_HALF_LIFE <= half_life < math.inf),
            f"a finite real number >= {MIN_HALF_LIFE:g} or None",
        )
        V.check_optional_int_param(name, "window_size", window_size, 1)
        V.check_param(
            name,
            "resolution",
            resolution,
            resolution is None or (V.is_real(resolution) and MIN_RESOLUTION <= resolution <= 1),
            f"a real number in [{MIN_RESOLUTION!r}, 1] (the smallest normal float to 1) or None",
        )
        prior_weight = V.check_nonnegative_param(name, "prior_weight", prior_weight)
        V.check_param(
            name,
            "residual",
            residual,
            isinstance(residual, str) and residual in RESIDUALS,
            f"a str among {_set_of(RESIDUALS)}",
        )
        ok = detector_params is None or (
            isinstance(detector_params, dict)
            and all(
                isinstance(k, str) and _is_json_scalar(v)
                for k, v in detector_params.items()
            )
        )
        if ok and detector_params and method in _DETECTORS:
            try:
                _DETECTORS[method](**detector_params)
            except (TypeError, ValueError):
                ok = False
        detector = _DETECTORS.get(method, drift.ADWIN).__name__
        V.check_param(
            name,
            "detector_params",
            detector_params,
            ok,
            f"None or a dict of keyword arguments (JSON scalars) accepted by river's drift.{detector}",
        )
        self.alpha = alpha
        self.method = method
        self.lam = lam
        self.half_life = half_life
        self.window_size = window_size
        self.resolution = resolution
        self.prior_weight = prior_weight
        self.residual = residual
        self.detector_params = detector_params
        self._reset()

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {
            "alpha": 0.2,
            "lam": 0.5,
            "half_life": None,
            "resolution": None,
            "prior_weight": 0.0,
        }
        yield {
            "lam": (0.25, 1.0),
            "half_life": 50.0,
            "window_size": 200,
            "resolution": 0.05,
            "prior_weight": 7.5,
        }
        yield {"method": "adwin", "detector_params": {"delta": 0.1, "clock": 2}}
        yield {
            "method": "page-hinkley",
            "residual": "both",
            "detector_params": {"threshold": 5.0},
        }

    # ------------------------------------------------------------------ state

    def _reset(self) -> None:
        self._n_events = 0
        self._n_alarms = 0
        self._eprocess = self.method == "eprocess"
        self._log_threshold = -math.log(self.alpha)
        if self._eprocess:
            self._process = MixtureEProcess(
                self.lam if isinstance(self.lam, tuple) else (self.lam,)
            )
        else:
            self._kinds = (
                ("signed", "spread") if self.residual == "both" else (self.residual,)
            )
        self._restart()

    def _new_recalibrator(self) -> OnlineIsotonic:
        return OnlineIsotonic(
            window_size=self.window_size,
            half_life=self.half_life,
            resolution=self.resolution,
        )

    def _new_detector(self):
        return _DETECTORS[self.method](**(self.detector_params or {}))

    def _restart(self) -> None:
        """The reset after an alarm: fresh evidence, counters kept."""
        self._drift_detected = False
        if self._eprocess:
            self._recal = self._new_recalibrator()
            self._process.reset()
        else:
            self._detectors = [self._new_detector() for _ in self._kinds]

    # ------------------------------------------------------------------ updates

    def update(self, score: float, label: bool | int) -> None:
        """Watch one scored event; then read :attr:`drift_detected`. Cost: see Notes.

        Parameters
        ----------
        score
            The forecast probability that ``label`` is 1, a real number in [0, 1].
        label
            The outcome: 0, 1, False or True.
        """
        p = V.check_score(score, "CalibrationMonitor", "update")
        y = V.check_label(label, "CalibrationMonitor", "update")
        if self._drift_detected:
            self._restart()
        self._n_events += 1
        if self._advance(p, y):
            self._drift_detected = True
            self._n_alarms += 1

    def _advance(self, p: float, y: float) -> bool:
        """Feed a validated event to the mechanism; whether it calls for an alarm."""
        if self._eprocess:
            recal = self._recal
            g = recal.predict_one(p)  # learnt from the past only: predict, then learn
            n = recal.n_events
            c = self.prior_weight
            if c and n:  # (with n = 0, g is the score itself already)
                g = min((n * g + c * p) / (n + c), 1.0)  # min: rounding
            log_e = self._process.update(p, g, y)
            recal.learn_one(p, y)
            return log_e >= self._log_threshold
        alarm = False
        for kind, det in zip(self._kinds, self._detectors):
            det.update((y - p) if kind == "signed" else (y - p) * (2.0 * p - 1.0))
            alarm = alarm or det.drift_detected
        return alarm

    # ------------------------------------------------------------------ views

    @property
    def e_value(self) -> float | None:
        """The e-value since the last reset (None unless ``method="eprocess"``)."""
        if not self._eprocess:
            return None
        le = self._process.log_e
        return math.exp(le) if le <= _MAX_LOG else math.inf

    @property
    def log_e_value(self) -> float | None:
        """Natural log of :attr:`e_value` (None unless ``method="eprocess"``)."""
        return self._process.log_e if self._eprocess else None

    # ------------------------------------------------------------------ snapshots

    def _get_state(self) -> dict:
        state = {
            "drift_detected": self._drift_detected,
            "n_alarms": self._n_alarms,
            "n_events": self._n_events,
        }
        state.update(self._mechanism_state())
        return state

    def _mechanism_state(self) -> dict:
        if self._eprocess:
            return {
                "recalibrator": self._recal.to_dict(),
                "log_wealth": self._process.to_lists(),
            }
        return {"detectors": [_detector_state(d) for d in self._detectors]}

    def _validate_state(self, state: dict, check) -> None:
        # each factor of the e-process is at least lam (see streamcal.core.eprocess), so
        # after n events a log-wealth is at least n * log(lam): a snapshot below that
        # bound (log_wealth=-1e308, say) could never alarm
        if self.method != "eprocess":
            return
        n = check.int(check.entry(state, "n_events"), "state['n_events']")
        lams = self.lam if isinstance(self.lam, tuple) else (self.lam,)
        lw = check.list(check.entry(state, "log_wealth"), "state['log_wealth']", n=len(lams), what="log-wealths")
        for k, (lam, v) in enumerate(zip(lams, lw)):
            if v == "inf":
                continue
            lo, floor = _least_log_wealth(n, lam)
            check.real(v, f"state['log_wealth'][{k}]", floor, domain=f"'inf' or a real number >= n_events * log(lam) = {lo:g}")

    def _set_state(self, state: dict) -> None:
        if not self._counters_valid(state):
            counters = (state["drift_detected"], state["n_alarms"], state["n_events"])
            raise ValueError(
                "The counters of a CalibrationMonitor snapshot must be a bool and two ints "
                "0 <= n_alarms <= n_events (n_alarms >= 1 when drift_detected). "
                "Got {!r}, {!r}, {!r} instead.".format(*counters)
            )
        self._set_mechanism_state(state)
        _check_alarm_flag(self, state["drift_detected"], self._mechanism_alarm())
        self._set_counters(state)

    def _check(self) -> None:
        """Assert the invariants (:meth:`_check_mechanism`; ``from_dict`` checks the flag)."""
        self._check_mechanism(self._n_events)

    def _check_mechanism(self, n_events: int) -> None:
        """Assert the e-process invariants after ``n_events`` updates: those of
        ``MixtureEProcess``, at most ``n_events`` events learnt, each log-wealth at
        least ``n_events * log(lam)`` (each factor is at least ``lam``)."""
        if not self._eprocess:
            return
        self._process._check()
        n = self._recal.n_events
        assert n <= n_events, f"the recalibrator learnt {n} events of {n_events}"
        for lam, v in zip(self._process.lams, self._process.log_wealth):
            lo, floor = _least_log_wealth(n_events, lam)
            assert v >= floor, f"log-wealth {v!r} < n_events * log({lam}) = {lo!r}"

    def _mechanism_alarm(self) -> bool:
        """Whether the mechanism's state calls for an alarm (as :meth:`_advance` said)."""
        if self._eprocess:
            return self._process.log_e >= self._log_threshold
        return any(det.drift_detected for det in self._detectors)

    def _set_mechanism_state(self, state: dict, where: str = "state") -> None:
        if self._eprocess:
            recal = OnlineIsotonic.from_dict(state["recalibrator"])
            if recal._get_params() != self._new_recalibrator()._get_params():
                raise ValueError(
                    "The recalibrator of a CalibrationMonitor snapshot must have the "
                    f"monitor's parameters. Got {recal!r} instead."
                )
            self._process.set_lists(state["log_wealth"])
            self._recal = recal
        else:
            states = state["detectors"]
            if not isinstance(states, list) or len(states) != len(self._kinds):
                raise ValueError(
                    f"The 'detectors' entry of a CalibrationMonitor snapshot must be a list of "
                    f"{len(self._kinds)} detector states. Got {V.format_value(states)} instead."
                )
            self._detectors = [
                self._detector_from_state(s, f"{where}['detectors'][{i}]")
                for i, s in enumerate(states)
            ]

    def _detector_from_state(self, s, where: str):
        """The river detector of the state ``s`` (the entry ``where`` of the snapshot),
        checked first: river reads it unchecked (a negative count divides by zero on
        the next update; bytes its Rust ADWIN cannot read make it panic)."""
        det = self._new_detector()
        check = StateChecks(type(self).__name__)
        if not isinstance(s, dict):
            check.fail(where, "a dict (a detector state)", s)
        if self.method == "adwin":
            check.keys(s, where, ["helper", "drift_detected"])
            helper = s["helper"]
            check.require(isinstance(helper, str), check.at(where, "helper"), "a base64 str", helper)
            params = _adwin_params_bytes(det)
            try:
                raw = base64.b64decode(helper.encode("ascii"), validate=True)
                det._helper.__setstate__(raw)
                # bytes river reads may hold other parameters (clock 0) or buckets it
                # panics on later: a throwaway copy must take some updates
                ok = params is None or raw.startswith(params)
                probe = self._new_detector()
                probe._helper.__setstate__(raw)
                for k in range(64):
                    probe.update(float(k % 2))
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # pyo3's PanicException is a BaseException
                check.fail(check.at(where, "helper"), "the bytes of a river ADWIN (base64)", helper, f" ({type(exc).__name__}: {exc})")
            check.require(ok, check.at(where, "helper"), "the bytes of a river ADWIN with the detector_params", helper)
        else:
            check.keys(s, where, _PH_ENTRIES)
            for key in _PH_ENTRIES[:-1]:
                v = s[key]
                infinite = key == "min_increase" and v == "inf"
                if not infinite:
                    check.real(v, check.at(where, key), 0.0 if key == "n" else -math.inf)
            mean = stats.Mean()
            mean.n = _decode_number(s["n"])
            mean._mean = _decode_number(s["mean"])
            det._x_mean = mean
            det._sum_increase = _decode_number(s["sum_increase"])
            det._sum_decrease = _decode_number(s["sum_decrease"])
            det._min_increase = _decode_number(s["min_increase"])
            det._max_decrease = _decode_number(s["max_decrease"])
        det._drift_detected = check.bool(s["drift_detected"], check.at(where, "drift_detected"))
        return det


def _least_log_wealth(n_events: int, lam: float) -> tuple[float, float]:
    """``n_events * log(lam)`` (each factor is at least ``lam``; none past 2**1000, as
    JSON allows), and that bound less the rounding a snapshot may hold."""
    lo = n_events * math.log(lam) if n_events < 2**1000 else -math.inf
    return lo, lo - 1e-9 * (1.0 - lo)


def _check_alarm_flag(monitor, flag, alarm: bool) -> None:
    """Refuse a snapshot whose ``drift_detected`` is not the ``alarm`` its evidence
    calls for: a phantom alarm, or one hidden."""
    if flag != alarm:
        what = (f"the log e-value {monitor.log_e_value:.6g} against -log(alpha) = "
                f"{monitor._log_threshold:.6g}") if monitor._eprocess else "the river detectors' flags"
        raise V.snapshot_error(type(monitor).__name__, "state['drift_detected']", f"{alarm} (the alarm {what} calls for)", flag)


def _adwin_params_bytes(det) -> bytes | None:
    """The leading bytes of the state of river's (Rust) ADWIN ``det``, which hold its
    parameters, or None if river lays them out otherwise (then they go unchecked)."""
    try:
        b = struct.pack("<diQdd", det.delta, det.clock, det.max_buckets, det.min_window_length, det.grace_period)
    except (struct.error, TypeError):
        return None
    return b if det._helper.__getstate__().startswith(b) else None


#: The entries of a river PageHinkley state (``_detector_state``), count first.
_PH_ENTRIES = ["n", "mean", "sum_increase", "sum_decrease", "min_increase", "max_decrease", "drift_detected"]


def _encode_number(x):
    """An int or float as JSON allows it: infinities as the strings 'inf', '-inf'
    (ints stay ints: river starts some of its statistics at the int -1); the rule is
    :func:`streamcal._json.number`'s."""
    if x != x:
        raise ValueError("A river detector holds NaN: its state cannot be saved.")
    return _json.number(x, non_finite="text")


def _decode_number(v):
    """The inverse of :func:`_encode_number`."""
    return _json.decode_number(v, "A number in a detector state")


def _detector_state(det) -> dict:
    """The whole state of a river ADWIN or PageHinkley detector, JSON-safe.

    River keeps it in private attributes (ADWIN in a Rust object that serialises
    itself to bytes, written here in base64); the round-trip tests guard against a
    change of river's internals.
    """
    if isinstance(det, drift.ADWIN):
        return {
            "helper": base64.b64encode(det._helper.__getstate__()).decode("ascii"),
            "drift_detected": det.drift_detected,
        }
    return {
        "n": _encode_number(det._x_mean.n),
        "mean": _encode_number(det._x_mean._mean),
        "sum_increase": _encode_number(det._sum_increase),
        "sum_decrease": _encode_number(det._sum_decrease),
        "min_increase": _encode_number(det._min_increase),
        "max_decrease": _encode_number(det._max_decrease),
        "drift_detected": det.drift_detected,
    }


class MulticlassCalibrationMonitor(BaseMonitor):
    """Watch multiclass probability forecasts for miscalibration through a top-label or
    a class-wise view of :class:`CalibrationMonitor`.

    Call ``update(proba, label)`` with a dict of class probabilities (river's
    ``predict_proba_one`` output; a class missing from it has probability 0) and the
    observed class, then read :attr:`drift_detected`, as with the binary monitor.

    - ``view="top-label"``: the binary monitor watches the forecast's confidence (its
      largest probability) against whether the top class (the first class with that
      probability, in the dict's order) was the right one. Under the hypothesis that the
      probabilities are right, the confidence is the probability of being right, so the
      e-process keeps its guarantee.
    - ``view="class-wise"``: one binary monitor per class of ``classes``, each watching
      ``proba[k]`` against ``label == k``. With ``method="eprocess"`` the e-value is the
      average of the per-class e-values (again a test martingale: the guarantee holds at
      ``alpha`` for all classes together, at the price of at most a factor
      ``len(classes)`` of evidence); with the river detectors the monitor alarms when
      any class's detector does (their false alarms add up).

    Parameters
    ----------
    monitor
        The binary :class:`CalibrationMonitor` used for each view component (its
        parameters, ``alpha`` included, apply; it is cloned, never updated), or None
        for ``CalibrationMonitor()``.
    view
        ``"top-label"`` or ``"class-wise"``.
    classes
        The class labels, a tuple of at least two distinct hashable labels (JSON scalars
        for ``to_dict``), or None. Required by the class-wise view. When given, a label
        or a probability for a class outside it is rejected.

    Attributes
    ----------
    e_value, log_e_value
        The e-value since the last reset and its log (None for the river detectors).
    e_values
        The e-value of each view component: ``{"top-label": e}`` or ``{class: e}``.

    Notes
    -----
    Cost per event: the validation of ``proba``, O(number of classes), plus one binary
    monitor update (top-label) or one per class (class-wise).

    As in the binary case, a label whose probability is 0 (a class missing from
    ``proba``, or a class whose probability is 0) contradicts the forecast: in the
    class-wise view, and in the top-label view when the confidence is 1, the e-value is
    infinite and the monitor alarms at once.

    Examples
    --------
    A three-class forecaster that becomes over-confident after 1,000 events: it says
    0.9 for the class it picks, which is right only 60% of the time.

    >>> import random
    >>> from streamcal.monitor import CalibrationMonitor, MulticlassCalibrationMonitor
    >>> rng = random.Random(1)
    >>> monitor = MulticlassCalibrationMonitor(CalibrationMonitor(alpha=0.01))
    >>> for t in range(3000):
    ...     top = rng.choice("abc")
    ...     proba = {c: (0.6 if c == top else 0.2) for c in "abc"}
    ...     if t >= 1000:
    ...         proba = {c: (0.9 if c == top else 0.05) for c in "abc"}
    ...     right = rng.random() < 0.6
    ...     label = top if right else rng.choice([c for c in "abc" if c != top])
    ...     monitor.update(proba, label)
    ...     if monitor.drift_detected:
    ...         print(f"alarm at event {t}")
    ...         break
    alarm at event 1016

    Class by class, with the classes known in advance:

    >>> cw = MulticlassCalibrationMonitor(view="class-wise", classes=("a", "b", "c"))
    >>> cw.update({"a": 0.7, "b": 0.2, "c": 0.1}, "a")
    >>> cw.e_values
    {'a': 1.0, 'b': 1.0, 'c': 1.0}

    """

    _multiclass = True

    def __init__(
        self,
        monitor: CalibrationMonitor | None = None,
        view: str = "top-label",
        classes: tuple | None = None,
    ):
        name = type(self).__name__
        V.check_param(
            name,
            "monitor",
            monitor,
            monitor is None or isinstance(monitor, CalibrationMonitor),
            "a CalibrationMonitor or None",
        )
        V.check_param(
            name,
            "view",
            view,
            isinstance(view, str) and view in VIEWS,
            f"a str among {_set_of(VIEWS)}",
        )
        ok = classes is None or (isinstance(classes, tuple) and len(classes) >= 2)
        if ok and classes is not None:
            try:
                ok = len(set(classes)) == len(classes) and not any(
                    _is_nan(c) for c in classes
                )
            except TypeError:  # unhashable
                ok = False
        V.check_param(
            name,
            "classes",
            classes,
            ok and (classes is not None or view != "class-wise"),
            "a tuple of at least 2 distinct hashable labels"
            + (
                " (required by view='class-wise')"
                if view == "class-wise"
                else " or None"
            ),
        )
        self.monitor = monitor
        self.view = view
        self.classes = classes
        self._reset()

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"view": "class-wise", "classes": (0, 1, 2)}
        yield {
            "monitor": CalibrationMonitor(alpha=0.2, lam=0.5, half_life=None),
            "classes": (0, 1, 2),
        }
        yield {
            "monitor": CalibrationMonitor(
                method="page-hinkley",
                residual="both",
                detector_params={"threshold": 5.0},
            ),
            "view": "class-wise",
            "classes": (0, 1, 2),
        }

    # ------------------------------------------------------------------ state

    def _reset(self) -> None:
        template = self.monitor if self.monitor is not None else CalibrationMonitor()
        self._keys = (self.view,) if self.view == "top-label" else self.classes
        self._parts = [template.clone() for _ in self._keys]
        self._eprocess = template.method == "eprocess"
        self._log_threshold = -math.log(template.alpha)
        self._class_set = None if self.classes is None else frozenset(self.classes)
        self._n_events = 0
        self._n_alarms = 0
        self._log_e = 0.0
        self._drift_detected = False

    def _restart(self) -> None:
        for part in self._parts:
            part._restart()
        self._log_e = 0.0
        self._drift_detected = False

    def _check(self) -> None:
        """Assert each part's invariants (``CalibrationMonitor._check_mechanism``)."""
        for part in self._parts:
            part._check_mechanism(self._n_events)

    # ------------------------------------------------------------------ updates

    def update(self, proba: dict, label) -> None:
        """Watch one forecast and the observed class; then read :attr:`drift_detected`.

        Parameters
        ----------
        proba
            A dict mapping class labels to probabilities in [0, 1] summing to 1 (within
            1e-6).
        label
            The observed class, a hashable label.
        """
        name = "MulticlassCalibrationMonitor"
        proba = V.check_probability_vector(proba, name, "update", "proba")
        label = V.check_class_label(label, name, "update", "label")
        classes = self._class_set
        if classes is not None:
            if label not in classes:
                raise V.argument_error(
                    ValueError,
                    "label",
                    name,
                    "update",
                    f"one of the classes {self.classes!r}",
                    label,
                )
            for k in proba:
                if k not in classes:
                    raise V.argument_error(
                        ValueError,
                        "proba",
                        name,
                        "update",
                        f"a dict over the classes {self.classes!r}",
                        proba,
                        suffix=f" (class {k!r})",
                    )
        if self._drift_detected:
            self._restart()
        self._n_events += 1
        parts = self._parts
        if self.view == "top-label":
            top, conf = top_class(proba)
            alarm = parts[0]._advance(conf, 1.0 if label == top else 0.0)
            if self._eprocess:
                self._log_e = parts[0]._process.log_e
        else:
            alarm = False
            get = proba.get
            for k, part in zip(self._keys, parts):
                alarm = (
                    part._advance(float(get(k, 0.0)), 1.0 if label == k else 0.0)
                    or alarm
                )
            if self._eprocess:
                self._log_e = log_mean_exp([part._process.log_e for part in parts])
                alarm = self._log_e >= self._log_threshold
        if alarm:
            self._drift_detected = True
            self._n_alarms += 1

    # ------------------------------------------------------------------ views

    @property
    def e_value(self) -> float | None:
        """The e-value since the last reset (None for the river detectors)."""
        if not self._eprocess:
            return None
        return math.exp(self._log_e) if self._log_e <= _MAX_LOG else math.inf

    @property
    def log_e_value(self) -> float | None:
        """Natural log of :attr:`e_value` (None for the river detectors)."""
        return self._log_e if self._eprocess else None

    @property
    def e_values(self) -> dict | None:
        """The e-value of each view component since the last reset (None for the river
        detectors)."""
        if not self._eprocess:
            return None
        return {k: part.e_value for k, part in zip(self._keys, self._parts)}

    # ------------------------------------------------------------------ snapshots

    def _get_state(self) -> dict:
        return {
            "drift_detected": self._drift_detected,
            "n_alarms": self._n_alarms,
            "n_events": self._n_events,
            "parts": [part._mechanism_state() for part in self._parts],
        }

    def _set_state(self, state: dict) -> None:
        parts = state["parts"]
        if not (
            self._counters_valid(state)
            and isinstance(parts, list)
            and len(parts) == len(self._parts)
        ):
            raise ValueError(
                "A MulticlassCalibrationMonitor snapshot must hold a bool, two ints "
                "0 <= n_alarms <= n_events (n_alarms >= 1 when the bool is True) and "
                f"{len(self._parts)} part states. "
                f"Got {V.format_value(state)} instead."
            )
        for i, (part, s) in enumerate(zip(self._parts, parts)):
            part._set_mechanism_state(s, f"state['parts'][{i}]")
        if self._eprocess:
            logs = [part._process.log_e for part in self._parts]
            self._log_e = logs[0] if self.view == "top-label" else log_mean_exp(logs)
            alarm = self._log_e >= self._log_threshold
        else:
            alarm = any(part._mechanism_alarm() for part in self._parts)
        _check_alarm_flag(self, state["drift_detected"], alarm)
        self._set_counters(state)
