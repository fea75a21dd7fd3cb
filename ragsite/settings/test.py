"""pytest: the same real PostgreSQL+pgvector and Redis as development, with test-only speedups."""

from .base import *  # noqa: F403
from .base import BASE_DIR, CACHE_KEY_PREFIX, CACHES, LOGGING, REDIS_URL, env, env_path

DEBUG = False
SECRET_KEY = "django-insecure-lexrag-tests"  # noqa: S105  (tests only)
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Unit tests run tasks inline; tests about Celery start a real worker (tests/conftest.py).
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=True)
# Keep test keys apart from a development server sharing the same Redis.
if REDIS_URL:
    for _alias in CACHES:
        CACHES[_alias]["KEY_PREFIX"] = f"{CACHE_KEY_PREFIX}-test:{_alias}"
MEDIA_ROOT = env_path("MEDIA_ROOT", BASE_DIR / "var" / "test-media")
LOG_LEVEL = env("LOG_LEVEL", default="WARNING")
LOGGING["root"]["level"] = LOG_LEVEL
# Throttling stays on but out of the way; tests about it set low rates with override_settings.
API_THROTTLE_TENANT_RATE = env("API_THROTTLE_TENANT_RATE", default="100000/min")
API_THROTTLE_CLIENT_RATE = env("API_THROTTLE_CLIENT_RATE", default="100000/min")
API_THROTTLE_INJECTION_RATE = env("API_THROTTLE_INJECTION_RATE", default="100000/min")
# Every test client signs in from 127.0.0.1 and test usernames recur between runs: the login
# throttle's limits are out of the way too; tests about it set the real defaults.
LOGIN_THROTTLE_ACCOUNT_FAILURES = env.int("LOGIN_THROTTLE_ACCOUNT_FAILURES", default=100000)
LOGIN_THROTTLE_ADDRESS_FAILURES = env.int("LOGIN_THROTTLE_ADDRESS_FAILURES", default=100000)
SITE_URL = env("SITE_URL", default="https://lexrag.example.test")
# Ingestion tests count what is embedded; signals are computed when a review needs them (tests
# about computing them at ingestion turn this on).
RAG_CLAUSE_SIGNALS_AT_INGEST = env.bool("RAG_CLAUSE_SIGNALS_AT_INGEST", default=False)
# Test processes load models when a test needs them (tests of the warm-up turn it on).
RAG_WARM_MODELS = env.bool("RAG_WARM_MODELS", default=False)
