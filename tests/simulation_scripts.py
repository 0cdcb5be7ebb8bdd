"""Loading the simulation scripts of ``simulations/`` by their path (tests only).

The scripts are not a package; each test file loads the ones it checks with
:func:`load`, under the module name ``simulation_<name>``.
"""

from __future__ import annotations

import importlib.util
import pathlib

SIMULATIONS = pathlib.Path(__file__).resolve().parent.parent / "simulations"


def load(name: str):
    """The script ``simulations/<name>.py``, executed as a fresh module (its
    ``__main__`` block does not run)."""
    spec = importlib.util.spec_from_file_location(
        f"simulation_{name}", SIMULATIONS / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
