"""Class taxonomies for path calibration (private), shared by
:class:`~streamcal.calibrators.PathCalibrator`, :class:`~streamcal.metrics.PathECE` and
the synthetic hierarchical stream of :mod:`streamcal.datasets`.

The one home of:

- the **taxonomy format**: a dict ``child -> parent`` (or an iterable of ``(child,
  parent)`` pairs, the form a snapshot stores), the root's parent being None. Every
  node is a JSON scalar (a str, an int, a bool or a finite float, as class labels are:
  :func:`streamcal._validation.check_class_label`); there is exactly one root, every
  parent is a node, and following parents from any node reaches the root (no cycle).
  The *leaves* are the nodes without children; the root is never a leaf and never a
  label (it is the hypothetical class that holds every example). At least one node
  besides the root is needed. Gupta's thesis (section 4.3) numbers the root 0 and the
  classes ``1 .. L``; here nodes carry any labels;
- the **path** of a node: the nodes from the top of the tree (a child of the root) down
  to the node itself, root excluded (``a(l)`` of the thesis, minus the root);
- what an event's **label** means for a node: ``1[node in a(label)]``, the label's path
  passes through the node (the label may be an inner node: the example belongs to it
  but to none of its children);
- the **raw path probabilities** of a leaf-score forecast: each node of the predicted
  leaf's path gets the total score of the leaves below it;
- the checks of these inputs, through the message templates of
  :mod:`streamcal._validation`.

Examples
--------
>>> tax = parse_taxonomy("PathCalibrator", {"sports": "root", "tennis": "sports",
...                      "golf": "sports", "economy": "root", "root": None})
>>> tax.leaves, tax.paths["golf"]
(('tennis', 'golf', 'economy'), ('sports', 'golf'))
>>> path_probabilities(tax, {"tennis": 0.5, "golf": 0.3, "economy": 0.2}, "tennis")
{'sports': 0.8, 'tennis': 0.5}

"""

from __future__ import annotations

import math
from collections.abc import Mapping

from streamcal import _validation as V

__all__ = [
    "TAXONOMY_DOMAIN",
    "Taxonomy",
    "check_leaf_scores",
    "check_node_label",
    "check_path_forecast",
    "parse_taxonomy",
    "path_probabilities",
    "taxonomy_from_snapshot",
    "taxonomy_pairs",
]

TAXONOMY_DOMAIN = (
    "a dict mapping each node (a str, an int, a bool or a finite float) to its parent, "
    "with exactly one root (parent None), every parent a node, no cycle and at least "
    "one node besides the root"
)
LEAF_SCORES_DOMAIN = (
    "a non-empty dict mapping leaves of the taxonomy to probabilities in [0, 1] that "
    f"sum to 1 within {V.PROBABILITY_TOLERANCE:g}"
)
NODE_DOMAIN = "a node of the taxonomy other than the root"
PATH_DOMAIN = (
    "a dict mapping every node of one path of the taxonomy (from the top down to a "
    "node, root excluded) to a probability in [0, 1]"
)


class Taxonomy:
    """A validated taxonomy (build it with :func:`parse_taxonomy`).

    Attributes: ``parent`` (dict node -> parent, None for the root), ``root``,
    ``leaves`` (tuple, in the order of the nodes) and ``leaf_set``, ``paths`` (dict
    non-root node -> tuple of nodes from the top down to it, root excluded; its last
    node is the taxonomy's own object of the node). Memory O(nodes x depth).
    """

    __slots__ = ("leaf_set", "leaves", "parent", "paths", "root")

    def __init__(self, parent: dict):
        self.parent = parent
        self.root = next(c for c, p in parent.items() if p is None)
        has_child = {p for p in parent.values() if p is not None}
        self.leaves = tuple(c for c in parent if c not in has_child)
        self.leaf_set = frozenset(self.leaves)
        self.paths: dict = {}
        # paths hold the dict's own key objects, so that ``paths[x][-1]`` is the one
        # object of node ``x`` (equal labels from different sources, say a snapshot,
        # become one object, and so pickle alike)
        canon = {c: c for c in parent}
        for node in parent:
            if node == self.root:
                continue
            path = []
            n = node
            while n != self.root:
                path.append(n)
                n = canon[parent[n]]
            self.paths[node] = tuple(reversed(path))

    def __reduce__(self):
        # rebuilt from ``parent`` (whose order pickle keeps): the frozenset ``leaf_set``
        # then has the layout of the original, whereas a set unpickled from its
        # iteration order can iterate differently (and pickle to other bytes)
        return (Taxonomy, (self.parent,))


def _problem(parent: dict) -> str | None:
    """Why ``parent`` (a dict of JSON-scalar nodes) is not a taxonomy, or None. O(nodes x
    depth)."""
    roots = [c for c, p in parent.items() if p is None]
    if len(roots) != 1:
        return f"{len(roots)} roots"
    if len(parent) < 2:
        return "no node besides the root"
    for c, p in parent.items():
        if p is not None and p not in parent:
            return f"the parent {p!r} of {c!r} is not a node"
    for c in parent:  # every chain of parents reaches the root within len(parent) steps
        n, steps = c, 0
        while parent[n] is not None:
            n = parent[n]
            steps += 1
            if steps > len(parent):
                return f"{c!r} is on a cycle"
    return None


def parse_taxonomy(owner: str, taxonomy) -> Taxonomy:
    """The :class:`Taxonomy` of the constructor parameter ``taxonomy`` of ``owner`` (a
    dict child -> parent, or ``(child, parent)`` pairs), or the template ValueError
    naming the parameter and what is wrong. O(nodes x depth).

    Examples
    --------
    >>> parse_taxonomy("PathECE", {"a": "b", "b": "a", "r": None})
    Traceback (most recent call last):
    ...
    ValueError: The 'taxonomy' parameter of PathECE must be a dict mapping each node (a str, an int, a bool or a finite float) to its parent, with exactly one root (parent None), every parent a node, no cycle and at least one node besides the root ('a' is on a cycle). Got {'a': 'b', 'b': 'a', 'r': None} instead.

    """
    parent: dict = {}
    problem = None
    try:
        pairs = taxonomy.items() if isinstance(taxonomy, Mapping) else list(taxonomy)
        for pair in pairs:
            c, p = pair
            c = V.check_class_label(c, owner, None, "taxonomy")
            if p is not None:
                p = V.check_class_label(p, owner, None, "taxonomy")
            if c in parent:
                problem = f"{c!r} is given twice"
                break
            parent[c] = p
    except (TypeError, ValueError):
        problem = "not a dict of nodes and their parents"
    if problem is None:
        problem = _problem(parent)
    V.check_param(
        owner, "taxonomy", taxonomy, problem is None, f"{TAXONOMY_DOMAIN} ({problem})"
    )
    return Taxonomy(parent)


def taxonomy_pairs(taxonomy) -> list:
    """The ``[child, parent]`` pairs of a valid ``taxonomy`` parameter (a dict or
    pairs): the JSON-safe form a snapshot stores (a dict with int nodes would come back
    from JSON with str keys)."""
    items = taxonomy.items() if isinstance(taxonomy, Mapping) else taxonomy
    return [[c, p] for c, p in items]


def taxonomy_from_snapshot(params: dict) -> dict:
    """``params`` with the ``taxonomy`` pairs of a snapshot (:func:`taxonomy_pairs`)
    turned back into a dict child -> parent, so that a restored object has the
    taxonomy a constructor call with the dict would have; anything else unchanged."""
    pairs = params.get("taxonomy")
    if not isinstance(pairs, list):
        return params
    try:
        parent = {c: p for c, p in pairs}
    except (TypeError, ValueError):
        return params
    if len(parent) != len(pairs):  # a node given twice: for the constructor to refuse
        return params
    return {**params, "taxonomy": parent}


def check_leaf_scores(tax: Taxonomy, value, owner: str, method: str, name: str = "leaf_scores") -> dict:
    """``value`` as a probability vector over leaves of ``tax`` (a leaf left out has
    score 0), or the template error naming ``name``. O(K)."""
    scores = V.check_probability_vector(value, owner, method, name)
    leaves = tax.leaf_set
    for k in scores:
        if k not in leaves:
            raise V.argument_error(
                ValueError, name, owner, method, LEAF_SCORES_DOMAIN, value,
                suffix=f" ({k!r} is not a leaf)",
            )
    return scores


def check_node_label(tax: Taxonomy, value, owner: str, method: str, name: str = "label"):
    """``value`` as a non-root node of ``tax``, or the template error naming ``name``."""
    y = V.check_class_label(value, owner, method, name)
    if y not in tax.paths:
        raise V.argument_error(ValueError, name, owner, method, NODE_DOMAIN, value)
    return y


def check_path_forecast(tax: Taxonomy, value, owner: str, method: str, name: str = "y_pred"):
    """``(deepest node, path, probabilities along it)`` of a path forecast ``value``
    (a dict node -> probability over the whole path of one node), or the template
    error naming ``name``. O(depth)."""
    if not isinstance(value, dict):
        raise V.argument_error(TypeError, name, owner, method, PATH_DOMAIN, value)
    deepest, depth = None, 0
    for k in value:
        path = tax.paths.get(k)
        if path is None:
            raise V.argument_error(ValueError, name, owner, method, PATH_DOMAIN, value)
        if len(path) > depth:
            deepest, depth = k, len(path)
    path = tax.paths[deepest] if deepest is not None else ()
    if not path or len(value) != depth or any(n not in value for n in path):
        raise V.argument_error(ValueError, name, owner, method, PATH_DOMAIN, value)
    probs = []
    for n in path:
        p = value[n]
        if type(p) is bool or not V.is_real(p) or not 0.0 <= float(p) <= 1.0:
            raise V.argument_error(
                TypeError if type(p) is bool or not V.is_real(p) else ValueError,
                name, owner, method, PATH_DOMAIN, value,
            )
        probs.append(float(p))
    return deepest, path, probs


def path_probabilities(tax: Taxonomy, scores: dict, leaf) -> dict:
    """The raw path probabilities of the leaf-score forecast ``scores`` for the path of
    ``leaf``: each node gets the total score of the leaves below it (correctly rounded,
    :func:`math.fsum`), the top node first, at most 1. Non-increasing down the path:
    a node's leaves include its child's, the exact totals are ordered, and rounding
    keeps the order. O(K x depth) for K scored leaves.
    """
    path = tax.paths[leaf]
    d = len(path)
    groups: list = [[] for _ in range(d)]  # groups[j]: scores of leaves whose path leaves ours below path[j]
    paths = tax.paths
    for k, s in scores.items():
        other = paths[k]
        j = 0
        while j < d and j < len(other) and other[j] == path[j]:
            j += 1
        if j:
            groups[j - 1].append(s)
    out = [0.0] * d
    below: list = []
    for j in range(d - 1, -1, -1):
        below.extend(groups[j])
        total = math.fsum(below)
        out[j] = total if total <= 1.0 else 1.0
    return dict(zip(path, out))
