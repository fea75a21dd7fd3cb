"""Deployment hygiene (issue #9, part 4): production settings pass `check --deploy` and behave
securely over HTTP, every requirement is pinned for `make audit`, and no secret is committed.

The dependency audit itself is not a test: it depends on advisory data that changes without the
code changing, and on a vulnerability service this network does not reach (see docs/pip-audit.md).
`make audit` runs it, strictly.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]

# --- Production settings ---------------------------------------------------------------------------

# Variables the developer's or CI's shell may carry that production must not inherit in these tests.
_LOCAL_ONLY = {
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "DATABASE_URL",
    "CSRF_TRUSTED_ORIGINS",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
}


def production_env(**overrides: str | None) -> dict[str, str]:
    """The environment of a realistic production deployment (docker-compose's .env), with a fresh
    long random SECRET_KEY; `overrides` change or (None) remove variables."""
    env = {k: v for k, v in os.environ.items() if k not in _LOCAL_ONLY and not k.startswith("DJANGO_")}
    env.update(
        DJANGO_SETTINGS_MODULE="ragsite.settings.production",
        SECRET_KEY=secrets.token_urlsafe(64),
        ALLOWED_HOSTS="lexrag.example.com,api.lexrag.example.com",
        CSRF_TRUSTED_ORIGINS="https://lexrag.example.com",
        # Never connected to by these tests: settings and checks only need it set.
        DATABASE_URL="postgres://lexrag:not-a-real-password@db.internal:5432/lexrag",
        REDIS_URL="redis://redis.internal:6379/0",
        METRICS_TOKEN=secrets.token_urlsafe(32),
        RAG_LLM_PROVIDER="extractive",
        LOG_LEVEL="WARNING",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    env.update(overrides)
    return {k: v for k, v in env.items() if v is not None}


def check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess:
    """`manage.py check --deploy`, failing on warnings as well as errors."""
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_check_deploy_is_clean_under_production_settings():
    result = check_deploy(production_env())

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


WEAK_KEY = "django-insecure-short"


@pytest.mark.parametrize(
    ("overrides", "warning"),
    [
        # A short, Django-generated-looking key: the check must see through it.
        (dict(SECRET_KEY=WEAK_KEY), "security.W009"),
        # The documented escape hatches are honoured, and `check --deploy` says what they cost.
        ({"SECURE_SSL_REDIRECT": "false"}, "security.W008"),
        ({"SECURE_HSTS_SECONDS": "0"}, "security.W004"),
    ],
)
def test_check_deploy_catches_a_weakened_deployment(overrides, warning):
    """The clean result above means something: the same run flags each weakening."""
    result = check_deploy(production_env(**overrides))

    assert result.returncode != 0
    assert warning in result.stdout + result.stderr


@pytest.fixture(scope="module")
def collected_static(tmp_path_factory) -> Path:
    """A VAR_DIR holding `collectstatic`'s output, as the Dockerfile builds it: production pages
    need its manifest (cache-busted names), and this shows collectstatic works."""
    var_dir = tmp_path_factory.mktemp("production-var")
    result = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput"],
        cwd=PROJECT_ROOT,
        env=production_env(VAR_DIR=str(var_dir)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert (var_dir / "staticfiles" / "staticfiles.json").is_file()
    return var_dir


def _production_http(env: dict[str, str]) -> dict:
    """Requests through the whole middleware stack under production settings, in a subprocess
    (the settings module is chosen at start-up). No view reached here touches the database."""
    code = """
import json, django
django.setup()
from django.conf import settings
from django.test import Client
client = Client(HTTP_HOST="lexrag.example.com")
plain = client.get("/api/v1/rag/documents")
https = client.get("/api/v1/no-such-endpoint", HTTP_X_FORWARDED_PROTO="https")
other_host = client.get("/api/v1/no-such-endpoint", HTTP_HOST="evil.example.net",
                        HTTP_X_FORWARDED_PROTO="https")
login = client.get("/accounts/login/", HTTP_X_FORWARDED_PROTO="https")
print(json.dumps({
    "debug": settings.DEBUG,
    "plain": [plain.status_code, plain.headers.get("Location")],
    "https": [https.status_code, dict(https.headers)],
    "other_host": other_host.status_code,
    "login": login.status_code,
    "login_cookies": {name: dict(morsel) for name, morsel in login.cookies.items()},
    "session_cookie": [settings.SESSION_COOKIE_SECURE, settings.SESSION_COOKIE_HTTPONLY],
}))
"""
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=180
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_production_serves_only_https_with_hsts_and_secure_cookies(collected_static):
    seen = _production_http(production_env(VAR_DIR=str(collected_static)))

    assert seen["debug"] is False
    # Plain HTTP is redirected before authentication or any view runs.
    assert seen["plain"] == [301, "https://lexrag.example.com/api/v1/rag/documents"]
    status, headers = seen["https"]
    assert status == 404  # JSON 404, with no debug page
    assert headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["Referrer-Policy"] == "same-origin"
    assert headers["Cross-Origin-Opener-Policy"] == "same-origin"
    # A Host header outside ALLOWED_HOSTS is refused (400), not answered.
    assert seen["other_host"] == 400
    # The login form sets the CSRF cookie: Secure, so it never travels over plain HTTP.
    assert seen["login"] == 200
    csrf = seen["login_cookies"]["csrftoken"]
    assert csrf["secure"] is True and csrf["samesite"] == "Lax"
    assert seen["session_cookie"] == [True, True]


def test_hsts_and_redirect_follow_their_documented_overrides(collected_static):
    """An operator behind a proxy that already redirects can turn both down (README's table)."""
    seen = _production_http(
        production_env(
            VAR_DIR=str(collected_static),
            SECURE_SSL_REDIRECT="false",
            SECURE_HSTS_SECONDS="3600",
            SECURE_HSTS_PRELOAD="false",
        )
    )

    assert seen["plain"][0] == 401  # served (asks for credentials), not redirected
    assert seen["https"][1]["Strict-Transport-Security"] == "max-age=3600; includeSubDomains"


# --- Pinned requirements (what `make audit` audits) ------------------------------------------------

_REQUIREMENT_FILES = ("requirements.txt", "requirements-dev.txt")


def _requirement_lines(name: str) -> list[str]:
    lines = (PROJECT_ROOT / name).read_text(encoding="utf-8").splitlines()
    return [line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()]


def test_every_requirement_is_pinned_exactly():
    """An audit of `pkg>=1.0` says nothing about what gets installed; every line is `==` (or an
    include of the other file)."""
    loose = [
        f"{name}: {line}"
        for name in _REQUIREMENT_FILES
        for line in _requirement_lines(name)
        if not (line.startswith("-r ") or re.fullmatch(r"[A-Za-z0-9_.\-]+(\[[a-z,]+\])?==[\w.+]+", line))
    ]
    assert loose == []


def test_the_auditor_is_pinned_and_make_audit_is_strict():
    """pip-audit skips what it cannot look up and still prints "No known vulnerabilities found"
    with exit 0; `make audit` must pass --strict so an unreachable service is a failure."""
    assert any(line.startswith("pip-audit==") for line in _requirement_lines("requirements-dev.txt"))
    makefile = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^audit:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert recipe, "Makefile has no audit target"
    assert "pip-audit" in recipe.group(1) and "--strict" in recipe.group(1)


# --- No secret in the repository -------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    kind: str
    value: str


# Built from pieces so that this file does not match its own patterns.
_PRIVATE_KEY = re.compile("-" * 5 + r"BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?" + "-" * 5)
_TOKEN_PATTERNS = {
    "private key": _PRIVATE_KEY,
    "Anthropic API key": re.compile(r"\bsk-ant-[A-Za-z0-9_-]{16,}"),
    # OpenAI-style: sk-, sk-proj-, ... then a long random run with at least one digit.
    "OpenAI-style API key": re.compile(r"\bsk-(?!ant-)(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"),
    "AWS access key id": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "AWS secret access key": re.compile(
        r"aws_secret_access_key\s*[=:]\s*[\"']?([A-Za-z0-9/+]{40})\b", re.IGNORECASE
    ),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "Slack token": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
}
# SECRET_KEY given a literal value: assigned, or as env()'s default, in Python; after = or : in .env
# files, shell, YAML and Dockerfiles. (The examples are in the tests below, built from pieces.)
_PY_SECRET_KEY = re.compile(r"""SECRET_KEY["']?\s*(?:=|:|,\s*default\s*=)\s*[rbf]?["']([^"']+)["']""")
_OTHER_SECRET_KEY = re.compile(r"""\bSECRET_KEY\s*[=:]\s*["']?([^\s"'$|`]+)""")

# Every committed value that looks like a secret and is not, each with why. Keep it small: a new
# entry needs a reason a reviewer can check from the value alone.
ALLOWED = {
    # Marked insecure by Django's own prefix, only in settings that never serve production.
    "django-insecure-lexrag-tests": "ragsite/settings/test.py, tests only",
    "django-insecure-lexrag-local-development-only": "ragsite/settings/local.py, `make run` only",
    # Placeholders telling the operator what to put there.
    "change-me-to-a-long-random-string-of-at-least-50-characters": ".env.example placeholder",
    "build-only": "Dockerfile: lets collectstatic load settings during the image build",
    # Fake Anthropic keys the tests send to a local fake Messages API.
    "sk-ant-api03-test-key-0123456789": "tests of the Anthropic adapter and planner",
    "sk-ant-api03-wrong-key-9876543210": "test of a rejected key",
}


def scan_text(path: str, text: str) -> list[Finding]:
    """Every secret-looking value in one file's text."""
    findings = []
    secret_key = _PY_SECRET_KEY if path.endswith(".py") else _OTHER_SECRET_KEY
    for number, line in enumerate(text.splitlines(), start=1):
        for kind, pattern in _TOKEN_PATTERNS.items():
            findings += [Finding(path, number, kind, m.group(0)) for m in pattern.finditer(line)]
        findings += [
            Finding(path, number, "hard-coded SECRET_KEY", m.group(1)) for m in secret_key.finditer(line)
        ]
    return findings


def tracked_text_files() -> dict[str, str]:
    """The text of every git-tracked file (binary fixtures, with NUL bytes, are left out)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=PROJECT_ROOT, capture_output=True, check=True, timeout=60
    ).stdout
    texts = {}
    for name in filter(None, listed.decode().split("\0")):
        path = PROJECT_ROOT / name
        if not path.is_file():  # deleted in the work tree but not yet committed
            continue
        data = path.read_bytes()
        if b"\0" not in data[:8192]:
            texts[name] = data.decode("utf-8", errors="replace")
    return texts


def test_no_secret_is_committed():
    texts = tracked_text_files()
    # The scan really covers the repository, including the files that hold the allowed values.
    assert len(texts) > 100 and "ragsite/settings/test.py" in texts and ".env.example" in texts

    findings = [f for path, text in texts.items() for f in scan_text(path, text)]
    leaked = [f for f in findings if f.value not in ALLOWED]
    assert leaked == [], "\n".join(f"{f.path}:{f.line}: {f.kind}: {f.value[:12]}…" for f in leaked)


def test_every_allowed_value_is_still_needed():
    """The allowlist only shrinks: an entry no committed file uses any more is removed."""
    found = {f.value for path, text in tracked_text_files().items() for f in scan_text(path, text)}
    assert sorted(set(ALLOWED) - found) == []


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("-" * 5 + "BEGIN RSA PRIVATE KEY" + "-" * 5, "private key"),
        ("-" * 5 + "BEGIN OPENSSH PRIVATE KEY" + "-" * 5, "private key"),
        ("key = 'sk-" + "ant-api03-" + "Zx9" * 12 + "'", "Anthropic API key"),
        ("OPENAI_API_KEY=sk-" + "proj-" + "a1B2c3D4e5" * 4, "OpenAI-style API key"),
        ("id = 'AKIA" + "Q3EXAMPLE7ABCD12'", "AWS access key id"),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY", "AWS secret access key"),
        ("token: gh" + "p_" + "A1b2C3d4E5" * 4, "GitHub token"),
    ],
)
def test_the_scanner_finds_each_kind_of_key(line, kind):
    assert [f.kind for f in scan_text("leak.txt", line)] == [kind]


_KEY_NAME = "SECRET" + "_KEY"  # in pieces, so this file does not hold what it tests for


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("ragsite/settings/production.py", _KEY_NAME + " = 'k" + "3y" * 30 + "'"),
        ("ragsite/settings/base.py", f"{_KEY_NAME} = env('{_KEY_NAME}', default='k" + "3y" * 30 + "')"),
        ("deploy/.env", _KEY_NAME + "=k" + "3y" * 30),
        ("docker-compose.yml", "      " + _KEY_NAME + ": k" + "3y" * 30),
    ],
)
def test_the_scanner_finds_a_hard_coded_secret_key(path, line):
    assert [(f.kind, f.value) for f in scan_text(path, line)] == [("hard-coded SECRET_KEY", "k" + "3y" * 30)]


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("ragsite/settings/production.py", 'SECRET_KEY = _required("SECRET_KEY")'),
        ("tests/test_x.py", "env.update(SECRET_KEY=secrets.token_urlsafe(50))"),
        ("docker-compose.yml", "      SECRET_KEY: ${SECRET_KEY}"),
        ("README.md", "| `SECRET_KEY` | none (production) | Django's signing key |"),
        ("rag/tasks.py", "return task-name-with-many-words-1"),
    ],
)
def test_the_scanner_ignores_keys_read_from_the_environment(path, line):
    assert scan_text(path, line) == []
