"""The tenant site with its model admins registered (importing `admins` registers them)."""

from . import admins, exports  # noqa: F401
from .site import site

__all__ = ["site"]
