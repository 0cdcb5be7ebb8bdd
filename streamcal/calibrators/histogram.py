"""Running histogram binning: the river-style shell over :mod:`streamcal.core.binning`."""

from __future__ import annotations


import numpy as np

from streamcal import _merge
from streamcal import _validation as V
from streamcal.base import BinaryCalibrator
from streamcal.core.kernels import Int64Binner
from streamcal.core.binning import BinView, HistogramBinner, calibration_epsilon

__all__ = ["HistogramBinning"]


class HistogramBinning(BinaryCalibrator):
    """Histogram binning kept up to date after every event: the calibrated probability of
    a score is the mean label of the events that fell into its bin.

    The unit interval is cut into ``n_bins`` bins, of equal width (``"uniform"``) or of
    equal mass (``"quantile"``, the histogram binning of Zadrozny and Elkan (2001) in the
    form of Gupta and Ramdas (2021), whose calibration is distribution-free). Each bin's
    estimate is the weighted mean of the labels learnt in it, over the whole stream or
    the last ``window_size`` events, optionally shrunk towards the bin's midpoint.

    Parameters
    ----------
    n_bins
        Number of bins ``B``, an int >= 1.
    strategy
        How the bins are placed.

        - ``"uniform"`` (default): equal-width bins, edges ``j / B``.
        - ``"quantile"``: uniform-mass bins. The edges are the order statistics of
          Algorithm 1 of Gupta and Ramdas (2021): from a calibration set of ``n`` scores,
          ``e_j = S_(ceil(j (n+1) / B))`` for ``j = 1 .. B-1``, with ``S_(n+1) = 1``.
          They stay frozen within an epoch and are recomputed, from the events held, at
          epoch boundaries: when the number ``c`` of positive-weight events learnt
          reaches ``1, 2, 4, 8, ...`` (zero weights do not count). With ``window_size =
          N``, the boundaries are the powers of two below ``N`` and then every multiple of
          ``N``, and the calibration set is the window's positive-weight events at the
          boundary. Before the first event, the edges are uniform.
    window_size
        If set, estimates (and, with ``"quantile"``, the edges at each boundary) use
        exactly the last ``window_size`` events; each new event pushes the oldest out
        (zero-weight events take a slot too).
    prior_strength
        ``a >= 0`` (default 2). With ``a > 0`` each bin's estimate is the posterior mean
        under a Beta prior of strength ``a`` (in units of an event's weight) centred on
        the bin's midpoint ``m = (lower + upper) / 2``: ``(sum w y + a m) / (sum w +
        a)`` (:func:`streamcal.core.prior.posterior_mean`; one pseudo-event of weight
        ``a`` and label ``m`` in the bin), which keeps the outputs of bins with few
        events strictly inside (0, 1). ``a = 0``: the plain mean label of the bin (the
        former default, which says 1.0 after a single positive label). The
        default 2 comes from the hourly rain logs of ``simulations/priors.py`` (table
        in ``simulations/README.md``): every ``a`` from 0.5 to 8 cut the log loss from
        0.164-0.169 to 0.129-0.135, Brier and ECE barely moving; at 2 the
        log loss is within 0.0007 of the best strength on every log, the ECE within
        0.002 and the Brier score within 0.0001.

    Attributes
    ----------
    edges
        The ``n_bins + 1`` current edges (a tuple, from 0.0 to 1.0).
    bins
        The current bins: edges, value, total weight and number of events of each.
    n_events
        Number of ``learn_one`` calls so far (all weights, inside the window or not).
    n_calibration
        Number of events the current ``"quantile"`` edges were computed from (0 before
        the first event and with ``"uniform"``): the ``n`` of :meth:`epsilon`.

    Notes
    -----
    **Bins.** A score ``s`` goes to bin ``k`` = the number of inner edges ``<= s``. So
    bins are ``[e_k, e_{k+1})``, the last one ``[e_{B-1}, 1]`` (a score of 1 is in the last
    bin), and a score exactly on an edge belongs to the bin above it, as in Algorithm 1.
    Ties can make edges equal; the bin between two equal edges is empty and receives no
    score (scores on that edge go to the next non-empty bin), so ``n_bins`` is kept.

    **Exactness.** Per bin, the total weight and weighted label sum are kept as exact
    integers (in units of ``2**-E``, ``E`` the most binary fraction digits of any weight
    seen), so additions and, with a window, removals never drift. Each estimate is the
    exact rational ``(sum w y + a m) / (sum w + a)`` over the bin's events, rounded once
    to the nearest float. Hence with unit weights and no prior, every estimate equals
    ``numpy.mean`` of the bin's labels bit for bit (with integer weights, likewise
    ``numpy.average``); with fractional weights it is within half an ulp of the exact
    weighted mean (``numpy.average``, which rounds at each addition, can differ from it
    by a few ulps).

    **Cold start and empty bins.** A score whose bin holds no positive weight is returned
    unchanged: before any data every score is predicted as itself, and so is a score
    falling into a bin that no event has reached (whatever ``prior_strength``).

    **Outputs are not monotone** in the score: a bin's mean can exceed the next one's.

    **Cost.** ``predict_one``: O(log B) (a bisection on the edges). ``learn_one``: O(log
    B); with ``"quantile"``, plus the re-binning of the held events at each epoch
    boundary, O(d log d) for ``d`` distinct scores held, amortised O(log d) per event
    since epochs double (with a window, they last ``window_size`` events), and without a
    window the merging of new scores into the aggregated stream, in numpy batches of at
    least 2048, amortised O(log d). Memory: O(B)
    for ``"uniform"``; O(distinct scores) for ``"quantile"`` without a window (the
    stream, aggregated by distinct score, so that it can be re-binned with new edges);
    O(window_size + B) with a window.

    **Compiled.** The state machine runs in compiled code
    (:class:`streamcal.core._binning.Int64Binner`, built at install), with the per-bin
    sums in int64 while they fit (below ``2**62`` units: any stream of unit or integer
    weights, or weights with few binary fraction digits such as 0.5 or 0.125; a weight
    like 0.1, which has 55, leaves room for about a hundred events). ``learn_many``, ``predict_many`` and
    ``predict_learn_many`` validate the batch once and run one compiled pass, with the
    epoch boundaries at the same events as the loop; ``learn_many`` computes the
    estimates once at the end. An event whose weight would take a sum past int64 (such
    as ``1e-300`` or ``1e300``) moves the calibrator, for good and with the same state,
    to the general binner of :mod:`streamcal.core.binning` (Python integers): results
    are the same, only slower.

    References
    ----------
    - Zadrozny and Elkan (2001), "Obtaining calibrated probability estimates from
      decision trees and naive Bayesian classifiers", ICML.
    - Gupta and Ramdas (2021), "Distribution-free calibration guarantees for histogram
      binning without sample splitting", ICML, Algorithm 1 and Theorem 4; restated in
      Gupta (2022), thesis proposal, section 1.3 and Theorem 2 (section 2.2).

    Examples
    --------
    >>> from streamcal import HistogramBinning
    >>> cal = HistogramBinning(n_bins=2, prior_strength=0)     # plain bin means
    >>> cal.predict_one(0.3)          # before any label: the score itself
    0.3
    >>> for s, y in [(0.1, 0), (0.2, 1), (0.3, 1), (0.7, 1), (0.9, 0)]:
    ...     cal.learn_one(s, y)
    >>> cal.predict_one(0.25), cal.predict_one(0.75)
    (0.6666666666666666, 0.5)
    >>> cal.bins[1]
    BinView(lower=0.5, upper=1.0, value=0.5, weight=2.0, n_events=2)

    Uniform-mass bins, recomputed at 1, 2, 4, 8, ... events, and the distribution-free
    tolerance of Theorem 2 for them:

    >>> q = HistogramBinning(n_bins=2, strategy="quantile", prior_strength=0)
    >>> q.learn_many([0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9], [0, 0, 1, 0, 1, 1, 0, 1])
    >>> q.edges, q.n_calibration
    ((0.0, 0.6, 1.0), 8)
    >>> round(q.epsilon(0.1), 4)
    0.7066

    By default a Beta prior worth two events pulls a bin with few events towards its
    midpoint:

    >>> p = HistogramBinning(n_bins=2)
    >>> p.learn_one(0.9, 1)
    >>> p.predict_one(0.9)            # (1 + 2 * 0.75) / (1 + 2), not 1.0
    0.8333333333333334

    """

    _monotone = False
    _bounded_memory_params = ("window_size",)

    def __init__(
        self,
        n_bins: int = 10,
        strategy: str = "uniform",
        window_size: int | None = None,
        prior_strength: float = 2.0,
    ):
        name = type(self).__name__
        V.check_param(
            name, "n_bins", n_bins, V.is_integer(n_bins) and n_bins >= 1, "an int >= 1"
        )
        V.check_param(
            name,
            "strategy",
            strategy,
            strategy in ("uniform", "quantile"),
            "a str among {'uniform', 'quantile'}",
        )
        V.check_optional_int_param(name, "window_size", window_size, 1)
        prior_strength = V.check_nonnegative_param(name, "prior_strength", prior_strength)
        # numpy numbers are stored as the Python numbers they equal, so that to_dict()
        # stays JSON-safe
        self.n_bins = int(n_bins)
        self.strategy = strategy
        self.window_size = None if window_size is None else int(window_size)
        self.prior_strength = prior_strength
        self._reset()

    def _new_core(self) -> tuple:
        return (
            self.n_bins,
            self.strategy,
            self.window_size,
            float(self.prior_strength),
        )

    def _reset(self) -> None:
        # the compiled int64 binner, until an event does not fit (see _widen)
        self._core = Int64Binner(*self._new_core())
        self._compiled = True

    def _widen(self) -> None:
        """Carry on with the general binner (Python integer sums), same state."""
        self._core = self._core.to_general()
        self._compiled = False

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"strategy": "quantile"}
        yield {"n_bins": 5, "window_size": 50}
        yield {"strategy": "quantile", "window_size": 40, "n_bins": 4}
        yield {"n_bins": 20, "prior_strength": 2.0}
        yield {
            "strategy": "quantile",
            "n_bins": 7,
            "prior_strength": 0.5,
            "window_size": 100,
        }

    # ------------------------------------------------------------------ learning

    def learn_one(self, score: float, label: bool | int, w: float = 1.0) -> None:
        """Update the bin of ``score`` with one event. O(log B); with ``"quantile"``,
        plus the amortised re-binning at epoch boundaries (see the class Notes).

        Parameters
        ----------
        score
            The model's score, a real number in [0, 1].
        label
            The observed outcome: 0, 1, False or True.
        w
            Sample weight, a finite real number >= 0 (0: the event teaches nothing, but
            takes a window slot).
        """
        if self._compiled:  # validates, then learns unless the event needs _widen
            if self._core.learn_one(score, label, w):
                return
            self._widen()
        s = V.check_score(score, "HistogramBinning", "learn_one")
        y = V.check_label(label, "HistogramBinning", "learn_one")
        w = V.check_weight(w, "HistogramBinning", "learn_one")
        self._core.learn(s, y, w)

    def _weights_surely_fit(self, w) -> bool:
        # the sums are exact integers, in int64 or else Python ints: no finite weight
        # is refused
        return True

    def learn_many(self, scores, labels, w=None) -> None:
        # as the base class's, but without weights the compiled pass reads none (no
        # array of ones: a third less memory traffic on the batch path)
        if w is not None:
            return super().learn_many(scores, labels, w)
        name = type(self).__name__
        s = V.check_scores_array(scores, name, "learn_many")
        y = V.check_labels_array(labels, len(s), name, "learn_many")
        self._learn_many_validated(s, y, None)

    learn_many.__doc__ = BinaryCalibrator.learn_many.__doc__

    def _learn_many_validated(
        self, scores: np.ndarray, labels: np.ndarray, w: np.ndarray | None
    ) -> None:
        """``w`` None: unit weights."""
        i = 0
        if self._compiled:
            i = self._core.learn_many(*_contiguous(scores, labels), None if w is None else _contiguous(w)[0])
            if i == len(scores):
                return
            self._widen()
        if w is None:
            w = np.ones(len(scores))
        learn = self._core.learn
        for s, y, wi in zip(scores[i:].tolist(), labels[i:].tolist(), w[i:].tolist()):
            learn(s, y, wi)

    def _predict_learn_many_validated(
        self, scores: np.ndarray, labels: np.ndarray, w: np.ndarray
    ) -> np.ndarray:
        out = np.empty(len(scores), dtype=np.float64)
        i = 0
        if self._compiled:
            i = self._core.predict_learn_many(*_contiguous(scores, labels, w), out)
            if i == len(scores):
                return out
            self._widen()
        core = self._core
        for j, (s, y, wi) in enumerate(
            zip(scores[i:].tolist(), labels[i:].tolist(), w[i:].tolist()), start=i
        ):
            out[j] = core.predict(s)
            core.learn(s, y, wi)
        return out

    # ------------------------------------------------------------------ prediction

    def predict_one(self, score: float) -> float:
        """Return the estimate of the bin of ``score``, or ``score`` itself if that bin
        holds no positive weight yet. O(log B)."""
        if self._compiled:
            return self._core.predict_one(score)
        return self._core.predict(
            V.check_score(score, "HistogramBinning", "predict_one")
        )

    def _predict_many_validated(self, scores: np.ndarray) -> np.ndarray:
        return self._core.predict_many(np.ascontiguousarray(scores, dtype=np.float64))

    def epsilon(self, alpha: float) -> float:
        """Distribution-free calibration tolerance of the current uniform-mass bins.

        With ``n`` = :attr:`n_calibration` (the events the current edges were computed
        from), ``B`` = ``n_bins`` and ``a`` = ``prior_strength``, returns Theorem 2 of
        Gupta (2022) (Theorem 4 of Gupta and Ramdas, 2021)::

            sqrt(log(2 / alpha) / (2 * (floor(n / B) - 1)))  +  a / (floor(n / B) - 1 + a)

        and ``inf`` when ``n < 2 B`` (the theorem needs ``n >= 2 B``). The second term
        (zero without a prior) bounds how far the prior moves an estimate. O(1).

        With probability at least ``1 - alpha`` over i.i.d. data and a test score,
        ``|P(Y = 1 | h(X)) - h(X)| < epsilon``. The theorem assumes unit weights and no
        ties among the scores (its randomisation ``delta`` is taken to 0); it is stated
        for the calibration set at the epoch boundary. Without a window, events learnt
        since then only add data to the bins; with one, the window has moved on and the
        figure is the guarantee of the calibration set. Algorithm 1 also leaves the
        ``B - 1`` edge points out of the bin means while this calibrator keeps them in
        their bins (the numpy mean of the bin), which moves a bin mean by at most
        ``1 / floor(n / B)``.

        Parameters
        ----------
        alpha
            Failure probability, a real number in (0, 1).

        Examples
        --------
        >>> cal = HistogramBinning(n_bins=10, strategy="quantile", prior_strength=0)
        >>> cal.epsilon(0.1)                        # no data: no guarantee
        inf
        >>> cal.learn_many([i / 1024 for i in range(1024)], [i % 2 for i in range(1024)])
        >>> cal.n_calibration, round(cal.epsilon(0.1), 4)
        (1024, 0.1218)

        """
        V.check_param(
            "HistogramBinning",
            "strategy",
            self.strategy,
            self.strategy == "quantile",
            "'quantile' for epsilon (the guarantee is for uniform-mass bins)",
        )
        alpha = V.check_real(
            alpha,
            "HistogramBinning",
            "alpha",
            lambda a: 0.0 < a < 1.0,
            "a real number in (0, 1)",
            "epsilon",
        )
        return calibration_epsilon(
            self._core.n_calibration, self.n_bins, alpha, self.prior_strength
        )

    # ------------------------------------------------------------------ views

    @property
    def edges(self) -> tuple[float, ...]:
        """The ``n_bins + 1`` current edges, from 0.0 to 1.0. O(B)."""
        return self._core.edges

    @property
    def bins(self) -> tuple[BinView, ...]:
        """The current bins, as named tuples ``(lower, upper, value, weight, n_events)``;
        ``value`` is None for a bin without positive weight. O(B)."""
        return self._core.bins

    @property
    def n_events(self) -> int:
        """Number of events learnt (``learn_one`` calls, including zero weights)."""
        return self._core.n_events

    @property
    def n_calibration(self) -> int:
        """Number of events the current ``"quantile"`` edges come from (0 otherwise)."""
        return self._core.n_calibration

    # ------------------------------------------------------------------ merge

    @property
    def _merge_refusal(self) -> str | None:
        refusal = _merge.order_refusal(self, "window_size")
        if refusal is None and self.strategy == "quantile":
            return (
                "with strategy='quantile', the edges are order statistics of the events "
                "held at the epoch boundaries (1, 2, 4, ... events), which depend on the "
                "order of the two streams"
            )
        return refusal

    def _merge(self, other):
        """The bins of both streams (``"uniform"`` edges, no window: equal edges by
        construction): per bin, the exact integer sums of weights and weighted labels
        (brought to the finer of the two units ``2**-E``) and the event counts are
        added. O(n_bins). Bit for bit the state of one calibrator fed both streams.
        """
        a, b = self._get_state(), other._get_state()
        E = max(a["E"], b["E"])
        W = _merge.add_lists([x << (E - a["E"]) for x in a["W"]], [x << (E - b["E"]) for x in b["W"]])
        S = _merge.add_lists([x << (E - a["E"]) for x in a["S"]], [x << (E - b["E"]) for x in b["S"]])
        state = dict(a)
        state.update(
            W=W,
            S=S,
            E=E,
            counts=_merge.add_lists(a["counts"], b["counts"]),
            n_events=a["n_events"] + b["n_events"],
            n_pos=a["n_pos"] + b["n_pos"],
        )
        return self._from_state(state)

    # ------------------------------------------------------------------ state

    def _get_state(self) -> dict:
        return self._core.to_state()

    def _validate_state(self, state: dict, check) -> None:
        # the sizes first (they size what the binners allocate), then the whole state
        # through the pure-Python binner's invariants (the compiled one trusts it)
        B, N = self.n_bins, self.window_size
        for key, n in (("edges", B + 1), ("W", B), ("S", B), ("counts", B)):
            check.list(check.entry(state, key), check.at("state", key), n=n)
        check.int(check.entry(state, "E"), "state['E']", 0, 1100)
        window = check.entry(state, "window")
        if N is None:
            check.require(window is None, "state['window']", "None (no window_size)", window)
        else:
            check.binary_events(window, "state['window']", N)
        cells = check.entry(state, "cells")
        if cells is not None:
            check.require(isinstance(cells, dict), "state['cells']", "a dict or None", cells)
        try:
            binner = HistogramBinner.from_state(*self._new_core(), state)
        except (ArithmeticError, IndexError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"The snapshot state of HistogramBinning is malformed: {exc!r}") from exc
        check.holds(binner._check)

    def _set_state(self, state: dict) -> None:
        # the same format for both binners: int64 sums whenever the state fits them
        self._compiled = Int64Binner.fits(state)
        binner = Int64Binner if self._compiled else HistogramBinner
        self._core = binner.from_state(*self._new_core(), state)

    def _check(self) -> None:
        """Assert the binner's invariants (see :meth:`HistogramBinner._check`)."""
        self._core._check()


def _contiguous(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The validated batch arrays as C-contiguous float64 (no copy when they are)."""
    return tuple(np.ascontiguousarray(a, dtype=np.float64) for a in arrays)
