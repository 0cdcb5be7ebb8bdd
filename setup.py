"""Build the compiled kernels (Cython) of streamcal.

Every ``.pyx`` file under ``streamcal/`` becomes an extension module of the same dotted
name. The generated C is written into the build tree, never committed (see
``.gitignore``); the source distribution ships the ``.pyx`` and ``.pxd`` files only.

Set ``STREAMCAL_DEBUG_BUILD=1`` to compile with bounds and wraparound checks on, and
with Cython's line tracing off: every test must pass in both builds.
"""

import os
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("STREAMCAL_DEBUG_BUILD", "") not in ("", "0")

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}

root = Path(__file__).parent
extensions = [
    Extension(
        ".".join(p.relative_to(root).with_suffix("").parts),
        [str(p.relative_to(root))],
        extra_compile_args=["-O2"] if not DEBUG else ["-O0", "-g"],
    )
    for p in sorted((root / "streamcal").rglob("*.pyx"))
    # development only: STREAMCAL_BUILD_ONLY=_pav builds just the modules whose path
    # contains that text (so one broken kernel in progress does not stop the others)
    if os.environ.get("STREAMCAL_BUILD_ONLY", "") in str(p)
]

setup(ext_modules=cythonize(extensions, compiler_directives=directives, quiet=True))
