"""The injection budget is a sliding window on the real Redis: no burst straddling a clock minute."""

import time
import uuid

from ragsite.throttling import Rate, injection_attempt_allowed


def _attempts(key: str, rate: Rate, at: float, count: int) -> list[bool]:
    return [injection_attempt_allowed(key, rate, now=at)[0] for _ in range(count)]


def test_five_flagged_at_0_59_and_five_at_1_01_are_not_all_allowed(redis_url):
    key = f"injection:test:{uuid.uuid4().hex}"
    rate = Rate(5, 60)
    minute = time.time() // 60 * 60
    first = _attempts(key, rate, minute + 59, 5)
    second = _attempts(key, rate, minute + 61, 5)
    assert first == [True] * 5
    assert second == [False] * 5  # the five of two seconds ago still count


def test_an_attempt_is_allowed_again_once_the_oldest_leaves_the_window(redis_url):
    key = f"injection:test:{uuid.uuid4().hex}"
    rate = Rate(2, 60)
    start = time.time()
    assert _attempts(key, rate, start, 1) == [True]
    assert _attempts(key, rate, start + 30, 1) == [True]
    allowed, wait = injection_attempt_allowed(key, rate, now=start + 40)
    assert not allowed and 19 <= wait <= 21  # until the first attempt is 60 s old
    assert _attempts(key, rate, start + 61, 1) == [True]
    assert _attempts(key, rate, start + 62, 1) == [False]  # the one at +30 still counts
