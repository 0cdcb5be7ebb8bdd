"""The synthetic hierarchical stream of ``streamcal.datasets`` (issue 17 item 2):
deterministic from its seed, well formed, and its true path probabilities are the
label frequencies they claim to be."""

import math

import numpy as np
import pytest

from streamcal.datasets import NEWS_TAXONOMY, hierarchical_stream
from tests import references_path as R


def test_deterministic_and_well_formed():
    a, b = hierarchical_stream(500, seed=4), hierarchical_stream(500, seed=4)
    assert a == b and a != hierarchical_stream(500, seed=5)
    tax = dict(NEWS_TAXONOMY)
    leaves = [c for c in tax if c not in set(tax.values())]
    assert a.taxonomy == tax and len(a) == 500
    for s, y, tp in zip(a.leaf_scores, a.labels, a.true_paths):
        assert list(s) == leaves and math.isclose(math.fsum(s.values()), 1.0, abs_tol=1e-12)
        assert y in tax and tax[y] is not None
        assert list(tp) == R.path_of(tax, R.predicted_leaf(s))
        vals = list(tp.values())
        assert vals == sorted(vals, reverse=True) and 0.0 < vals[-1] and vals[0] <= 1.0 + 1e-12
    assert {y for y in a.labels} & {"sports", "economy", "energy"}, "inner-node labels occur"


def test_true_path_probabilities_are_the_label_frequencies():
    # per node of the predicted paths, the mean of the true probabilities equals the
    # frequency of labels below the node (a law-of-large-numbers check, 5 sigma)
    s = hierarchical_stream(40000, seed=2)
    sums, hits, counts = {}, {}, {}
    for tp, y in zip(s.true_paths, s.labels):
        below = R.ancestors(s.taxonomy, y)
        for node, p in tp.items():
            sums[node] = sums.get(node, 0.0) + p
            hits[node] = hits.get(node, 0) + (node in below)
            counts[node] = counts.get(node, 0) + 1
    for node, n in counts.items():
        p = sums[node] / n
        assert abs(hits[node] / n - p) < 5 * math.sqrt(p * (1 - p) / n) + 1e-9, node


def test_raw_scores_are_over_confident_at_the_leaf():
    s = hierarchical_stream(20000, seed=3)
    g = np.array([max(x.values()) for x in s.leaf_scores])
    truth = np.array([list(tp.values())[-1] for tp in s.true_paths])
    assert g.mean() > truth.mean() + 0.1


@pytest.mark.parametrize(
    "kwargs, name",
    [({"n": -1}, "n"), ({"n": 3, "sharpness": 0.0}, "sharpness"), ({"n": 3, "spread": float("inf")}, "spread"),
     ({"n": 3, "inner_logit": float("nan")}, "inner_logit")],
)
def test_bad_parameters_are_refused(kwargs, name):
    with pytest.raises(ValueError, match=f"'{name}'"):
        hierarchical_stream(**kwargs)
