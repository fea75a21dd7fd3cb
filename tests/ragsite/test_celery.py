"""Celery on the real Redis broker with a real worker process."""

import pytest

from ragsite.celery import ping


@pytest.mark.integration
@pytest.mark.slow
def test_task_round_trip_through_redis_and_a_worker(celery_worker):
    result = ping.delay()
    assert type(result).__name__ == "AsyncResult"  # sent to the broker, not run eagerly
    assert result.get(timeout=60) == "pong"
    assert result.successful()


def test_tasks_run_eagerly_in_unit_tests():
    assert ping.delay().get(timeout=1) == "pong"
