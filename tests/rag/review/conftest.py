"""Review fixtures shared by several files: the fake Messages API (for the verifier) and the small
matter of four contracts."""

from tests.rag.llm.fake_claude import claude, start_server  # noqa: F401
from tests.rag.review.test_matter_lists import matter  # noqa: F401
