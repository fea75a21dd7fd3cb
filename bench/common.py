"""Shared start-up of the benchmark scripts."""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def setup_django() -> None:
    """Configure Django the way manage.py does, from the repository root, never touching the hub."""
    sys.path.insert(0, str(REPO_ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragsite.settings.local")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    # DEBUG would log every SQL statement in the connection: not what production pays.
    os.environ.setdefault("DEBUG", "false")
    import django

    django.setup()
