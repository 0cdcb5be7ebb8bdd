"""The doctest examples of the compiled modules (pytest's --doctest-modules only reads
.py files, so the docstrings of the Cython kernels are run here)."""

import doctest
import importlib
import pathlib

import pytest

import streamcal

ROOT = pathlib.Path(streamcal.__file__).parent
MODULES = sorted(
    ".".join(("streamcal",) + p.relative_to(ROOT).with_suffix("").parts)
    for p in ROOT.rglob("*.pyx")
)


def test_every_kernel_is_built():
    assert MODULES, "no .pyx sources found"
    for name in MODULES:
        importlib.import_module(name)  # a kernel missing from the build fails here


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.failed == 0
