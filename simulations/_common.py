"""What the simulation scripts share: their command line, their prequential runs
through :func:`streamcal.replay`, a trailing mean, the writing of their tables, and the
loading of a sibling script.

Not a simulation (no ``__main__`` block; ``streamcal simulate --list`` skips names that
start with ``_``). A script imports it after putting its own folder on ``sys.path``
(``python simulations/NAME.py`` does that already; loading a script by its path, as the
tests do, does not)::

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _common
"""

from __future__ import annotations

import argparse
import importlib.util
import os

import numpy as np

import streamcal

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


def parse_args(argv, doc: str, quick: str, days: tuple | None = None, seeds: int | None = None):
    """The command line of a simulation: ``--out`` (the output directory, by default
    ``results/``), ``--quick`` (a smoke run; ``quick`` is its help) and, when given,
    ``--days`` (``days`` is ``(default, help, value under --quick)``) and ``--seeds``
    (``seeds`` is the default; one seed under ``--quick``).

    Examples
    --------
    >>> args = parse_args(["--quick"], "A run.", "smoke run", days=(900, "days per stream", 90), seeds=5)
    >>> args.days, args.seeds, args.quick
    (90, 1, True)
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--out", default=RESULTS, help="output directory")
    if days is not None:
        parser.add_argument("--days", type=int, default=days[0], help=days[1])
    if seeds is not None:
        parser.add_argument("--seeds", type=int, default=seeds, help="number of seeds")
    parser.add_argument("--quick", action="store_true", help=quick)
    args = parser.parse_args(argv)
    if args.quick:
        if days is not None:
            args.days = days[2]
        if seeds is not None:
            args.seeds = 1
    return args


def prequential(calibrators: dict, scores, labels, **replay_args) -> dict:
    """Prequential forecasts of every calibrator, run by :func:`streamcal.replay`.

    Each event's forecast is the calibrator's prediction from the labels known before
    it; then the calibrator learns the event (labels known at once), or learns it when
    its label arrives (``time`` / ``label_time`` columns given in ``replay_args``, with
    ``scores`` then a DataFrame or records holding those columns and ``labels`` None).

    Parameters
    ----------
    calibrators
        Dict name -> calibrator; each learns in place. ``None`` stands for the raw
        scores (its forecasts are the scores themselves).
    scores, labels
        The scores (probabilities in [0, 1]) and 0/1 labels, as sequences or arrays of
        equal length; or ``scores`` the log itself (a DataFrame or records with
        ``score`` and ``label`` columns) and ``labels`` None. Multiclass: ``scores`` an
        (n, K) array of probability vectors and ``labels`` the class indices 0 to
        K - 1; the calibrators are then multiclass ones, fed ``{k: scores[i, k]}``.
    **replay_args
        Passed to :func:`streamcal.replay` (``time``, ``label_time``, ...).

    Returns
    -------
    dict
        Name -> array of the forecasts, in the order of the events ((n, K) for
        multiclass scores: column k the probability of class k).

    Notes
    -----
    The events are handed to the replay as in-memory records (a list of dicts, or the
    DataFrame given): nothing is written to disk, and ``replay`` runs the calibrators a
    run of events at a time (``predict_learn_many``), which returns the floats of the
    per-event loop. No metric is computed by the replay (``metrics=()``): the scripts
    score the forecasts against their own truths (the true probability of rain, a
    binning of their choice).
    """
    columns = None
    if labels is None:
        events = scores
        raw = np.asarray(events["score"], dtype=np.float64)
    else:
        raw = np.asarray(scores, dtype=np.float64)
        labels = np.asarray(labels).astype(np.int64).tolist()
        if len(raw) != len(labels):
            raise ValueError(
                f"scores and labels differ in length: {len(raw)} and {len(labels)}."
            )
        if raw.ndim == 2:  # multiclass: one column per class, class k named k
            columns = {k: f"p{k}" for k in range(raw.shape[1])}
            events = [
                {**dict(zip(columns.values(), row)), "label": y}
                for row, y in zip(raw.tolist(), labels)
            ]
            replay_args = {"score": columns, **replay_args}
        else:
            events = [{"score": s, "label": y} for s, y in zip(raw.tolist(), labels)]
    cals = {name: cal for name, cal in calibrators.items() if cal is not None}
    kept = streamcal.replay(
        events,
        cals,
        metrics=(),
        include_raw=False,
        every=None,
        keep_forecasts=True,
        on_error="raise",
        **replay_args,
    ).forecasts
    n = len(raw)
    index = np.asarray(kept["index"], dtype=np.int64)
    if len(index) != n:
        raise ValueError(f"{n - len(index)} of the {n} events were never labelled.")
    out = {}
    for name, cal in calibrators.items():
        if cal is None:
            out[name] = raw
            continue
        out[name] = np.empty(raw.shape)
        forecasts = kept[name]
        if columns is not None:  # dicts class -> probability, every class present
            forecasts = [[q.get(k, 0.0) for k in columns] for q in forecasts]
        out[name][index] = forecasts  # the order the labels were scored in
    return out


def trailing_mean(x: np.ndarray, window: int) -> np.ndarray:
    """Mean of the last ``window`` values at each position (fewer at the start)."""
    c = np.concatenate(([0.0], np.cumsum(x)))
    i = np.arange(1, len(x) + 1)
    lo = np.maximum(0, i - window)
    return (c[i] - c[lo]) / (i - lo)


def write_table(table: str, out: str, name: str) -> str:
    """Print ``table`` and write it to ``out/name.md``; returns the path."""
    print(table)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"{name}.md")
    with open(path, "w") as f:
        f.write(table)
    return path


def sibling(name: str):
    """The script ``simulations/<name>.py`` as a module (its functions and constants)."""
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(HERE, f"{name}.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
