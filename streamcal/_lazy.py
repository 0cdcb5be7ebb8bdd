"""Public names imported on first use (PEP 562): the one home of the lazy ``__getattr__``
and ``__dir__`` that the package ``__init__`` modules install, so that importing
``streamcal`` (or one of its subpackages) costs little more than importing numpy and
using one name imports only the module that defines it.

Examples
--------
>>> import types
>>> demo = types.ModuleType("demo")
>>> demo.__all__ = ["sqrt"]
>>> demo.__getattr__, demo.__dir__ = lazy_attributes(demo, {"sqrt": "math"})
>>> demo.sqrt(4.0)
2.0
>>> "sqrt" in dir(demo)
True
"""

from __future__ import annotations

import importlib

__all__ = ["lazy_attributes"]


def lazy_attributes(module, names: dict):
    """The ``__getattr__`` and ``__dir__`` of ``module`` (its globals, or the module
    itself) for ``names``, a map public name -> the module defining it; a name is
    imported on its first access and then kept in the module's globals, so later
    lookups do not call ``__getattr__``."""
    namespace = module if isinstance(module, dict) else vars(module)

    def __getattr__(name):
        source = names.get(name)
        if source is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source), name)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
