"""Start-up (issue 12, item 6): a replay imports only what it uses.

The costs are measured by hand (benchmarks/README.md); these tests guard the causes,
in a fresh interpreter each: the modules a small replay must not import, and the river
interface the metrics keep without importing river's metrics.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest


def _run(code: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# imported by river.metrics (scipy.stats), drawing, or the fast reader: none of them is
# needed to replay a small CSV log without --out
HEAVY = ("scipy.stats", "river.metrics", "matplotlib", "pyarrow", "pandas")


def test_a_small_replay_imports_no_heavy_module(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("score,label\n" + "".join(f"{i / 100},{i % 2}\n" for i in range(100)))
    found = _run(
        f"""
        import contextlib, io, json, sys
        from streamcal.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                main(["replay", {str(log)!r}, "--no-progress"])
            except SystemExit as exc:
                assert not exc.code, exc.code
        print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in
                                ("scipy", "river", "matplotlib", "pyarrow", "pandas"))))
        """
    )
    heavy = [m for m in found if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert heavy == []


@pytest.mark.parametrize("checkpoint", [False, True])
def test_only_a_replay_with_checkpoints_imports_hashlib(tmp_path, checkpoint):
    """The rows' fingerprint (hashlib, which loads OpenSSL: about 8 ms of CPU) is made
    only for a checkpoint (replay-t1)."""
    log = tmp_path / "log.csv"
    log.write_text("score,label\n" + "".join(f"{i / 100},{i % 2}\n" for i in range(100)))
    extra = ["--checkpoint", str(tmp_path / "state.json")] if checkpoint else []
    found = _run(
        f"""
        import contextlib, io, json, sys
        from streamcal.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                main(["replay", {str(log)!r}, "--no-progress", "--out", {str(tmp_path / "out")!r},
                      *{extra!r}])
            except SystemExit as exc:
                assert not exc.code, exc.code
        print(json.dumps("hashlib" in sys.modules))
        """
    )
    assert found is checkpoint
    assert (tmp_path / "state.json").exists() is checkpoint


def test_importing_streamcal_imports_no_calibrator():
    found = _run(
        """
        import json, sys
        import streamcal
        print(json.dumps([m for m in sys.modules if m.startswith("streamcal.")]))
        """
    )
    assert not [m for m in found if m.startswith(("streamcal.calibrators.", "streamcal.core."))]


@pytest.mark.parametrize("river_first", [False, True])
def test_metrics_are_river_metrics_whichever_is_imported_first(river_first):
    """StreamingMetric registers as a virtual subclass of river's Metric when
    river.metrics is imported, before or after streamcal's metrics."""
    first = "import river.metrics" if river_first else "pass"
    result = _run(
        f"""
        import json
        {first}
        from streamcal.metrics import Brier, ECE, ConfidenceECE
        import river.metrics.base as rb
        from river import utils
        m = utils.Rolling(Brier(), window_size=2)
        for y, p in [(1, 0.9), (0, 0.2), (1, 0.4)]:
            m.update(y, p)
        print(json.dumps([isinstance(Brier(), rb.Metric), isinstance(ECE(), rb.Metric),
                          issubclass(Brier, rb.Metric), m.get(),
                          isinstance(ECE(), rb.ClassificationMetric),
                          isinstance(ConfidenceECE(), rb.ClassificationMetric)]))
        """
    )
    assert result[:3] == [True, True, True]
    assert result[3] == pytest.approx((0.2**2 + 0.6**2) / 2, abs=1e-15)
    assert result[4:] == [True, True]  # river's classification metrics too


def test_metric_comparisons_follow_river():
    from streamcal.metrics import Brier, ROCAUC

    a, b = Brier(), Brier()
    a.update(1, 0.9)
    b.update(1, 0.6)
    assert a.is_better_than(b) and a > b and not b > a
    auc_a, auc_b = ROCAUC(), ROCAUC()
    for y, p in [(1, 0.9), (0, 0.1)]:
        auc_a.update(y, p)
    for y, p in [(1, 0.1), (0, 0.9)]:
        auc_b.update(y, p)
    assert auc_a.is_better_than(auc_b)
    assert a.works_with_weights and str(a) == repr(a)
