"""Path calibration for classifiers over a class taxonomy (Gupta's thesis, section 4.3):
running histogram binning on the predicted leaf's confidence, one bin mean per node of
its path."""

from __future__ import annotations

import typing

import numpy as np
from river import base

from streamcal import _merge, _snapshot
from streamcal import _taxonomy as T
from streamcal import _validation as V
from streamcal._classes import decode_label, encode_label, top_class
from streamcal.calibrators.histogram import HistogramBinning
from streamcal.core.bins import edge_bins

__all__ = ["PathCalibrator"]


class PathCalibrator(_snapshot.Snapshot, _merge.Mergeable, base.Estimator):
    """Path calibration of a hierarchical classifier: calibrated probabilities for the
    predicted leaf *and each of its ancestors*, non-increasing from the top of the path
    down to the leaf, kept up to date after every event.

    The preliminary post-hoc method of Gupta's thesis (section 4.3.2), streamed. The
    classifier gives a score to each leaf of ``taxonomy``; its prediction ``c(x)`` is
    the top leaf and ``g(x)`` that leaf's score. For each leaf ``l``, the events
    predicted ``l`` are binned on ``g`` exactly as top-label histogram binning bins
    them (:class:`~streamcal.HistogramBinning` with this calibrator's ``n_bins``,
    ``strategy``, ``window_size`` and ``prior_strength``), and for each node ``l'`` of
    ``l``'s path the bin's estimate is the (prior-smoothed) weighted share of its
    events whose label lies below ``l'``::

        pi[l', b, l] = (sum_t w_t 1[l' in a(Y_t)] + a m_b) / (sum_t w_t + a)

    over the events ``t`` predicted ``l`` in bin ``b`` (``m_b`` the bin's midpoint,
    ``a`` = ``prior_strength``; ``a = 0`` is equation (4.4) of the thesis). The output
    for ``x`` is ``{l': pi[l', B_l(g(x)), l]}`` over the path of ``l = c(x)`` (equation
    4.5), the other nodes abstaining (absent from the dict). At the leaf itself this
    *is* top-label histogram binning.

    Parameters
    ----------
    taxonomy
        The class tree: a dict mapping each node to its parent, the root's parent being
        None (or an iterable of ``(child, parent)`` pairs, the form a snapshot stores).
        Nodes are JSON scalars (str, int, bool, finite float); there must be exactly one
        root, every parent must be a node, and there must be no cycle. The leaves are
        the nodes without children. The root is the hypothetical class of every
        example: it is never scored, never predicted and never a label.
    n_bins, strategy, window_size, prior_strength
        The bins of each leaf, as for :class:`~streamcal.HistogramBinning` (defaults
        10, ``"uniform"``, None, 2). ``window_size`` bounds the events of *each leaf*:
        the last ``window_size`` events predicted that leaf.

    Attributes
    ----------
    taxonomy_leaves
        The leaves of the taxonomy, in the order of its nodes.
    calibrators
        Dict predicted leaf -> tuple of :class:`~streamcal.HistogramBinning`, one per
        node of its path (top first), for the leaves predicted so far.

    Notes
    -----
    **Inputs.** ``leaf_scores`` is a dict leaf -> score summing to 1, like the
    multiclass calibrators' ``scores`` (river's ``predict_proba_one`` of a classifier
    over the leaves); a leaf left out scores 0; a key that is not a leaf is refused.
    The predicted leaf is the top one, ties going to the first key
    (:func:`streamcal._classes.top_class`). ``label`` is any node but the root: an
    inner node means that the example belongs to that class and to none of its
    children (the thesis allows it), so it counts for the node's ancestors only.

    **Path monotonicity, by construction.** The bins of the nodes of a leaf's path are
    the same bins (the edges depend on the scores and weights only, which all nodes
    share), holding the same weights; an ancestor's indicator ``1[l^A in a(Y)]`` is at
    least its descendant's for every event, so its weighted label sum is at least the
    descendant's, and with the same prior ``a m_b`` added to both and the same
    denominator, its estimate is at least the descendant's. Each estimate is the exact
    rational rounded once (:class:`~streamcal.HistogramBinning`'s exact sums), and
    rounding is monotone, so the floats keep the order. :meth:`_check` asserts it on
    every bin, with the shared bins and weights.

    **Guarantee (expected, as the thesis states it).** Gupta (section 4.3.2) expects the
    distribution-free guarantee of top-label histogram binning (Gupta and Ramdas,
    2022, appendix B; the binary statement is :meth:`HistogramBinning.epsilon`) to
    carry over to path calibration: with ``strategy="quantile"``, i.i.d. events, unit
    weights, no ties among the scores, no prior (``prior_strength=0``) and ``n_l >= 2
    B`` calibration events predicted leaf ``l``, each node's estimate would satisfy,
    with probability at least ``1 - alpha``, ``|P(l' in a(Y) | c(X) = l, h(X)) -
    h_{l'}(X)| < sqrt(log(2 / alpha) / (2 (floor(n_l / B) - 1)))``, the bound of each
    single node being the binary one, since the node's estimates are binary histogram
    binning of ``1[l' in a(Y)]`` on the leaf's bins; a simultaneous statement over the
    ``d`` nodes of the path takes ``alpha / d`` (union bound). The thesis proves none
    of this: it is stated as an expectation, and so it is here. Windows, weights,
    ties and the prior move away from its assumptions as for
    :class:`~streamcal.HistogramBinning`.

    **Cold start.** A leaf never predicted, or a leaf whose bin holds no positive weight
    yet, gets the raw path probabilities: each node the total score of the leaves below
    it (non-increasing too). By default (``prior_strength=2``) a bin with a single
    event says neither 0 nor 1.

    **Cost.** ``learn_one``: O(K) to find the top leaf plus O(d log B) for the ``d``
    nodes of its path (with ``"quantile"``, plus the binners' amortised re-binning);
    ``predict_one``: O(K + d log B), plus O(K d) for the raw path on a cold bin (and,
    when the leaf's bin mean equals the score, which is how an empty bin answers, a
    read of the leaf binner's state to tell them apart). Memory: ``d`` histogram
    binners per leaf predicted, each as :class:`~streamcal.HistogramBinning` says.

    **Not in the registry.** No short name for the command line: a spec string cannot
    carry a taxonomy, and a replay log has neither a taxonomy nor path labels.

    References
    ----------
    - Gupta (2022), "Post-hoc calibration without distributional assumptions", thesis
      proposal, Definitions 7 and 8 and section 4.3.2.
    - Gupta and Ramdas (2022), "Top-label calibration and multiclass-to-binary
      reductions", ICLR.

    Examples
    --------
    >>> from streamcal.calibrators import PathCalibrator
    >>> tax = {"root": None, "sports": "root", "tennis": "sports", "golf": "sports",
    ...        "economy": "root"}
    >>> cal = PathCalibrator(tax, n_bins=2, prior_strength=0)
    >>> cal.predict_one({"tennis": 0.7, "golf": 0.2, "economy": 0.1})  # raw path: 0.7 + 0.2
    {'sports': 0.8999999999999999, 'tennis': 0.7}
    >>> for y in ["tennis", "golf", "tennis", "economy"]:
    ...     cal.learn_one({"tennis": 0.7, "golf": 0.2, "economy": 0.1}, y)
    >>> cal.predict_one({"tennis": 0.8, "golf": 0.1, "economy": 0.1})
    {'sports': 0.75, 'tennis': 0.5}

    A label may be an inner node (an article about sports in general):

    >>> cal.learn_one({"tennis": 0.9, "golf": 0.1}, "sports")
    >>> cal.predict_one({"tennis": 0.9, "golf": 0.1})
    {'sports': 0.8, 'tennis': 0.4}

    """

    _registry: typing.ClassVar[dict[str, type]] = {}
    _package = "streamcal.calibrators"
    _bounded_memory_params = ("window_size",)

    def __init__(
        self,
        taxonomy,
        n_bins: int = 10,
        strategy: str = "uniform",
        window_size: int | None = None,
        prior_strength: float = 2.0,
    ):
        name = type(self).__name__
        self._tax = T.parse_taxonomy(name, taxonomy)
        V.check_param(name, "n_bins", n_bins, V.is_integer(n_bins) and n_bins >= 1, "an int >= 1")
        V.check_param(
            name, "strategy", strategy, strategy in ("uniform", "quantile"),
            "a str among {'uniform', 'quantile'}",
        )
        V.check_optional_int_param(name, "window_size", window_size, 1)
        prior_strength = V.check_nonnegative_param(name, "prior_strength", prior_strength)
        self.taxonomy = taxonomy
        self.n_bins = n_bins
        self.strategy = strategy
        self.window_size = window_size
        self.prior_strength = prior_strength
        self._reset()

    def _binner_params(self) -> dict:
        """The parameters of the binners (JSON-safe: numpy numbers as Python's)."""
        return {
            "n_bins": int(self.n_bins),
            "strategy": self.strategy,
            "window_size": None if self.window_size is None else int(self.window_size),
            "prior_strength": float(self.prior_strength),
        }

    def _reset(self) -> None:
        self._template = HistogramBinning(**self._binner_params())
        self._cals: dict = {}  # predicted leaf -> list of binners along its path

    @classmethod
    def _unit_test_params(cls):
        tax = {0: None, 1: 0, 2: 0, 3: 1, 4: 1, 5: 2, 6: 2, 7: 3, 8: 3}
        yield {"taxonomy": tax}
        yield {"taxonomy": tax, "n_bins": 4, "window_size": 30}
        yield {"taxonomy": tax, "strategy": "quantile", "n_bins": 3, "prior_strength": 0}

    @property
    def _supervised(self) -> bool:
        return True

    def _more_tags(self) -> set[str]:
        return {"calibrator", "path"}

    @property
    def taxonomy_leaves(self) -> tuple:
        """The leaves of the taxonomy, in the order of its nodes."""
        return self._tax.leaves

    @property
    def calibrators(self) -> dict:
        """Dict predicted leaf -> tuple of the binners of its path (top first)."""
        return {leaf: tuple(cals) for leaf, cals in self._cals.items()}

    # ------------------------------------------------------------------ learning

    def learn_one(self, leaf_scores: dict, label, w: float = 1.0) -> None:
        """Learn one event: the binners of the predicted leaf's path each learn ``(g,
        1[node in a(label)], w)``. O(K + d log B); with ``"quantile"``, plus the
        amortised re-binning of :class:`~streamcal.HistogramBinning`.

        Parameters
        ----------
        leaf_scores
            Dict leaf -> score (probability), summing to 1.
        label
            The observed class: any node of the taxonomy but the root.
        w
            Sample weight, a finite real number >= 0 (HistogramBinning's exact sums
            accept every such weight).
        """
        name = type(self).__name__
        tax = self._tax
        scores = T.check_leaf_scores(tax, leaf_scores, name, "learn_one")
        y = T.check_node_label(tax, label, name, "learn_one")
        w = V.check_weight(w, name, "learn_one")
        leaf, g = top_class(scores)
        cals = self._cals.get(leaf)
        if cals is None:  # keyed by the taxonomy's own object of the leaf
            cals = self._cals[tax.paths[leaf][-1]] = [self._template.clone() for _ in tax.paths[leaf]]
        below = set(tax.paths[y])
        for node, cal in zip(tax.paths[leaf], cals):
            cal.learn_one(g, node in below, w)

    # ------------------------------------------------------------------ prediction

    def predict_one(self, leaf_scores: dict) -> dict:
        """The path-calibrated probabilities of the predicted leaf's path: a dict node
        -> probability, from the top of the path down to the leaf (root excluded),
        non-increasing. O(K + d log B), plus O(K d) on a cold bin."""
        tax = self._tax
        scores = T.check_leaf_scores(tax, leaf_scores, type(self).__name__, "predict_one")
        leaf, g = top_class(scores)
        cals = self._cals.get(leaf)
        if cals is None:
            return T.path_probabilities(tax, scores, leaf)
        h = cals[-1].predict_one(g)
        # HistogramBinning returns the score itself from a bin without positive weight:
        # then (rarely ambiguous, a bin mean equal to the score) its state says
        if h == g and _bin_is_empty(cals[-1], g):
            return T.path_probabilities(tax, scores, leaf)
        out = {node: cal.predict_one(g) for node, cal in zip(tax.paths[leaf], cals[:-1])}
        out[leaf] = h
        return out

    def raw_path(self, leaf_scores: dict) -> dict:
        """The uncalibrated path probabilities of ``leaf_scores``: each node of the top
        leaf's path gets the total score of the leaves below it. O(K d).

        Examples
        --------
        >>> cal = PathCalibrator({"r": None, "a": "r", "a1": "a", "a2": "a", "b": "r"})
        >>> cal.raw_path({"a1": 0.25, "a2": 0.5, "b": 0.25})
        {'a': 0.75, 'a2': 0.5}

        """
        tax = self._tax
        scores = T.check_leaf_scores(tax, leaf_scores, type(self).__name__, "raw_path")
        return T.path_probabilities(tax, scores, top_class(scores)[0])

    # ------------------------------------------------------------------ merge

    @property
    def _merge_refusal(self) -> str | None:
        reason = HistogramBinning(**self._binner_params())._merge_refusal
        if reason is None:
            return None
        return f"its HistogramBinning binners cannot ({reason})"

    def _merge(self, other):
        """Per leaf and node, the merge of the two sides' binners (exact: bit for bit
        one calibrator fed both streams); a leaf only one side predicted keeps a copy.
        Leaves in order of first prediction, ``self``'s then ``other``'s new ones.
        O(leaves x d x n_bins)."""
        new = self.clone()
        new._cals.update(_merge.merge_by_key(
            self._cals, other._cals,
            lambda a, b: [x.merge(y) for x, y in zip(a, b)],
            lambda one: [x.merge(x.clone()) for x in one],
        ))  # fmt: skip
        return new

    # ------------------------------------------------------------------ state

    def to_dict(self) -> dict:
        # the taxonomy as [child, parent] pairs: a dict with int nodes would come back
        # from JSON with str keys
        d = _snapshot.to_dict(self)
        d["params"]["taxonomy"] = T.taxonomy_pairs(self.taxonomy)
        return d

    to_dict.__doc__ = _snapshot.Snapshot.to_dict.__doc__

    @classmethod
    def _upgrade_snapshot(cls, params: dict, state: dict, fmt: int):
        # the [child, parent] pairs written by to_dict back into the dict child -> parent
        # (malformed pairs are left as they are, for the constructor's check to refuse)
        return T.taxonomy_from_snapshot(params), state

    def _get_state(self) -> dict:
        return {
            "leaves": [
                [encode_label(leaf), [c.to_dict() for c in cals]]
                for leaf, cals in self._cals.items()
            ]
        }

    def _validate_state(self, state: dict, check) -> None:
        # one entry per predicted leaf, each with one HistogramBinning snapshot of this
        # calibrator's parameters per node of its path; their invariants, then the
        # path's shared bins and monotonicity, are checked by _check once built
        tax = self._tax
        entries = check.list(check.entry(state, "leaves"), "state['leaves']", max_n=len(tax.leaves))
        memo: dict = {}
        seen = set()
        for i, pair in enumerate(entries):
            where = f"state['leaves'][{i}]"
            leaf, snaps = check.list(pair, where, n=2, what="(leaf, binner snapshots)")
            try:
                leaf = decode_label(leaf, memo)
            except (KeyError, TypeError, ValueError):  # KeyError: a dict without "tuple"
                check.fail(f"{where}[0]", "a leaf of the taxonomy", leaf)
            check.require(
                leaf in tax.leaf_set and leaf not in seen, f"{where}[0]",
                "a leaf of the taxonomy, once", leaf,
            )
            seen.add(leaf)
            snaps = check.list(snaps, f"{where}[1]", n=len(tax.paths[leaf]), what="binner snapshots")
            want = self._binner_params()
            for j, snap in enumerate(snaps):
                ok = isinstance(snap, dict) and snap.get("class") == "HistogramBinning" and snap.get("params") == want
                check.require(ok, f"{where}[1][{j}]", f"a HistogramBinning snapshot with params {want}", snap)
                try:
                    HistogramBinning.from_dict(snap)
                except ValueError as exc:
                    check.fail(f"{where}[1][{j}]", f"a valid HistogramBinning snapshot ({exc})", snap)

    def _set_state(self, state: dict) -> None:
        memo: dict = {}
        paths = self._tax.paths
        self._cals = {
            paths[decode_label(leaf, memo)][-1]: [HistogramBinning.from_dict(s) for s in snaps]
            for leaf, snaps in state["leaves"]
        }

    def _check(self) -> None:
        """Assert the invariants: each predicted leaf has one binner per node of its
        path, each passing its own ``_check``; they share edges, per-bin weights and
        event counts (the same bins and events, as exact integers); up the path each
        bin's exact label sum does not decrease, and each bin's estimate is
        non-increasing down the path (path monotonicity, see the class Notes)."""
        tax = self._tax
        for leaf, cals in self._cals.items():
            assert leaf in tax.leaf_set, f"{leaf!r} is not a leaf"
            assert len(cals) == len(tax.paths[leaf]), (leaf, len(cals))
            states = [c.to_dict()["state"] for c in cals]
            ref = states[0]
            for c, st in zip(cals, states):
                c._check()
                for key in ("edges", "W", "counts", "E", "n_events"):
                    assert st[key] == ref[key], (leaf, key, st[key], ref[key])
            edges = ref["edges"]
            for k, n in enumerate(ref["counts"]):
                if n == 0 or edges[k] == edges[k + 1]:
                    continue
                sums = [st["S"][k] for st in states]
                values = [c.predict_one(edges[k]) for c in cals]
                for j in range(len(cals) - 1):
                    assert sums[j] >= sums[j + 1] and values[j] >= values[j + 1], (
                        f"path monotonicity broken at leaf {leaf!r}, bin {k}: label "
                        f"sums {sums}, estimates {values}"
                    )


# PathCalibrator is the base of its own family (no other calibrator family fits its
# path outputs): registered under its own name so that from_dict finds it
PathCalibrator._registry[_snapshot.class_key(PathCalibrator)] = PathCalibrator


def _bin_is_empty(cal: HistogramBinning, g: float) -> bool:
    """Whether the bin of ``cal`` holding score ``g`` has no positive weight (the bin
    rule of :mod:`streamcal.core.bins`; the counts read from the snapshot state, exact
    whatever the weights). O(state)."""
    state = cal.to_dict()["state"]
    k = int(edge_bins(np.array([g]), state["edges"])[0])
    return state["counts"][k] == 0
