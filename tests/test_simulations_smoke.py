"""Smoke tests of the simulation scripts in simulations/: each runs end to end on a
tiny problem (``--quick``) and writes its table and figures, so that a change to the
library that breaks a script is noticed. The numbers themselves are not checked here
(the scripts' full runs are recorded in simulations/README.md)."""

from __future__ import annotations

import pytest

from tests.simulation_scripts import SIMULATIONS, load

pytest.importorskip("matplotlib")

# script -> the files it writes
SCRIPTS = {
    "rain_calibeating": ("rain_calibeating.md", "rain_calibeating.png"),
    "rain_adversarial": (
        "rain_adversarial.md",
        "rain_adversarial.png",
        "rain_adversarial_reliability.png",
    ),
    "rain_drift": ("rain_drift.md", "rain_drift.png"),
    "rain_forgetting": ("rain_forgetting.md", "rain_forgetting.png"),
    "real_rain": ("real_rain.md", "real_rain.png", "real_rain_reliability.png"),
    "monitor_bias_shift": ("monitor_bias_shift.md", "monitor_bias_shift.png"),
    "irp_covtype": ("irp_covtype.md", "irp_covtype.png", "irp_covtype.csv"),
    "multiclass_stream": ("multiclass_stream.md", "multiclass_stream.png"),
    "path_calibration": ("path_calibration.md",),
    "multiclass_compare": ("multiclass_compare.md", "multiclass_compare.csv"),
    "priors": ("priors.md",),
    "priors_multiclass": ("priors_multiclass.md",),
    "segments": ("segments.md",),
}



@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_runs_quick_and_writes_its_outputs(name, tmp_path, capsys):
    module = load(name)
    assert (
        module.__doc__ and "Question" in module.__doc__ and "--quick" in module.__doc__
    )
    module.main(["--quick", "--out", str(tmp_path)])
    for filename in SCRIPTS[name]:
        path = tmp_path / filename
        assert path.is_file() and path.stat().st_size > 0, filename
        if filename.endswith(".png"):
            assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = (tmp_path / f"{name}.md").read_text()
    assert table.startswith("# ") and ("| --- |" in table or "| ---: |" in table)
    assert "nan" not in table.lower().replace("nans", "")
    # the table is also printed
    assert table.splitlines()[0] in capsys.readouterr().out


def test_every_script_with_a_quick_mode_is_smoke_tested():
    # a script declares --quick itself or takes the shared command line (_common.parse_args)
    quick = {
        p.stem
        for p in SIMULATIONS.glob("*.py")
        if not p.stem.startswith("_") and any(k in p.read_text() for k in ('"--quick"', "_common.parse_args("))
    }
    assert quick == set(SCRIPTS)
