"""``CORP`` against the batch oracle of ``tests/references_corp.py``, its identities, the
published values on the Niamey 2016 data, and the Niamey loader.

The pattern of river's ``stats/test_stats.py``: feed a random stream one event at a
time and compare the streaming decomposition with a from-scratch batch decomposition of
the prefix (every prefix, many seeds, ties, weights, edge forecasts 0 and 1, all-0 and
all-1 labels); revert events in random order and compare with the events left; wrap in
``river.utils.Rolling`` and compare with the window's tail. ``_check()`` (the store's
invariants, the shadow of the blocks, the incremental sum against a fresh one) runs
after every mutation.

Published values: Dimitriadis, Gneiting and Jordan (2021), PNAS 118(8), e2016191118,
via the reliabilitydiag package documentation (``shared/data/README.md``).
"""

from __future__ import annotations

import copy
import csv
import json
import math
import pathlib
import pickle
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from river import utils
from sklearn.isotonic import IsotonicRegression

from streamcal.core import pav
from streamcal.datasets import NIAMEY_FORECASTS, niamey_precipitation
from streamcal.metrics import CORP, LogLoss
from streamcal.metrics.base import StreamingMetric

try:  # tests/ as a package (tests/__init__.py) or as a plain directory on sys.path
    from tests import references
    from tests import references_corp as ref
except ImportError:  # pragma: no cover
    import references
    import references_corp as ref

SCORES = ("brier", "log")
SHARED_CSV = (
    pathlib.Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "niamey_precip_2016.csv"
)


# ---------------------------------------------------------------------- streams


def make_stream(rng, n, forecasts="uniform", weights="unit", labels="random"):
    """A list of ``(y, p, w)`` events (the argument order of ``update``)."""
    out = []
    for _ in range(n):
        if forecasts == "uniform":
            p = rng.random()
        elif forecasts == "grid":  # ties
            p = round(rng.random(), 2)
        elif forecasts == "coarse":  # heavy ties: few cells, many merges and splits
            p = round(rng.random(), 1)
        elif forecasts == "edges":  # exactly 0 and 1, often
            p = rng.choice([0.0, 1.0, 0.0, 1.0, round(rng.random(), 1), rng.random()])
        else:
            raise ValueError(forecasts)
        if labels == "random":  # miscalibrated and not monotone: many PAV blocks
            q = 0.2 + 0.6 * p + 0.25 * math.sin(12.0 * p)
            y = int(rng.random() < min(max(q, 0.0), 1.0))
        elif labels == "all0":
            y = 0
        else:
            y = 1
        if weights == "unit":
            w = 1.0
        elif weights == "int":
            w = rng.choice([1, 2, 3])
        else:  # non-dyadic floats and zeros
            w = rng.choice([1.0, 0.5, 0.7, 2.25, 0.1, 0.0])
        out.append((y, p, w))
    return out


def oracle(events, score, eps=1e-15):
    if not events:
        return ref.Decomposition(0.0, 0.0, 0.0, 0.0)
    ys, ps, ws = zip(*events)
    return ref.corp_decomposition(ps, ys, ws, score, eps)


def values(m):
    return ref.Decomposition(m.get(), m.mcb, m.dsc, m.unc)


def assert_matches(m, want, where="", rtol=1e-9, atol=1e-12):
    got = values(m)
    for name, g, e in zip(want._fields, got, want):
        assert abs(g - e) <= atol + rtol * abs(e), (
            f"{where}: {name} = {g!r}, oracle {e!r}"
        )


def assert_identities(m, tol=1e-12):
    s, mcb, dsc, unc = values(m)
    assert abs(s - (mcb - dsc + unc)) <= tol, (s, mcb, dsc, unc)
    assert mcb >= -tol and dsc >= -tol, (mcb, dsc)


# ---------------------------------------------------------------------- the oracle itself


def test_oracle_recalibration_matches_sklearn():
    """The oracle's PAV recalibration is scikit-learn's IsotonicRegression (ties pooled,
    weights honoured)."""
    rng = random.Random(0)
    for forecasts in ("uniform", "grid", "coarse", "edges"):
        events = [e for e in make_stream(rng, 200, forecasts, "float") if e[2] > 0]
        ys, ps, ws = map(np.array, zip(*events))
        want = (
            IsotonicRegression(y_min=0.0, y_max=1.0)
            .fit(ps, ys, sample_weight=ws)
            .predict(ps)
        )
        got = ref.recalibrated(ps.tolist(), ys.tolist(), ws.tolist())
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_oracle_by_hand():
    # forecasts 0.1, 0.3, 0.5, 0.7, 0.9; outcomes 0, 1, 0, 1, 1: x_hat = 0, .5, .5, 1, 1
    d = ref.corp_decomposition([0.1, 0.3, 0.5, 0.7, 0.9], [0, 1, 0, 1, 1])
    assert d == pytest.approx((0.17, 0.07, 0.14, 0.24), abs=1e-15)
    d = ref.corp_decomposition([0.1, 0.3, 0.5, 0.7, 0.9], [0, 1, 0, 1, 1], score="log")
    s = (
        -(math.log(0.9) + math.log(0.3) + math.log(0.5) + math.log(0.7) + math.log(0.9))
        / 5
    )
    unc = -(0.6 * math.log(0.6) + 0.4 * math.log(0.4))
    assert d == pytest.approx(
        (s, s - 2 * math.log(2) / 5, unc - 2 * math.log(2) / 5, unc), abs=1e-15
    )


# ---------------------------------------------------------------------- against the oracle


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("forecasts", ["uniform", "grid", "coarse", "edges"])
@pytest.mark.parametrize("weights", ["unit", "int", "float"])
def test_every_prefix_matches_oracle(score, forecasts, weights):
    for seed in range(2):
        rng = random.Random(hash((score, forecasts, weights, seed)) & 0xFFFF)
        events = make_stream(rng, 90, forecasts, weights)
        m = CORP(score=score)
        for t, (y, p, w) in enumerate(events, 1):
            m.update(y, p, w)
            m._check()
            assert_identities(m)
            assert_matches(m, oracle(events[:t], score), f"seed {seed}, prefix {t}")


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("labels", ["all0", "all1"])
@pytest.mark.parametrize("forecasts", ["uniform", "edges"])
def test_one_label_only(score, labels, forecasts):
    """All outcomes equal: one block at the outcome, UNC = DSC = 0, MCB = S."""
    rng = random.Random(7)
    events = make_stream(rng, 60, forecasts, "float", labels)
    m = CORP(score=score)
    for t, (y, p, w) in enumerate(events, 1):
        m.update(y, p, w)
        m._check()
        assert_matches(m, oracle(events[:t], score), f"prefix {t}")
        if m.n_events:
            assert m.unc == 0.0 and m.dsc == 0.0 and m.mcb == m.get()
            assert [b.value for b in m.recalibration] == [float(labels == "all1")]


def test_recalibration_blocks_match_oracle():
    rng = random.Random(3)
    events = make_stream(rng, 150, "grid", "float")
    m = CORP()
    for t, (y, p, w) in enumerate(events, 1):
        m.update(y, p, w)
        if t % 10 == 0:
            ys, ps, ws = zip(*events[:t])
            want = references.isotonic_blocks(ps, ys, ws)
            got = m.recalibration
            assert [(b.score_min, b.score_max, b.n_events, b.n_cells) for b in got] == [
                (e[0], e[1], e[4], e[5]) for e in want
            ]
            np.testing.assert_allclose(
                [b.value for b in got], [e[2] for e in want], rtol=1e-12
            )
            np.testing.assert_allclose(
                [b.weight for b in got], [e[3] for e in want], rtol=1e-12
            )


def test_log_clips_the_raw_forecast_only():
    """A forecast of exactly 0 or 1 with the wrong outcome costs -log(eps), as in LogLoss;
    the recalibrated forecast of a run of equal outcomes is 0 or 1 and costs nothing."""
    for eps in (1e-15, 1e-6):
        m, ll = CORP(score="log", eps=eps), LogLoss(eps=eps)
        for y, p in [(1, 0.0), (0, 1.0), (0, 0.0), (1, 1.0), (1, 0.5)]:
            m.update(y, p)
            ll.update(y, p)
        assert m.get() == pytest.approx(ll.get(), rel=1e-15)
        # two confident misses, two confident hits (clipped too: -log(1 - eps) each), 0.5
        want = (-2 * math.log(eps) - 2 * math.log1p(-eps) + math.log(2)) / 5
        assert m.get() == pytest.approx(want, rel=1e-12)
        # cells 0: 1/2, 0.5: 1, 1: 1/2 -> blocks {0}: 1/2 and {0.5, 1}: 2/3
        assert [b.value for b in m.recalibration] == [0.5, 2 / 3]
        events = [
            (y, p, 1.0) for y, p in [(1, 0.0), (0, 1.0), (0, 0.0), (1, 1.0), (1, 0.5)]
        ]
        assert_matches(m, oracle(events, "log", eps), "clipping")
    m = CORP(score="log")
    for y, p in [(0, 0.0), (0, 0.2), (1, 0.8), (1, 1.0)]:
        m.update(y, p)
    assert m.unc == pytest.approx(math.log(2), rel=1e-15)
    # perfectly separated: S(x_hat) = 0
    assert m.dsc == pytest.approx(math.log(2), rel=1e-15)
    assert m.mcb == pytest.approx(-(math.log(0.8) + math.log(0.8)) / 4, rel=1e-12)


# ---------------------------------------------------------------------- revert and windows


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("forecasts", ["uniform", "coarse", "edges"])
def test_revert_any_order_matches_oracle(score, forecasts):
    for seed in range(3):
        rng = random.Random(100 + seed)
        events = make_stream(rng, 80, forecasts, "float")
        m = CORP(score=score)
        for y, p, w in events:
            m.update(y, p, w)
        alive = list(range(len(events)))
        rng.shuffle(alive)
        while alive:
            y, p, w = events[alive.pop()]
            m.revert(y, p, w)
            m._check()
            assert_identities(m)
            assert_matches(
                m,
                oracle([events[i] for i in sorted(alive)], score),
                f"{len(alive)} left",
            )
        assert values(m) == (0.0, 0.0, 0.0, 0.0) and m.recalibration == ()
        assert m.to_dict()["state"] == CORP(score=score).to_dict()["state"]


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("window", [1, 5, 30])
def test_rolling_matches_oracle_on_the_tail(score, window):
    rng = random.Random(window)
    events = make_stream(rng, 150, "grid", "float")
    rolling = utils.Rolling(CORP, window_size=window, score=score)
    for t, (y, p, w) in enumerate(events, 1):
        rolling.update(y, p, w)
        rolling.obj._check()
        assert_identities(rolling.obj)
        assert_matches(
            rolling.obj, oracle(events[max(0, t - window) : t], score), f"t={t}"
        )
    assert rolling.get() == rolling.obj.get()


def test_revert_of_an_event_not_held_is_refused():
    m = CORP()
    with pytest.raises(
        ValueError,
        match="'y_pred' argument of CORP.revert must be the forecast of an event held",
    ):
        m.revert(1, 0.3)
    for y, p in [(0, 0.2), (1, 0.6), (1, 0.9)]:
        m.update(y, p)
    before = pickle.dumps(m.__getstate__())
    for p in (0.0, 0.3, 0.95, 1.0):
        with pytest.raises(ValueError, match="Got"):
            m.revert(1, p)
    assert pickle.dumps(m.__getstate__()) == before
    m._check()


def _fed_then_first_reverted(m, events):
    for y, p, w in events:
        m.update(y, p, w)
    m.revert(*events[0])
    return m


def test_revert_with_weights_spanning_more_than_2_to_the_20():
    """Removing an event that outweighs the rest of its forecast value by more than 2**20
    makes the store drop the cell; the metric re-adds the rest as shares of what is
    left: exact when the sums are (dyadic weights and scores), approximate otherwise."""
    events = [
        (1, 0.5, 2.0**40),
        (0, 0.5, 1.0),
        (0, 0.5, 0.5),
        (1, 0.25, 1.0),
        (0, 0.75, 1.0),
        (1, 0.875, 1.0),
    ]
    m = _fed_then_first_reverted(CORP(), events)
    m._check()
    assert_matches(m, oracle(events[1:], "brier"), "after the heavy revert", rtol=1e-15)
    assert [(b.score_min, b.score_max, b.n_events) for b in m.recalibration] == [
        (0.25, 0.75, 4),
        (0.875, 0.875, 1),
    ]
    for e in events[1:]:
        m.revert(*e)
        m._check()
    assert values(m) == (0.0, 0.0, 0.0, 0.0)
    # non-dyadic: the light events fall below the heavy one's rounding; values stay
    # finite, the store consistent, and reverting everything empties the metric
    events = [
        (1, 0.5, 1e20),
        (0, 0.5, 0.3),
        (0, 0.5, 0.7),
        (1, 0.2, 1.0),
        (0, 0.8, 1.0),
    ]
    m = _fed_then_first_reverted(CORP(score="log"), events)
    m._store._check()
    assert all(math.isfinite(v) for v in values(m))
    assert sum(b.n_events for b in m.recalibration) == m.n_events == 4
    for e in events[1:]:
        m.revert(*e)
        m._store._check()
    assert values(m) == (0.0, 0.0, 0.0, 0.0) and m.recalibration == ()


def test_fit_sum_with_the_store_on_small_leaves():
    """A store with 4-cell leaves splits, merges and rebalances its tree every few
    events; the fit sum derived from its blocks must follow."""
    rng = random.Random(11)
    for score in SCORES:
        m = CORP(score=score)
        held = []
        for step in range(400):
            if not held:
                m._store = pav.IsotonicBlockStore(leaf_capacity=4)  # (re)started empty
            if held and rng.random() < 0.4:
                e = held.pop(rng.randrange(len(held)))
                m.revert(*e)
            else:
                e = make_stream(
                    rng, 1, rng.choice(["coarse", "grid", "edges"]), "float"
                )[0]
                m.update(*e)
                if e[2] > 0:
                    held.append(e)
            m._check()
            if step % 25 == 0:
                assert_matches(m, oracle(held, score), f"step {step}")


event = st.tuples(
    st.integers(0, 1),
    st.one_of(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 1.0]), st.floats(0.0, 1.0)),
    st.sampled_from([1.0, 0.5, 0.7, 3.0, 0.0]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(event, max_size=40),
    st.sampled_from(SCORES),
    st.randoms(use_true_random=False),
)
def test_identities_and_signs_hold_as_events_come_and_go(events, score, rnd):
    """S = MCB - DSC + UNC to 1e-12, MCB >= 0 and DSC >= 0, after every update and every
    revert (in random order); and the values are the oracle's."""
    m = CORP(score=score)
    for y, p, w in events:
        m.update(y, p, w)
        m._check()
        assert_identities(m)
    assert_matches(m, oracle(events, score), "all events")
    order = list(range(len(events)))
    rnd.shuffle(order)
    for i in order:
        m.revert(*events[i])
        m._check()
        assert_identities(m)
    assert values(m) == (0.0, 0.0, 0.0, 0.0)


# ---------------------------------------------------------------------- state


@pytest.mark.parametrize("score", SCORES)
def test_snapshot_mid_stream_continues_identically(score):
    rng = random.Random(5)
    events = make_stream(rng, 120, "grid", "float")
    m = CORP(score=score)
    for e in events[:80]:
        m.update(*e)
    for restored in (
        CORP.from_dict(json.loads(json.dumps(m.to_dict()))),
        StreamingMetric.from_dict(json.loads(json.dumps(m.to_dict()))),
        pickle.loads(pickle.dumps(m)),
    ):
        restored._check()
        assert restored.recalibration == m.recalibration
        a, b = copy.deepcopy(m), restored
        for e in events[80:]:
            a.update(*e)
            b.update(*e)
            assert values(a) == values(b)
        for e in events[:40]:
            a.revert(*e)
            b.revert(*e)
            assert values(a) == values(b)
        b._check()


def test_parameters_are_validated():
    with pytest.raises(
        ValueError, match="'score' parameter of CORP must be a str among"
    ):
        CORP(score="crps")
    with pytest.raises(ValueError, match="'eps'"):
        CORP(score="log", eps=0.0)
    with pytest.raises(TypeError, match="'eps'"):
        CORP(eps="small")
    assert CORP()._get_params() == {"score": "brier", "eps": 1e-15}


def test_repr_and_empty_values():
    m = CORP()
    assert (
        values(m) == (0.0, 0.0, 0.0, 0.0) and m.recalibration == () and m.n_events == 0
    )
    m.update(1, 0.5, 0.0)
    assert values(m) == (0.0, 0.0, 0.0, 0.0) and m.n_events == 0
    m.update(1, 0.5)
    assert repr(m) == "CORP: 0.250000 (MCB 0.250000, DSC 0.000000, UNC 0.000000)"
    assert m.bigger_is_better is False


# ---------------------------------------------------------------------- Niamey data


def test_niamey_loader():
    data = niamey_precipitation()
    assert list(data) == ["date", *NIAMEY_FORECASTS, "obs"]
    assert all(len(v) == 92 for v in data.values())
    assert data["date"].dtype == np.dtype("datetime64[D]")
    assert (
        str(data["date"][0]) == "2016-07-01" and str(data["date"][-1]) == "2016-09-30"
    )
    assert (np.diff(data["date"]) == np.timedelta64(1, "D")).all()
    assert data["obs"].dtype == np.int64 and set(data["obs"].tolist()) == {0, 1}
    for name in NIAMEY_FORECASTS:
        assert data[name].dtype == np.float64
        assert ((data[name] >= 0.0) & (data[name] <= 1.0)).all()
    ens = data["ENS"] * 52  # raw ensemble: fractions of 52 members
    assert np.allclose(ens, np.round(ens), atol=1e-9)


@pytest.mark.skipif(
    not SHARED_CSV.exists(), reason="the shared reference copy is not present"
)
def test_niamey_loader_reads_the_reference_file_exactly():
    with SHARED_CSV.open(newline="") as f:
        rows = list(csv.DictReader(f))
    data = niamey_precipitation()
    assert [str(d) for d in data["date"]] == [r["date"] for r in rows]
    for name in NIAMEY_FORECASTS:
        assert data[name].tolist() == [float(r[name]) for r in rows]
    assert data["obs"].tolist() == [int(r["obs"]) for r in rows]


@pytest.mark.parametrize("name", NIAMEY_FORECASTS)
def test_niamey_published_brier_decomposition(name):
    """Dimitriadis, Gneiting and Jordan (2021): S, MCB, DSC, UNC of each forecast to
    the published 4 decimals, streaming in date order (and, identically, shuffled)."""
    data = niamey_precipitation()
    y, p = data["obs"].tolist(), data[name].tolist()
    m = CORP()
    for yi, pi in zip(y, p):
        m.update(yi, pi)
    m._check()
    got = tuple(round(v, 4) for v in values(m))
    assert got == pytest.approx(ref.NIAMEY_PUBLISHED[name], abs=1e-12)
    assert_matches(m, ref.corp_decomposition(p, y), name)
    assert_identities(m)
    order = random.Random(0).sample(range(92), 92)
    shuffled = CORP()
    for i in order:
        shuffled.update(y[i], p[i])
    assert_matches(
        shuffled, ref.Decomposition(*values(m)), f"{name} shuffled", rtol=1e-12
    )


def test_niamey_log_decomposition_matches_oracle():
    data = niamey_precipitation()
    for name in NIAMEY_FORECASTS:
        m = CORP(score="log")
        for yi, pi in zip(data["obs"].tolist(), data[name].tolist()):
            m.update(yi, pi)
        assert_matches(
            m, ref.corp_decomposition(data[name], data["obs"], score="log"), name
        )
        assert_identities(m)


# ---------------------------------------------------------------- issue 13: extreme weights


def _log_block_decimal(W: float, S: float) -> float:
    """A block's fitted log loss ``-(S log v + (W - S) log(1 - v))``, ``v = S / W``, in
    80-digit decimals (no underflow), rounded once."""
    import decimal

    with decimal.localcontext() as ctx:
        ctx.prec = 80
        W_, S_ = decimal.Decimal(W), decimal.Decimal(S)
        v = S_ / W_
        return float(-(S_ * v.ln() + (W_ - S_) * (1 - v).ln()))


@pytest.mark.parametrize("small, big", [(1e-200, 2e200), (5e-324, 1.0), (1e-300, 1e10), (3e-160, 7e150)])
def test_corp_log_block_with_an_underflowing_mean_has_no_domain_error(small, big):
    # issue 13: CORP(score="log") raised "math domain error" when one block held weights
    # 1e-200 (label 1) and 2e200 (label 0): its mean S / W underflowed to 0
    m = CORP(score="log")
    m.update(1, 0.5, small)
    m.update(0, 0.5, big)
    W, S = small + big, small
    fitted = _log_block_decimal(W, S) / W
    assert math.isclose(m.get() - m.mcb, fitted, rel_tol=1e-12, abs_tol=1e-300)
    assert math.isclose(m.unc - m.dsc, fitted, rel_tol=1e-12, abs_tol=1e-300)
    for v in (m.get(), m.mcb, m.dsc, m.unc):
        assert math.isfinite(v)


@pytest.mark.parametrize("score", SCORES)
def test_corp_refuses_weights_that_would_overflow_its_sums(score):
    # issue 13: CORP's sums overflowed to inf (then NaN components) after weights near
    # 1e308; now the weight rule of streamcal._validation refuses them, state unchanged
    m = CORP(score=score)
    big = 1e308 if score == "brier" else 5e306  # the log loss of an event is up to -log(eps)
    m.update(1, 0.7, 1.0)
    m.update(0, 0.2, big)
    m.update(1, 0.1, 3.0)  # pooled with the heavy event: S (W - S) overflowed the Brier fit
    assert all(math.isfinite(v) for v in (m.mcb, m.dsc)) and "Infinity" not in json.dumps(m.to_dict())
    before = json.dumps(m.to_dict())
    for w in (1e308, 1.7976931348623157e308):
        with pytest.raises(ValueError, match=r"The 'w' argument of CORP.update must .* small enough"):
            m.update(1, 0.9, w)
        with pytest.raises(ValueError, match=r"The 'w' argument of CORP.update_many .* at index 1"):
            m.update_many([0, 1, 1], [0.1, 0.9, 0.3], [1.0, w, 1.0])
        assert json.dumps(m.to_dict()) == before
    with pytest.raises(TypeError, match="y_pred"):  # the forecast is checked before the weight
        m.update(1, "0.9", 1e308)
    for v in (m.get(), m.mcb, m.dsc, m.unc):
        assert math.isfinite(v)
    m.update_many([1, 0], [0.9, 0.1], [1.0, 2.0])  # still learns
    expected = ref.corp_decomposition(
        [0.7, 0.2, 0.1, 0.9, 0.1], [1, 0, 1, 1, 0], [1.0, big, 3.0, 1.0, 2.0], score=score
    )
    assert math.isclose(m.get(), expected.S, rel_tol=1e-12)
    assert math.isclose(m.mcb, expected.MCB, rel_tol=1e-9) and math.isclose(m.dsc, expected.DSC, rel_tol=1e-9, abs_tol=1e-300)
