"""Pure algorithm cores on plain data (no river imports), each with a ``_check()`` of
its invariants."""

from streamcal.core.pav import BlockView, IsotonicBlockStore, pav_blocks

__all__ = ["BlockView", "IsotonicBlockStore", "pav_blocks"]
