"""A synthetic hierarchical classification stream with known true path probabilities,
for path calibration (Gupta's thesis, section 4.3).

The taxonomy is the news-topic tree of the thesis's Figure 4.1, cut to ten classes
(:data:`NEWS_TAXONOMY`)::

    root ─ sports ─ tennis, golf, football
         ─ economy ─ stocks
                   ─ energy ─ solar, coal
         ─ science

Each example ``x`` has a true distribution ``q(x)`` over the ten classes (the nodes
but the root), the softmax of independent normal logits with standard deviation
``spread``, centred on 0 for the seven leaves and on ``inner_logit`` for the three
inner nodes (an article about sports in general, of no narrower topic). Its label is
drawn from ``q(x)``. The classifier only scores the leaves, over-confidently: its leaf
scores are ``q_l(x) ** sharpness`` renormalised over the leaves, so its top leaf is the
true most likely leaf but its confidence is too high (``sharpness > 1``), and the raw
path probabilities (a node's score is the total score of the leaves below it) ignore
the inner-node labels. The true probability that ``x`` belongs to node ``l`` is
``sum_{m below l} q_m(x)`` (``m`` ranging over ``l`` and its descendants): what a
path-calibrated forecast converges to, averaged over the examples that share its
prediction and bin.
"""

from __future__ import annotations

import dataclasses
import types

import numpy as np

from streamcal import _taxonomy as T
from streamcal import _validation as V

__all__ = ["NEWS_TAXONOMY", "HierarchicalStream", "hierarchical_stream"]

#: The taxonomy of :func:`hierarchical_stream`, child -> parent (read-only).
NEWS_TAXONOMY = types.MappingProxyType(
    {
        "root": None,
        "sports": "root",
        "tennis": "sports",
        "golf": "sports",
        "football": "sports",
        "economy": "root",
        "stocks": "economy",
        "energy": "economy",
        "solar": "energy",
        "coal": "energy",
        "science": "root",
    }
)


@dataclasses.dataclass(frozen=True)
class HierarchicalStream:
    """The events of :func:`hierarchical_stream`.

    Attributes
    ----------
    taxonomy
        Dict child -> parent (a copy of :data:`NEWS_TAXONOMY`).
    leaf_scores
        One dict leaf -> score (summing to 1) per event: the classifier's forecast.
    labels
        The observed class of each event (any node but the root).
    true_paths
        One dict per event: the true probability that the example belongs to each
        node of its top leaf's path, from the top down to the leaf (the path
        :meth:`PathCalibrator.predict_one <streamcal.calibrators.PathCalibrator.predict_one>`
        returns).
    """

    taxonomy: dict
    leaf_scores: list
    labels: list
    true_paths: list

    def __len__(self) -> int:
        return len(self.labels)


def hierarchical_stream(
    n: int,
    seed: int = 0,
    sharpness: float = 2.0,
    spread: float = 1.5,
    inner_logit: float = -1.5,
) -> HierarchicalStream:
    """Generate ``n`` events of the synthetic news-topic stream (see the module
    docstring), deterministic given ``seed``. O(n x nodes).

    Parameters
    ----------
    n
        Number of events, an int >= 0.
    seed
        Seed of the local numpy generator.
    sharpness
        Exponent ``> 0`` of the classifier's leaf scores: 1 scores the leaves by their
        true probabilities (renormalised over the leaves), above 1 over-confidently.
    spread
        Standard deviation ``> 0`` of the true logits: larger spreads make examples
        more certain.
    inner_logit
        Mean of the logits of the three inner nodes (a finite real number; lower: fewer
        labels at inner nodes).

    Examples
    --------
    >>> from streamcal.datasets import hierarchical_stream
    >>> s = hierarchical_stream(3, seed=1)
    >>> len(s), s.labels
    (3, ['tennis', 'stocks', 'football'])
    >>> {k: round(v, 3) for k, v in s.leaf_scores[2].items() if v > 0.05}
    {'golf': 0.66, 'football': 0.279}
    >>> {k: round(v, 3) for k, v in s.true_paths[2].items()}   # over-confident: 0.66
    {'sports': 0.778, 'golf': 0.438}

    """
    name = "hierarchical_stream"
    n = V.check_int(n, name, "n", 0)
    V.check_param(name, "sharpness", sharpness, V.is_real(sharpness) and 0.0 < sharpness < np.inf, "a finite real number > 0")
    V.check_param(name, "spread", spread, V.is_real(spread) and 0.0 < spread < np.inf, "a finite real number > 0")
    V.check_param(name, "inner_logit", inner_logit, V.is_real(inner_logit) and np.isfinite(inner_logit), "a finite real number")
    taxonomy = dict(NEWS_TAXONOMY)
    tax = T.parse_taxonomy(name, taxonomy)
    nodes = list(tax.paths)
    leaves = list(tax.leaves)
    is_leaf = np.array([c in tax.leaf_set for c in nodes])
    rng = np.random.default_rng(seed)
    z = rng.normal(np.where(is_leaf, 0.0, float(inner_logit)), float(spread), size=(n, len(nodes)))
    q = np.exp(z - z.max(axis=1, keepdims=True))
    q /= q.sum(axis=1, keepdims=True)
    u = rng.random(n)
    labels_idx = np.minimum((q.cumsum(axis=1) < u[:, None]).sum(axis=1), len(nodes) - 1)
    ql = q[:, is_leaf]
    s = ql ** float(sharpness)
    s /= s.sum(axis=1, keepdims=True)
    # below[i, j]: node j is node i or one of its descendants
    below = np.array([[a in tax.paths[b] for b in nodes] for a in nodes], dtype=np.float64)
    member = q @ below.T  # member[t, i] = P(x belongs to node i)
    col = {c: i for i, c in enumerate(nodes)}
    top = s.argmax(axis=1)
    leaf_scores, true_paths = [], []
    for t in range(n):
        leaf_scores.append(dict(zip(leaves, s[t].tolist())))
        path = tax.paths[leaves[top[t]]]
        true_paths.append({c: float(member[t, col[c]]) for c in path})
    labels = [nodes[i] for i in labels_idx.tolist()]
    return HierarchicalStream(taxonomy, leaf_scores, labels, true_paths)
