"""The tenant site with its model admins registered (importing `admins` registers them)."""

from console import members, simulation, tuning  # noqa: F401  (members; ranking weights; dry run)

from . import admins, corpus, exports  # noqa: F401  (corpus: cases and documents)
from .site import site

__all__ = ["site"]
