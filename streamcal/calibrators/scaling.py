"""Parametric calibration by online logistic regression on features of the score:
Platt scaling and beta calibration, the river-style shells over
:mod:`streamcal.core.newton`, whose compiled :class:`~streamcal.core.newton.LogisticKernel`
runs every per-event method and batch loop (the shells keep parameters, snapshots,
repr and docs)."""

from __future__ import annotations

import math

from streamcal import _validation as V
from streamcal._kernel_pickle import KernelShellPickle
from streamcal.base import BinaryCalibrator
from streamcal.core import newton
from streamcal.core.newton import LogisticKernel, OnlineNewtonLogistic

__all__ = ["OnlineBeta", "OnlinePlatt"]

#: Scores are clipped to ``[EPS, 1 - EPS]`` before taking logarithms, with ``EPS`` the
#: machine epsilon ``2**-52`` (as the ``betacal`` package does): the features stay
#: finite (``|logit s| <= 36.05``, ``|ln s| <= 36.05``) and both ends are doubles.
EPS = newton.EPS
_LN2 = math.log(2.0)
_exp = math.exp


def _check_common(name, regularization, half_life):
    V.check_param(
        name,
        "regularization",
        regularization,
        V.is_real(regularization) and 0.0 < regularization < math.inf,
        "a finite real number > 0",
    )
    V.check_param(
        name,
        "half_life",
        half_life,
        half_life is None or (V.is_real(half_life) and 0.0 < half_life < math.inf),
        "a finite real number > 0 or None",
    )


def _midpoint(a: float, b: float, c: float) -> float | None:
    """The score ``m`` where ``a ln m - b ln(1 - m) + c = 0`` (calibrated probability
    1/2), for ``a, b >= 0``; None when there is none in (0, 1), it is not unique, or it
    lies closer to 0 or 1 than a double can say (it would round to 0.0 or 1.0, which the
    map does not send to 1/2)."""
    lower = -math.inf if a > 0.0 else c  # limits of the linear predictor at s -> 0, 1
    upper = math.inf if b > 0.0 else c
    if not lower < 0.0 < upper:
        return None
    if a == b:  # sigmoid(-c / a), without overflow
        z = -c / a
        return _inside(1.0 / (1.0 + _exp(-z)) if z >= 0 else _exp(z) / (1.0 + _exp(z)))
    # bisection on the logit of m, where the predictor is increasing and continuous
    lo, hi = -800.0, 800.0
    for _ in range(200):
        t = 0.5 * (lo + hi)
        if t == lo or t == hi:
            break
        ln_m = -math.log1p(_exp(-t)) if t > 0 else t - math.log1p(_exp(t))
        ln_1m = -math.log1p(_exp(t)) if t < 0 else -t - math.log1p(_exp(-t))
        if a * ln_m - b * ln_1m + c < 0.0:
            lo = t
        else:
            hi = t
    t = 0.5 * (lo + hi)
    return _inside(1.0 / (1.0 + _exp(-t)) if t >= 0 else _exp(t) / (1.0 + _exp(t)))


def _inside(m: float) -> float | None:
    """``m`` if it is a score strictly inside (0, 1), else None (a crossing that rounds
    to an end)."""
    return m if 0.0 < m < 1.0 else None


#: Bound of a snapshot's coefficients and curvature entries: far beyond any fit (the
#: ridge keeps them near the identity map), and small enough that a Newton step on
#: them cannot overflow.
_MAX_COEFFICIENT = 1e100


class _OnlineLogisticCalibrator(LogisticKernel, KernelShellPickle, BinaryCalibrator):
    """Logistic regression on features of the clipped score, kept by
    :class:`~streamcal.core.newton.OnlineNewtonLogistic`. Shared by the shells: the
    compiled kernel (``learn_one``, ``predict_one`` and the batch loops, with the
    refusal of an unrepresentable weight and atomic batches), snapshots and ``_check``.

    A subclass sets ``_theta0`` (the identity map), ``_nonneg`` (the constrained
    coordinates) and ``_feature_map`` (one of the kernel's feature maps).
    """

    _theta0: tuple = ()
    _nonneg: tuple = ()
    _feature_map: int = newton.FEATURES_LOGIT

    _merge_refusal = (
        "its parameters are fitted by online Newton steps, each taken at the parameters "
        "the events before it left, so the fit depends on the order of the events and "
        "is not a function of per-event sums"
    )

    def _make_core(self) -> OnlineNewtonLogistic:
        decay = 1.0 if self.half_life is None else 2.0 ** (-1.0 / self.half_life)
        return OnlineNewtonLogistic(
            self._theta0, self.regularization, decay, self._nonneg
        )

    def _reset(self) -> None:
        self._core = self._make_core()
        self._features = self._feature_map
        self._ages = self.half_life is not None  # then zero weights age the others
        self._fitted = False  # a positive-weight event has been learnt

    # pickling: the kernel's C fields travel as the snapshot state
    def __getstate__(self):
        return {"attributes": dict(self.__dict__), "state": self._get_state()}

    def __setstate__(self, data):
        self.__dict__.update(data["attributes"])
        self._reset()
        self._set_state(data["state"])

    def _weights_surely_fit(self, w) -> bool:
        # An event is refused when w h x'Px > 1e12 (h = p (1 - p) <= 1/4) or when it
        # would leave theta or P non-finite (:mod:`streamcal.core.newton`). P's
        # eigenvalues stay <= 1 / regularization and |x|^2 < 3000 at the clipped scores
        # (every coordinate within 37 of 0), so a weight <= 1e6 * regularization gives
        # w h x'Px <= 7.5e8 and moves theta by at most w |P x| <= 6e7 (explicit and
        # implicit steps alike); P only shrinks or is discounted within its bound. With
        # |theta| <= 1e300 before, no batch of fewer than 1e290 such events overflows.
        bound = 1e6 * self.regularization
        for x in w:
            if not x <= bound:
                return False
        return self._core.theta_within(1e300)

    def _get_state(self) -> dict:
        return {"core": self._core.to_lists(), "fitted": self._fitted}

    def _validate_state(self, state: dict, check) -> None:
        d = len(self._theta0)
        theta, p = check.list(check.entry(state, "core"), "state['core']", n=2, what="(theta, P)")
        for where, values, n in (("state['core'][0]", theta, d), ("state['core'][1]", p, d * (d + 1) // 2)):
            for i, x in enumerate(check.list(values, where, n=n)):
                check.real(x, f"{where}[{i}]", -_MAX_COEFFICIENT, _MAX_COEFFICIENT)
        for j in self._nonneg:  # monotone: the constrained coordinates
            check.real(theta[j], f"state['core'][0][{j}]", 0.0, _MAX_COEFFICIENT)
        check.bool(check.entry(state, "fitted"), "state['fitted']")

    def _set_state(self, state: dict) -> None:
        self._core = self._make_core()
        self._core.set_lists(state["core"])
        self._fitted = bool(state["fitted"])

    def _check(self) -> None:
        """Assert the core's invariants (see :mod:`streamcal.core.newton`)."""
        self._core._check()
        if not self._fitted:
            assert self._core.theta == list(self._theta0), (
                "parameters moved before any positive weight"
            )


class OnlinePlatt(_OnlineLogisticCalibrator):
    """Platt scaling ``sigmoid(a * logit(s) + b)`` learnt online by Newton steps, O(1)
    per event.

    The parameters track the weighted maximum-likelihood (logistic regression) fit of
    the labels on ``logit(s)`` and a constant, with a small ridge penalty towards the
    identity map ``a = 1, b = 0``, as in Online Platt Scaling (Gupta and Ramdas, "Online
    Platt Scaling with Calibeating", ICML 2023), which runs Online Newton Step on the
    same model. Here the step is a recursive (stochastic) Newton update with the
    observed curvature ``p (1 - p) x x'``, made implicit (the exact minimiser of the
    quadratic model plus the event's log loss) when it is large, so that it cannot
    overshoot on a surprising event; on a stationary stream the parameters converge to
    the batch Platt fit at the statistically optimal rate, with no learning rate to tune.
    See :mod:`streamcal.core.newton` for the update and why it was chosen over ONS.

    Parameters
    ----------
    regularization
        ``lambda > 0``: the penalty ``lambda / 2 * ((a - 1)**2 + b**2)``, i.e. a
        Gaussian prior of precision ``lambda`` centred on the identity map; also the
        initial Newton matrix ``lambda * I``. It damps the first steps and fades as
        evidence accumulates: in the curvature of ``b`` it weighs as much as ``4 *
        lambda`` events at ``s = 1/2``. The default 1.0 did best, in prequential log
        loss over the first 50 to 1000 events, among 0.1, 1 and 10 on maps near and far
        from the identity; 10 helps only when the scores are nearly calibrated.
    half_life
        If set, exponential forgetting so that the fit follows drift: the weight of an
        event is multiplied by ``2 ** (-age / half_life)``, age counted in events (every
        ``learn_one`` call ages the others by one, whatever its weight); the penalty is
        not forgotten. Steady-state memory is about ``half_life / ln 2`` events.
    monotone
        If true, ``a >= 0`` is enforced (by projection in the Newton metric after each
        step) so that the map is non-decreasing in the score; the fit is then the
        constrained maximum-likelihood one and equals ``OnlineBeta(parameters="am")``.
        Off by default, as in Platt scaling and in OPS, where ``a < 0`` can follow a
        score that has turned against the labels.

    Attributes
    ----------
    a, b
        The current slope and intercept.

    Notes
    -----
    The feature is ``logit(s)``, the parametrisation of OPS, not the raw score that
    Platt (1999) and scikit-learn's ``CalibratedClassifierCV(method="sigmoid")`` use:
    they fit ``sigmoid(A f + B)`` on the classifier's output ``f`` itself (a margin, or
    a probability taken as it is). The two fits agree only when ``f = logit(s)``: to
    reproduce Platt on a margin ``f``, feed ``sigmoid(f)`` here. Platt (and
    scikit-learn) also smooth the 0/1 targets to ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- +
    2)``; this fit uses the labels as they are, with the ridge prior above instead.

    Scores are clipped to ``[2**-52, 1 - 2**-52]`` before the logit (the machine epsilon,
    as in ``betacal``), so 0 and 1 are mapped to finite features and outputs are finite,
    in [0, 1].

    Cold start: until the first event of positive weight, ``predict_one`` returns the
    score itself (the identity map ``a = 1, b = 0`` the fit starts from, without the
    rounding of ``sigmoid(logit(s))`` and without the clipping at 0 and 1).

    Convergence. The online parameters are not the batch fit of the events seen, but
    close to it: on stationary streams of 20,000 events (tests/test_calibrators_scaling.py)
    they were within 2 standard errors of it, typically a few tenths (the recursion's
    curvature was measured at the earlier, rougher parameters, a bias that fades
    relative to the standard error), and the predictions made before each label lost
    at most 0.002 nats per event to the batch fit's in-sample log loss. With
    ``half_life`` the target is the fit with decayed weights, tracked within a fraction
    of its standard error once the stream is stationary for a few half-lives.

    Weights multiply the event's gradient and curvature. An event of weight ``k`` is not
    ``k`` repeated events for an online update (the steps are taken at different
    points), but both converge to the weighted maximum-likelihood fit, and scaling
    every weight and ``regularization`` by the same power of two leaves every prediction
    unchanged, bit for bit. Zero weights teach nothing. A weight so large that one event
    would outweigh all that was learnt by more than about 1e12 is refused (ValueError,
    state unchanged): the curvature could not be represented in double precision.

    ``learn_one`` and ``predict_one`` cost O(1): a logarithm and an exponential each,
    and for learning a 2x2 rank-one update (a few more exponentials for the implicit
    step of a surprising, heavily weighted event). With ``half_life``, ``learn_one`` also
    discounts the Newton matrix (a 2x2 inverse and product), which about doubles its
    cost. All of it runs in compiled code; ``learn_many``, ``predict_many`` and
    ``predict_learn_many`` are one compiled pass each, O(n), and give the floats of the
    loop of ``learn_one`` / ``predict_one`` exactly (the same C functions); ``learn_many``
    and ``predict_learn_many`` are atomic (a refused weight leaves the state unchanged).

    Examples
    --------
    An over-confident forecaster (the true map is ``sigmoid(logit(s) / 2 + 0.3)``):

    >>> import math, random
    >>> from streamcal import OnlinePlatt
    >>> cal = OnlinePlatt()
    >>> cal.predict_one(0.9)          # before any label: the score itself
    0.9
    >>> rng = random.Random(0)
    >>> for _ in range(5000):
    ...     s = rng.random()
    ...     p = 1 / (1 + math.exp(-0.5 * math.log(s / (1 - s)) - 0.3))
    ...     cal.learn_one(s, rng.random() < p)
    >>> round(cal.a, 2), round(cal.b, 2)
    (0.52, 0.31)
    >>> round(cal.predict_one(0.9), 3)
    0.81

    """

    _theta0 = (1.0, 0.0)

    def __init__(
        self,
        regularization: float = 1.0,
        half_life: float | None = None,
        monotone: bool = False,
    ):
        name = type(self).__name__
        _check_common(name, regularization, half_life)
        V.check_param(name, "monotone", monotone, isinstance(monotone, bool), "a bool")
        self.regularization = regularization
        self.half_life = half_life
        self.monotone = monotone
        self._nonneg = (0,) if monotone else ()
        self._reset()

    @property
    def _monotone(self) -> bool:
        return self.monotone

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"monotone": True}
        yield {"half_life": 40.0, "regularization": 0.5}

    @property
    def a(self) -> float:
        """Slope on ``logit(s)``."""
        return self._core.theta[0]

    @property
    def b(self) -> float:
        """Intercept."""
        return self._core.theta[1]


# parametrisation (betacal's names: the letters are the parameters fitted) ->
# (starting point = the identity map, constrained coordinates, feature map):
# "abm": features (ln s, -ln(1 - s), 1), theta = (a, b, c);
# "am": a = b, features (ln s - ln(1 - s), 1), theta = (a = b, c);
# "ab": m = 1/2, features (ln 2s, -ln(2 (1 - s))), theta = (a, b), c = (a - b) ln 2.
_BETA_MODELS = {
    "abm": ((1.0, 1.0, 0.0), (0, 1), newton.FEATURES_ABM),
    "am": ((1.0, 0.0), (0,), newton.FEATURES_LOGIT),
    "ab": ((1.0, 1.0), (0, 1), newton.FEATURES_AM),
}

#: Snapshots of format 1 (streamcal 0.1.0) wrote the two-parameter models under each
#: other's names: their "ab" is the a = b model (betacal's "am") and their "am" the
#: m = 1/2 one (betacal's "ab"). The state (theta and the Newton matrix) is laid out
#: the same way for a model under either name, so only the name is translated.
_FORMAT1_PARAMETERS = {"abm": "abm", "ab": "am", "am": "ab"}


class OnlineBeta(_OnlineLogisticCalibrator):
    """Beta calibration (Kull, Silva Filho and Flach, AISTATS 2017) learnt online by
    Newton steps, O(1) per event.

    The calibration map is ``1 / (1 + 1 / (exp(c) * s**a / (1 - s)**b))`` with
    ``a, b >= 0``, i.e. logistic regression of the label on ``ln s`` and ``-ln(1 - s)``
    (Kull et al., Proposition 2). The parameters track the weighted maximum-likelihood
    fit under the constraints ``a, b >= 0``, with a small ridge penalty towards the
    identity map ``a = b = 1, c = 0``. See :mod:`streamcal.core.newton` for the update.

    Parameters
    ----------
    parameters
        The parametrisation, named as in the paper and the ``betacal`` package (the
        letters are the parameters fitted):

        - ``"abm"`` (default): ``a``, ``b`` and ``c`` free (features ``ln s``,
          ``-ln(1 - s)``, 1), three parameters;
        - ``"am"``: ``a = b`` fixed, ``a`` and the midpoint ``m`` fitted (feature ``ln s
          - ln(1 - s) = logit s`` and 1), the linear-in-log-odds map; identical to
          ``OnlinePlatt(monotone=True)``;
        - ``"ab"``: midpoint ``m = 1/2`` fixed, ``a`` and ``b`` fitted, i.e. ``c = (a -
          b) ln 2`` (features ``ln(2 s)`` and ``-ln(2 (1 - s))``, no intercept), so
          that ``s = 1/2`` always maps to 1/2.

        Changed with snapshot format 2: ``"ab"`` and ``"am"`` now mean what they
        mean in ``betacal``; streamcal 0.1.0 (snapshot format 1) had them the other
        way round (its ``"ab"`` was the ``a = b`` model, now ``"am"``, and its ``"am"``
        the ``m = 1/2`` model, now ``"ab"``). Code that relied on the old meaning must
        swap the two names; snapshots of format 1 restore the model they were written
        from, under its new name (see Notes).
    regularization
        ``lambda > 0``: the penalty ``lambda / 2 * ||theta - theta0||**2`` on the free
        parameters (``theta0`` the identity map), a Gaussian prior of precision
        ``lambda``; see :class:`OnlinePlatt`.
    half_life
        If set, exponential forgetting: the weight of an event is multiplied by
        ``2 ** (-age / half_life)``, age counted in ``learn_one`` calls; the penalty is
        not forgotten.

    Attributes
    ----------
    a, b, c
        The current parameters (``a == b`` with ``"am"``; ``c == (a - b) ln 2`` with
        ``"ab"``).
    m
        The midpoint, the score mapped to 1/2 (None if there is none in (0, 1)).

    Notes
    -----
    Constraints. Kull et al. require ``a, b >= 0`` for a non-decreasing map; the paper
    notes that an unconstrained fit rarely violates them and suggests either a
    constrained fit or refitting with the offending feature removed (what ``betacal``
    does). Here, after each step, the parameters are projected onto ``a, b >= 0`` in
    the norm of the current Newton matrix (exact active-set solution of the 2- or
    3-variable QP), which makes the fit converge to the constrained maximum-likelihood
    one: with ``a`` held at 0 the remaining parameters take exactly the Newton step of
    the model without ``ln s``. The map is therefore always non-decreasing.

    Names. Why no error for the old names: they are the same strings as betacal's,
    which this class promises to follow, so a constructor cannot tell a caller who
    means betacal's ``"ab"`` from one who meant 0.1.0's; refusing them would refuse the
    correct names too. The change is therefore surfaced where it can be detected: an
    unknown name's error lists each name with its model, and a snapshot carries its
    format, so a 0.1.0 snapshot (format 1) restores with the meaning it was written
    with (its ``"ab"`` becomes ``"am"`` and the reverse, with the same state, so that it
    predicts the same floats).

    Scores are clipped to ``[2**-52, 1 - 2**-52]`` before the logarithms (as ``betacal``
    does with the machine epsilon). Cold start: until the first event of positive
    weight, ``predict_one`` returns the score itself (the identity map, without rounding
    or clipping). Convergence, forgetting and weights are as in :class:`OnlinePlatt`.

    ``learn_one`` and ``predict_one`` cost O(1): one or two logarithms and an
    exponential each, and for learning a 2x2 or 3x3 rank-one update; the projection,
    when a constraint is hit, solves at most three systems of size <= 2. With
    ``half_life``, ``learn_one`` also discounts the Newton matrix (a 3x3 inverse and
    product for ``"abm"``), which about doubles its cost. The batch methods are one
    compiled pass each and give the loop's floats exactly, as in :class:`OnlinePlatt`.

    Examples
    --------
    Scores pushed towards 0 and 1 (the true map is ``a = b = 1/2``):

    >>> import random
    >>> from streamcal import OnlineBeta
    >>> cal = OnlineBeta()
    >>> cal.predict_one(0.9)
    0.9
    >>> rng = random.Random(0)
    >>> for _ in range(5000):
    ...     s = rng.random()
    ...     p = s**0.5 / (s**0.5 + (1 - s)**0.5)
    ...     cal.learn_one(s, rng.random() < p)
    >>> round(cal.a, 2), round(cal.b, 2), round(cal.c, 2), round(cal.m, 2)
    (0.53, 0.51, 0.0, 0.51)
    >>> round(cal.predict_one(0.9), 2)
    0.76

    With the midpoint fixed at 1/2:

    >>> cal = OnlineBeta(parameters="ab")
    >>> cal.learn_many([0.1, 0.5, 0.9], [0, 1, 1])
    >>> cal.predict_one(0.5), cal.m
    (0.5, 0.5)

    """

    _monotone = True

    def __init__(
        self,
        parameters: str = "abm",
        regularization: float = 1.0,
        half_life: float | None = None,
    ):
        name = type(self).__name__
        V.check_param(
            name,
            "parameters",
            parameters,
            isinstance(parameters, str) and parameters in _BETA_MODELS,
            "a str among {'abm', 'am', 'ab'} (betacal's names: 'abm' fits a, b and m; "
            "'am' fixes a = b; 'ab' fixes m = 1/2)",
        )
        _check_common(name, regularization, half_life)
        self.parameters = parameters
        self.regularization = regularization
        self.half_life = half_life
        self._theta0, self._nonneg, self._feature_map = _BETA_MODELS[parameters]
        self._reset()

    @classmethod
    def _upgrade_snapshot(cls, params: dict, state: dict, fmt: int):
        """A format-1 snapshot's ``parameters`` under betacal's names (see
        ``_FORMAT1_PARAMETERS``); the state is the same."""
        if fmt == 1 and params.get("parameters") in _FORMAT1_PARAMETERS:
            params = {**params, "parameters": _FORMAT1_PARAMETERS[params["parameters"]]}
        return params, state

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"parameters": "am"}
        yield {"parameters": "ab"}
        yield {"parameters": "abm", "half_life": 40.0, "regularization": 2.0}

    @property
    def a(self) -> float:
        """Exponent of ``s`` (>= 0)."""
        return self._core.theta[0]

    @property
    def b(self) -> float:
        """Exponent of ``1 - s`` (>= 0)."""
        t = self._core.theta
        return t[0] if self.parameters == "am" else t[1]

    @property
    def c(self) -> float:
        """Intercept on the log-odds scale."""
        t = self._core.theta
        if self.parameters == "abm":
            return t[2]
        if self.parameters == "am":
            return t[1]
        return (t[0] - t[1]) * _LN2

    @property
    def m(self) -> float | None:
        """The midpoint ``m`` with map(m) = 1/2: ``c = b ln(1 - m) - a ln m``. Exactly
        1/2 with ``"ab"`` (unless ``a = b = 0``, a constant map); None if the map does not
        cross 1/2 in (0, 1), or crosses it closer to 0 or 1 than a double can say (within
        about 1e-16 of 1, 1e-308 of 0). O(1) (a bisection of at most 200 steps)."""
        if self.parameters == "ab":
            t = self._core.theta
            return 0.5 if (t[0] > 0.0 or t[1] > 0.0) else None
        return _midpoint(self.a, self.b, self.c)
