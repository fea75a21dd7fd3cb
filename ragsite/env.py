"""The one `environ.Env` every settings module reads from.

Variables come from the process environment. A `.env` file in the project root is read only when
`DJANGO_READ_DOT_ENV_FILE=true`, so tests and CI never pick up a developer's local overrides.
"""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

if env.bool("DJANGO_READ_DOT_ENV_FILE", default=False):
    env.read_env(str(BASE_DIR / ".env"))


def env_path(name: str, default: Path) -> Path:
    """A filesystem path from the environment (relative paths are taken from the project root)."""
    return (BASE_DIR / env(name, default=str(default))).resolve()
