"""Old names of the batch functions, kept for one release (private).

The batch fits are named ``fit_<method>`` (``fit_irp``, ``fit_fir``, ``fit_scir``,
``fit_temperature``, ...); the names they had before, ``<method>_fit``, still work for
one release through :func:`deprecated_alias`, which warns on every call.

Examples
--------
>>> import warnings
>>> def fit_demo(x):
...     "The demo fit."
...     return 2 * x
>>> demo_fit = deprecated_alias(fit_demo, "demo_fit")
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     demo_fit(3), caught[0].category.__name__, str(caught[0].message)
(6, 'DeprecationWarning', 'demo_fit is deprecated and will be removed in the next release; use fit_demo instead.')
"""

from __future__ import annotations

import functools
import warnings

__all__ = ["deprecated_alias"]


def deprecated_alias(func, old_name: str):
    """``func`` under its former name ``old_name``: the same call, after a
    DeprecationWarning that names the new function."""
    message = (
        f"{old_name} is deprecated and will be removed in the next release; "
        f"use {func.__name__} instead."
    )

    @functools.wraps(func)
    def alias(*args, **kwargs):
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return func(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old_name
    # no copy of the docstring: its examples are the new function's, run once
    alias.__doc__ = f"Deprecated alias of :func:`{func.__module__}.{func.__name__}`."
    return alias
