"""The throttle's window counters on the real Redis: one script call counts every budget."""

import time
import uuid

import pytest
from django.core.cache import cache
from django_redis import get_redis_connection

from ragsite.throttling import Rate, _count


def test_each_counter_counts_up_and_starts_its_window(redis_url, settings):
    assert "RedisCache" in settings.CACHES["default"]["BACKEND"]  # with REDIS_URL, the cache is Redis
    tag = uuid.uuid4().hex
    budgets = [(f"tenant:{tag}", Rate(5, 60)), (f"client:{tag}", Rate(2, 10))]
    now = time.time()
    assert _count(budgets, now) == [1, 1]
    assert _count(budgets, now) == [2, 2]
    redis = get_redis_connection("default")
    lifetimes = [
        redis.ttl(cache.make_key(f"throttle:{key}:{int(now // rate.seconds)}")) for key, rate in budgets
    ]
    assert 50 <= lifetimes[0] <= 61 and 0 < lifetimes[1] <= 11  # a window outlives itself by 1 s
    later_window = now + 10
    assert _count(budgets[1:], later_window) == [1]  # a new window starts from zero


def test_a_rate_is_parsed_once_and_invalid_ones_are_refused():
    assert Rate.parse("10/30s") == Rate(10, 30) and Rate.parse("10/30s") is Rate.parse("10/30s")
    with pytest.raises(Exception, match="Invalid throttle rate"):
        Rate.parse("ten per minute")
