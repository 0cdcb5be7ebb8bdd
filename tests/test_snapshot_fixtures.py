"""Snapshots written by earlier versions restore, and then behave exactly as the object
that wrote them did (see ``tests/snapshot_fixtures.py``, which wrote the fixtures)."""

import json
import pathlib

import pytest

from tests.snapshot_fixtures import outputs_match, restored_continues

FIXTURES = sorted((pathlib.Path(__file__).parent / "fixtures").glob("snapshots-format*.json"))


def _entries():
    for path in FIXTURES:
        for entry in json.loads(path.read_text()):
            snap = entry["snapshot"]
            yield pytest.param(entry, id=f"{path.stem}-{snap['class']}-{entry['seed']}")


def test_fixtures_exist():
    assert FIXTURES, "no snapshot fixtures found"


@pytest.mark.parametrize("entry", list(_entries()))
def test_old_snapshot_restores_and_continues_as_it_did(entry):
    assert restored_continues(entry)


def test_outputs_match_is_exact_where_asked():
    assert outputs_match([[0, 0.1], {"a": 0.2}], [[0, 0.1], {"a": 0.2}])
    assert not outputs_match([[0, 0.1 + 1e-17]], [[0, 0.1000000000000001]])
    assert outputs_match([[0, 0.1000000000000001]], [[0, 0.1]], rtol=1e-12)
    assert not outputs_match([[0, 0.1000001]], [[0, 0.1]], rtol=1e-12)
    assert not outputs_match([[1, 0.1]], [[0, 0.1]], rtol=1e-12)  # ints: exact
    assert not outputs_match([0.1, 0.2], [0.1], rtol=1e-12)


def test_family_base_restores_classes_no_one_imported_yet(tmp_path):
    # the packages import their classes on first use: a fresh process that restores a
    # snapshot through the family's base class must find classes not imported yet
    import subprocess
    import sys

    script = tmp_path / "restore.py"
    script.write_text(
        "import json, sys\n"
        "from streamcal.base import BinaryCalibrator, MulticlassCalibrator\n"
        "from streamcal.metrics.base import StreamingMetric\n"
        "from streamcal.monitor.base import BaseMonitor\n"
        "from streamcal.calibrators.path import PathCalibrator\n"
        "bases = {'binary': BinaryCalibrator, 'multiclass': MulticlassCalibrator,\n"
        "         'metric': StreamingMetric, 'monitor': BaseMonitor, 'path': PathCalibrator}\n"
        "for path in sys.argv[1:]:\n"
        "    for e in json.load(open(path)):\n"
        "        obj = bases[e['family']].from_dict(e['snapshot'])\n"
        "        assert type(obj).__name__ == e['snapshot']['class']\n"
        "print('ok')\n"
    )
    out = subprocess.run(
        [sys.executable, str(script), *map(str, FIXTURES)],
        capture_output=True, text=True, check=False,
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
