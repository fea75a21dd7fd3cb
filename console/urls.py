"""The tenant site with its model admins registered (importing `admins` registers them)."""

import console.members  # noqa: F401

from . import admins  # noqa: F401
from .site import site

__all__ = ["site"]
