"""``streamcal demo`` and ``streamcal simulate``."""

from __future__ import annotations

import sys
import time

from streamcal.cli._common import EXIT_FAILED, UsageError


def _prequential(scores, labels, window_size: int | None):
    """Predict each event with the current calibrator, then learn it; return the
    predictions, the calibrator and the elapsed seconds of the loop."""
    import numpy as np

    from streamcal import OnlineIsotonic

    cal = OnlineIsotonic(window_size=window_size)
    predict, learn = cal.predict_one, cal.learn_one
    out = [0.0] * len(scores)
    start = time.perf_counter()
    for i, (s, y) in enumerate(zip(scores.tolist(), labels.tolist())):
        out[i] = predict(s)
        learn(s, y)
    elapsed = time.perf_counter() - start
    return np.array(out), cal, elapsed


def _demo(args) -> int:
    from streamcal.datasets import miscalibrated_rain_forecasts
    from streamcal.metrics import brier_score, expected_calibration_error

    n, seed, window = args.n, args.seed, args.window
    scores, labels = miscalibrated_rain_forecasts(n=n, seed=seed)
    calibrated, cal, elapsed = _prequential(scores, labels, window)

    name = (
        "OnlineIsotonic()"
        if window is None
        else f"OnlineIsotonic(window_size={window})"
    )
    print(
        f"streamcal demo: {name} calibrating prequentially (predict_one, then learn_one)"
    )
    print(
        f"data: miscalibrated_rain_forecasts(n={n}, seed={seed}): {n:,} days of simulated "
        f"seasonal rain ({labels.mean():.1%} wet), forecasts over-confident "
        "(logit = 2 x true logit + 0.5 + noise)"
    )
    print()
    print(f"{'':<22}{' Brier score ':-^22}   {' ECE (10 bins) ':-^22}")
    print(f"{'':<22}{'raw':>9}{'calibrated':>13}   {'raw':>9}{'calibrated':>13}")
    half = n // 2
    for label, part in (
        (f"whole stream ({n:,})", slice(None)),
        (f"second half ({n - half:,})", slice(half, None)),
    ):
        y = labels[part]
        b_raw, b_cal = brier_score(y, scores[part]), brier_score(y, calibrated[part])
        e_raw = expected_calibration_error(y, scores[part], n_bins=10)
        e_cal = expected_calibration_error(y, calibrated[part], n_bins=10)
        print(f"{label:<22}{b_raw:>9.4f}{b_cal:>13.4f}   {e_raw:>9.4f}{e_cal:>13.4f}")
    print()
    print(f"PAV blocks at the end: {len(cal.blocks)}")
    rate = n / elapsed if elapsed > 0 else float("inf")
    print(
        f"throughput: {rate:,.0f} events/s (predict_one + learn_one, {elapsed:.2f} s)"
    )
    return 0


# ---------------------------------------------------------------------- replay

# ---------------------------------------------------------------------- simulate

# import name -> package name, for the packages of the simulations extra
_EXTRA_PACKAGES = {"sklearn": "scikit-learn", "matplotlib": "matplotlib"}


def _simulations_dir(given: str | None):
    from pathlib import Path

    if given is not None:
        path = Path(given)
        if not path.is_dir():
            raise UsageError("--dir", f"no such folder: {given!r}.")
        return path
    here = Path.cwd() / "simulations"
    if here.is_dir():
        return here
    import streamcal

    checkout = Path(streamcal.__file__).resolve().parent.parent
    if (checkout / "simulations").is_dir() and (checkout / "pyproject.toml").is_file():
        return checkout / "simulations"
    raise UsageError(
        None,
        "the simulations folder was not found (looked in ./simulations and "
        f"{checkout / 'simulations'}). The simulation scripts are part of the source "
        "repository, not of the installed package: run from a clone of the repository, "
        "or pass --dir.",
    )


def _simulation_scripts(folder) -> dict:
    """name -> (path, first line of its docstring) for each runnable script (a .py
    file not starting with ``_`` that has an ``if __name__ == "__main__"`` block)."""
    import ast
    out = {}
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith("_"):
            continue
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        if "__main__" not in source:
            continue
        doc = ast.get_docstring(tree) or ""
        out[path.stem] = (path, doc.strip().splitlines()[0] if doc.strip() else "")
    return out


def _print_simulations(folder, scripts: dict, file) -> None:
    print(f"simulations in {folder}:", file=file)
    width = max((len(n) for n in scripts), default=0)
    for name, (_, summary) in scripts.items():
        print(f"  {name:<{width}}  {summary}", file=file)
    if not scripts:
        print("  (none)", file=file)


def _simulate(args) -> int:
    folder = _simulations_dir(args.dir)
    scripts = _simulation_scripts(folder)
    if args.list:
        _print_simulations(folder, scripts, sys.stdout)
        return 0
    if args.name is None:
        args.subparser.print_usage(sys.stderr)
        print(
            f"{args.subparser.prog}: error: give the NAME of a simulation to run",
            file=sys.stderr,
        )
        _print_simulations(folder, scripts, sys.stderr)
        return 2
    name = args.name.removesuffix(".py")
    if name not in scripts:
        known = ", ".join(scripts) or "(none)"
        raise UsageError(
            "NAME",
            f"no simulation {args.name!r} in {str(folder)!r}. Available: {known}.",
        )
    import runpy

    path = scripts[name][0]
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [str(path), *args.args]
    sys.path.insert(0, str(path.parent))  # as `python simulations/NAME.py` does
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return EXIT_FAILED
    except ModuleNotFoundError as exc:  # an optional package the script needs
        package = _EXTRA_PACKAGES.get((exc.name or "").partition(".")[0], exc.name)
        print(
            f"{args.subparser.prog}: error: the simulation {name!r} needs {package}, "
            f'which is not installed: pip install "streamcal[simulations]" installs '
            "what the simulations need.",
            file=sys.stderr,
        )
        return EXIT_FAILED
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return 0

