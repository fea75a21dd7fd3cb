"""The tenant site with its model admins registered (importing `admins` registers them)."""

from . import (
    admins,  # noqa: F401
    corpus,  # noqa: F401  (cases and documents)
)
from .site import site

__all__ = ["site"]
