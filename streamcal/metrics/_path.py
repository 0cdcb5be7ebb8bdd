"""The path calibration error of forecasts over a class taxonomy (Gupta's thesis,
section 4.3)."""

from __future__ import annotations

import math
import typing

from streamcal import _taxonomy as T
from streamcal import _validation as V
from streamcal._merge import merge_by_key
from streamcal._classes import decode_by_class, decode_label, encode_by_class
from streamcal.core.bins import uniform_bin as _bin_of
from streamcal.core.bins import uniform_edges
from streamcal.metrics._binned import _check_n_bins
from streamcal.metrics._multiclass import BinSums
from streamcal.metrics.base import StreamingMetric

__all__ = ["PathECE"]


class PathECE(StreamingMetric):
    """Path ECE: the binned error of path calibration (Gupta's thesis, Definition 7),
    the top-label ECE extended to every node of the predicted path.

    A path forecast (what :meth:`PathCalibrator.predict_one
    <streamcal.calibrators.PathCalibrator.predict_one>` returns) is a dict node ->
    probability over the path of one node ``c`` of ``taxonomy``, from the top of the
    tree down to ``c`` (root excluded): ``c`` is the predicted class and ``h_l`` the
    probability that the example belongs to node ``l``, that is ``l in a(Y)``. For
    each predicted node ``c`` and each node ``l`` of its path, the events predicted
    ``c`` are binned by ``h_l`` into ``n_bins`` equal-width bins; with ``d_c`` the
    length of ``c``'s path::

        PathECE = sum_c sum_{l in path(c)} sum_b |sum_{t in (c, l, b)} w_t (1[l in a(y_t)] - h_{t,l})|
                  / (d_c sum_t w_t)
                = sum_c P(pred = c) * mean_{l in path(c)} ECE_{c,l}

    with ``ECE_{c,l}`` the binary ECE of ``(h_l, 1[l in a(Y)])`` over the events
    predicted ``c``. A path-calibrated forecast has every ``ECE_{c,l}`` near 0 up to
    binning and sampling; on a flat taxonomy (every node a child of the root) it is
    :class:`TopLabelECE` with ``y_pred`` reduced to its top class.

    Revertible exactly (per-bin sums zeroed when their last event leaves), so
    ``river.utils.Rolling`` windows it.

    Parameters
    ----------
    taxonomy
        The class tree, as for :class:`~streamcal.calibrators.PathCalibrator`: a dict
        mapping each node to its parent, the root's parent being None (or ``(child,
        parent)`` pairs).
    n_bins
        Number of equal-width bins of each node's probability.

    Notes
    -----
    ``y_true`` is a node (not the root); ``y_pred`` must hold exactly the nodes of one
    path, in any order, each with a probability in [0, 1] (monotonicity along the path
    is not required: a raw forecast may break it). ``update`` and ``revert`` cost
    O(depth); ``get`` O(paths predicted x depth x n_bins); memory the same.

    The metric is not in the catalogue of the command line and the replay (their logs
    carry no taxonomy and no path forecasts).

    Examples
    --------
    >>> from streamcal.metrics import PathECE
    >>> tax = {"root": None, "sports": "root", "tennis": "sports", "golf": "sports"}
    >>> m = PathECE(tax, n_bins=5)
    >>> m.update("tennis", {"sports": 0.9, "tennis": 0.7})
    >>> m.update("golf", {"sports": 0.9, "tennis": 0.7})
    >>> round(m.get(), 6)     # sports: |2 - 1.8| / 2 = 0.1; tennis: |1 - 1.4| / 2 = 0.2
    0.15
    >>> m.revert("golf", {"sports": 0.9, "tennis": 0.7})
    >>> round(m.get(), 6)     # (0.1 + 0.3) / 2
    0.2

    """

    short_name = None
    description = (
        "Path ECE: the binned calibration error of the probabilities of the predicted "
        "node and of each of its ancestors (path calibration), in [0, 1]."
    )
    #: The forecasts the metric scores: path forecasts over a taxonomy.
    task: typing.ClassVar[str] = "path"
    _path: typing.ClassVar[bool] = True
    _weight_capacity: typing.ClassVar[float] = V.weight_capacity(2.0)

    def __init__(self, taxonomy, n_bins: int = 10):
        name = type(self).__name__
        self._tax = T.parse_taxonomy(name, taxonomy)
        _check_n_bins(name, n_bins)
        self.taxonomy = taxonomy
        self.n_bins = n_bins
        super().__init__()

    @classmethod
    def _unit_test_params(cls):
        yield {"taxonomy": {0: None, 1: 0, 2: 0, 3: 1, 4: 1, 5: 2, 6: 2, 7: 3, 8: 3}}
        yield {"taxonomy": {"r": None, "a": "r", "b": "r", "a1": "a", "a2": "a"}, "n_bins": 3}

    def _reset(self) -> None:
        self._edges = tuple(uniform_edges(self.n_bins))
        self._by_node: dict = {}  # predicted node -> [BinSums per node of its path]
        self._weight = 0.0
        self._n = 0

    def works_with(self, model) -> bool:
        """Path calibrators produce the forecasts this metric scores."""
        return "path" in getattr(model, "_more_tags", lambda: set())()

    # ------------------------------------------------------------------ updates

    def _checked(self, y_true, y_pred, w, method: str):
        name = type(self).__name__
        y = T.check_node_label(self._tax, y_true, name, method, "y_true")
        forecast = T.check_path_forecast(self._tax, y_pred, name, method, "y_pred")
        return y, forecast, V.check_weight(w, name, method)

    def update(self, y_true, y_pred, w=1.0) -> None:
        """Add one event. O(depth). A weight the state cannot hold (see
        :mod:`streamcal._validation`) raises ValueError and changes nothing."""
        y, (c, path, probs), w = self._checked(y_true, y_pred, w, "update")
        if w <= 0.0:
            return
        V.check_weight_room(w, self._weight, self._weight_capacity, type(self).__name__, "update")
        sums = self._by_node.get(c)
        if sums is None:  # keyed by the taxonomy's own object of the node
            sums = self._by_node[path[-1]] = [BinSums(self.n_bins) for _ in path]
        below = set(self._tax.paths[y])
        n, edges = self.n_bins, self._edges
        for node, p, s in zip(path, probs, sums):
            s.add(_bin_of(p, n, edges), w, p, 1.0 if node in below else 0.0)
        self._weight += w
        self._n += 1

    def revert(self, y_true, y_pred, w=1.0) -> None:
        """Remove one event previously added with the same arguments; an event the
        metric cannot hold raises ValueError and changes nothing. O(depth)."""
        y, (c, path, probs), w = self._checked(y_true, y_pred, w, "revert")
        if w <= 0.0:
            return
        n, edges = self.n_bins, self._edges
        ks = [_bin_of(p, n, edges) for p in probs]
        sums = self._by_node.get(c)
        if sums is None or any(s.n[k] == 0 for s, k in zip(sums, ks)):
            raise ValueError(
                f"{type(self).__name__}.revert was given an event it does not hold "
                f"(y_true={V.format_value(y_true)}, y_pred={V.format_value(y_pred)}); "
                "revert only events previously added with update."
            )
        self._n -= 1
        if self._n == 0:
            self._reset()
            return
        if sums[0].count == 1:
            del self._by_node[c]
        else:
            below = set(self._tax.paths[y])
            for node, p, s, k in zip(path, probs, sums, ks):
                s.remove(k, w, p, 1.0 if node in below else 0.0)
        self._weight -= w

    def get(self) -> float:
        """The path ECE of the events held (0.0 before any)."""
        if not self._n:
            return 0.0
        total = 0.0
        for sums in self._by_node.values():
            total += sum(s.gap() for s in sums) / len(sums)
        return total / self._weight

    @property
    def ece_by_node(self) -> dict:
        """Dict ``predicted node -> {node of its path: ECE_{c,l}}``."""
        tax = self._tax
        return {
            c: {l: s.gap() / sum(s.w) for l, s in zip(tax.paths[c], sums)}
            for c, sums in self._by_node.items()
        }

    # ------------------------------------------------------------------ state

    _merge_refusal = None

    def _merge(self, other):
        """The bins of each predicted node's path over both streams (predicted nodes in
        order of first prediction: ``self``'s, then ``other``'s new ones). O(nodes x
        depth x n_bins)."""
        new = self.clone()
        new._by_node.update(merge_by_key(
            self._by_node, other._by_node,
            lambda a, b: [x.merged(y) for x, y in zip(a, b)],
            lambda one: [x.merged(BinSums(self.n_bins)) for x in one],
        ))  # fmt: skip
        new._weight = self._weight + other._weight
        new._n = self._n + other._n
        return new

    def to_dict(self) -> dict:
        # the taxonomy as [child, parent] pairs (see PathCalibrator.to_dict)
        d = super().to_dict()
        d["params"]["taxonomy"] = T.taxonomy_pairs(self.taxonomy)
        return d

    to_dict.__doc__ = StreamingMetric.to_dict.__doc__

    @classmethod
    def _upgrade_snapshot(cls, params: dict, state: dict, fmt: int):
        return T.taxonomy_from_snapshot(params), state

    def _get_state(self) -> dict:
        return {
            "weight": self._weight,
            "n": self._n,
            "nodes": encode_by_class(self._by_node, lambda sums: [s.state() for s in sums]),
        }

    def _validate_state(self, state: dict, check) -> None:
        tax = self._tax
        nodes = check.list(check.entry(state, "nodes"), "state['nodes']", max_n=len(tax.paths))
        for i, pair in enumerate(nodes):
            where = f"state['nodes'][{i}]"
            node, sums = check.list(pair, where, n=2, what="(node, bin sums per path node)")
            try:
                node = decode_label(node, {})
            except (KeyError, TypeError, ValueError):  # KeyError: a dict without "tuple"
                check.fail(f"{where}[0]", "a node of the taxonomy", node)
            check.require(node in tax.paths, f"{where}[0]", "a node of the taxonomy", node)
            sums = check.list(sums, f"{where}[1]", n=len(tax.paths[node]), what="bin sums")
            for j, s in enumerate(sums):
                w = f"{where}[1][{j}]"
                check.require(isinstance(s, dict), w, "a dict of bin sums", s)
                for key in ("n", "w", "p", "y"):
                    check.list(check.entry(s, key, w), check.at(w, key), n=self.n_bins, what="bin sums")

    def _set_state(self, state: dict) -> None:
        self._weight = float(state["weight"])
        self._n = int(state["n"])
        paths = self._tax.paths
        by_node = decode_by_class(state["nodes"], lambda sums: [BinSums.from_state(s) for s in sums], {})
        self._by_node = {paths[c][-1]: sums for c, sums in by_node.items()}

    def _check(self) -> None:
        """Assert every invariant of the state: per predicted node, one set of bin sums
        per node of its path, all holding the same events (counts, weights)."""
        if self._n == 0:
            assert self._weight == 0.0 and not self._by_node, (self._weight, self._by_node)
            return
        tax = self._tax
        for c, sums in self._by_node.items():
            assert c in tax.paths and len(sums) == len(tax.paths[c]), (c, len(sums))
            for s in sums:
                s.check(self.n_bins)
                assert s.count == sums[0].count, (c, s.count, sums[0].count)
                assert math.isclose(sum(s.w), sum(sums[0].w), rel_tol=1e-9), (c, s.w, sums[0].w)
        assert sum(s[0].count for s in self._by_node.values()) == self._n
        assert math.isclose(
            self._weight, sum(sum(s[0].w) for s in self._by_node.values()), rel_tol=1e-9
        )
