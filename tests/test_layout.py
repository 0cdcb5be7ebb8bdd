"""The codebase's layout rules (issue 14): each module is small enough to read, and no
module reaches into another subpackage's private names.

A subpackage is ``streamcal.<name>`` (``core``, ``calibrators``, ``metrics``, ...); the
top-level private modules (``streamcal._validation``, ``streamcal._snapshot``,
``streamcal._merge``, ...) are the shared internals every subpackage may import.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "streamcal"
MAX_LINES = 900


def _modules(suffixes=(".py", ".pyx", ".pxd")):
    return sorted(p for p in PACKAGE.rglob("*") if p.suffix in suffixes)


def _dotted(path: pathlib.Path, root: pathlib.Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _owner(dotted: str) -> str:
    """The subpackage a module belongs to: ``streamcal.metrics._binned`` ->
    ``streamcal.metrics``; a top-level module is its own owner."""
    parts = dotted.split(".")
    return ".".join(parts[:2])


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(path: pathlib.Path, root: pathlib.Path = PACKAGE.parent) -> list[str]:
    """The imports of ``path`` that name a private module or a private name of another
    subpackage (``from streamcal.metrics._multiclass import _top`` in
    ``streamcal/monitor``); a top-level private module is shared and allowed."""
    me = _owner(_dotted(path, root))
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            targets = [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for target in targets:
            parts = target.split(".")
            if parts[0] != "streamcal" or len(parts) < 3:
                continue  # not ours, or a top-level (shared) module
            if _owner(target) == me:
                continue
            if any(_is_private(p) for p in parts[2:]):
                out.append(f"{path.relative_to(root)}:{node.lineno} imports {target}")
    return out


def test_no_module_reaches_into_another_subpackages_private_names():
    found = [hit for path in _modules((".py",)) for hit in private_imports(path)]
    assert not found, "\n".join(found)


#: modules still over the limit, each with the reason (strict: the mark must go when fixed)
OVER_LIMIT: dict[str, str] = {}  # none left (core/_pav.pyx: kernels in _pav_kernels.pxd)


def _cases():
    for path in _modules():
        name = str(path.relative_to(PACKAGE))
        marks = [pytest.mark.xfail(strict=True, reason=OVER_LIMIT[name])] if name in OVER_LIMIT else []
        yield pytest.param(path, id=name, marks=marks)


@pytest.mark.parametrize("path", list(_cases()))
def test_module_is_at_most_900_lines(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(PACKAGE.parent)} has {n} lines (at most {MAX_LINES})"


def test_the_rules_catch_what_they_forbid(tmp_path):
    # the checker itself, on a planted module of streamcal/monitor: a private module of
    # another subpackage is found, a shared top-level one and its own are allowed
    planted = tmp_path / "streamcal" / "monitor" / "_planted.py"
    planted.parent.mkdir(parents=True)
    planted.write_text(
        "from streamcal.metrics._multiclass import ECE\n"
        "from streamcal import _validation\n"
        "from streamcal.monitor._calibration import CalibrationMonitor\n"
        "import streamcal.core._pav\n"
    )
    hits = private_imports(planted, root=tmp_path)
    assert len(hits) == 2, hits
    assert "streamcal.metrics._multiclass.ECE" in hits[0] and "streamcal.core._pav" in hits[1]
