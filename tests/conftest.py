"""Shared fixtures: tenants, users, API clients, real Redis and a real Celery worker."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from django.conf import settings
from rest_framework.test import APIClient

from tenants import services
from tenants.models import Role
from tests.factories import MembershipFactory, TenantFactory

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _restore_builtin_templates() -> None:
    """Re-create the built-in prompt templates (rows of a data migration) when they are missing."""
    from django.apps import apps

    from templates_admin.models import PromptTemplate

    if not PromptTemplate.objects.filter(tenant__isnull=True).exists():
        migration = importlib.import_module("templates_admin.migrations.0002_builtin_templates")
        migration.create_builtins(apps, None)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The test database, with the built-in templates even if a reused database lost them, and
    none of the keys an earlier run of this checkout left in the shared Redis."""
    with django_db_blocker.unblock():
        _restore_builtin_templates()
    _forget_earlier_runs()


def _forget_earlier_runs() -> None:
    """Delete this checkout's test keys from Redis (its own prefixes only: other checkouts on the
    same Redis keep theirs). A new test database numbers tenants and documents from 1 again, so an
    answer an earlier run cached for "tenant 1, document 3" would be served as this run's."""
    from django.core.cache import caches

    for alias in settings.CACHES:
        cache = caches[alias]
        if hasattr(cache, "delete_pattern"):  # django-redis: the pattern carries the key prefix
            cache.delete_pattern("*")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """A transactional test ends by emptying every table (built-in templates too): once its
    teardown is over, put the built-ins back for the tests that follow."""
    yield
    marker = item.get_closest_marker("django_db")
    names = set(getattr(item, "fixturenames", ()))
    if bool(marker and marker.kwargs.get("transaction")) or names & {"transactional_db", "live_server"}:
        from pytest_django.plugin import blocking_manager_key

        with item.config.stash[blocking_manager_key].unblock():
            _restore_builtin_templates()


@pytest.fixture
def tenant(db):
    return TenantFactory(slug="acme-law", name="Acme Law LLP")


@pytest.fixture
def other_tenant(db):
    return TenantFactory(slug="globex-legal", name="Globex Legal")


@pytest.fixture
def member(tenant):
    """A user who is a member of `tenant`."""
    return MembershipFactory(tenant=tenant, role=Role.MEMBER).user


@pytest.fixture
def api_client():
    return APIClient()


@pytest.fixture
def make_key_client():
    """make_key_client(tenant, role) -> APIClient authenticating with a fresh key of that tenant."""

    def make(tenant, role=Role.MEMBER):
        _, raw_key = services.api_key_create(tenant=tenant, name=f"{role} key", role=role, created_via="test")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw_key}")
        client.raw_key = raw_key
        return client

    return make


@pytest.fixture
def redis_url():
    """The real Redis the suite runs against. Skips without one, except where CI demands it."""
    if not settings.REDIS_URL:
        if os.environ.get("LEXRAG_REQUIRE_REDIS"):
            pytest.fail("REDIS_URL is unset but LEXRAG_REQUIRE_REDIS demands Redis")
        pytest.skip("REDIS_URL is unset (no Redis answering)")
    return settings.REDIS_URL


@pytest.fixture
def celery_worker(redis_url, transactional_db):
    """A real `celery worker` process on the real Redis broker, using the test database.

    Tasks sent while it runs go through the broker (eager mode is switched off for the test).
    """
    from ragsite.celery import app

    db_name = settings.DATABASES["default"]["NAME"]
    # A queue of its own, so neither a development worker nor later runs see this test's tasks.
    queue = f"lexrag-test-{os.getpid()}-{time.monotonic_ns()}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "ragsite.settings.test",
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "EMBEDDED_PG_DATABASE": db_name,
        "REDIS_URL": redis_url,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
    }
    if settings.DATABASE_URL:
        env["DATABASE_URL"] = settings.DATABASE_URL.rsplit("/", 1)[0] + f"/{db_name}"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "ragsite",
            "worker",
            "--pool=solo",
            "--loglevel=WARNING",
            "-Q",
            f"{queue},{queue}.query",  # ingestion and upkeep; query jobs (ragsite.celery.route_task)
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],
        cwd=PROJECT_ROOT,
        env=env,
    )
    previous = (app.conf.task_always_eager, app.conf.task_default_queue)
    app.conf.task_always_eager = False
    app.conf.task_default_queue = queue
    try:
        yield proc
    finally:
        app.conf.task_always_eager, app.conf.task_default_queue = previous
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        redis.Redis.from_url(redis_url).delete(queue, f"{queue}.query")  # what a failed test left queued
