"""Django settings for Tapis, read from environment variables.

Two modes, chosen by ``TAPIS_ENV``:

* ``demo`` (the default): runs with nothing installed but Python. Embedded defaults keep
  everything under ``var/``: an SQLite database, a broker on the file system (kombu's
  ``filesystem://`` transport, no server), task results in files, and a secret key generated
  once and kept in ``var/secret_key``.
* ``production``: every embedded default is refused. Tapis will not start without a real
  database (PostgreSQL), a real broker (Redis), a secret key given in ``SECRET_KEY``, explicit
  ``ALLOWED_HOSTS`` and ``DEBUG`` off; all the problems are reported at once.

README.md documents every variable; ``ENVIRONMENT_VARIABLES`` lists the names read here.
"""

from __future__ import annotations

import os
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import READ, email_settings, env_bool, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------------------------------------
# Mode
# ---------------------------------------------------------------------------------------------
TAPIS_MODES = ("demo", "production")
TAPIS_ENV = env_str("TAPIS_ENV", "demo").lower()
if TAPIS_ENV not in TAPIS_MODES:
    raise ImproperlyConfigured(f"TAPIS_ENV={TAPIS_ENV!r}: expected one of {', '.join(TAPIS_MODES)}")
PRODUCTION = TAPIS_ENV == "production"

# Demo state (SQLite file, broker folders, results, generated secret, collected static files).
VAR_DIR = Path(env_str("TAPIS_VAR_DIR", str(BASE_DIR / "var"))).resolve()
if not PRODUCTION:
    VAR_DIR.mkdir(parents=True, exist_ok=True)

# Reasons to refuse production mode; raised together at the end of this module.
_refusals: list[str] = []


def _demo_secret_key(path: Path) -> str:
    """The demo secret key: generated on first use, then read back from ``path``.

    Written to a private temporary file then hard-linked into place, so that a web server
    and a worker starting at the same moment agree on one key.
    """
    if not path.exists():
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(50) + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process won the race: use its key
        finally:
            tmp.unlink()
    return path.read_text().strip()


def _weak_secret_key(key: str) -> bool:
    # Django's own criteria (check security.W009).
    return len(key) < 50 or len(set(key)) < 5 or key.startswith("django-insecure-")


# ---------------------------------------------------------------------------------------------
# Core
# ---------------------------------------------------------------------------------------------
_secret_key = env_str("SECRET_KEY")
if _secret_key is None:
    if PRODUCTION:
        _refusals.append(
            "SECRET_KEY is not set: generate one with "
            "python3 -c 'import secrets; print(secrets.token_urlsafe(50))'"
        )
        _secret_key = ""
    else:
        _secret_key = _demo_secret_key(VAR_DIR / "secret_key")
elif PRODUCTION and _weak_secret_key(_secret_key):
    _refusals.append("SECRET_KEY is too weak: use at least 50 random characters")
SECRET_KEY = _secret_key

# Off in every mode, the demo's too: with DEBUG on, any visitor's missing page or error would
# show Django's debug page (settings, paths, the traceback). DEBUG=1 is for a developer's own
# machine; whitenoise serves the static files either way (below).
DEBUG = env_bool("DEBUG", default=False)
if PRODUCTION and DEBUG:
    _refusals.append("DEBUG must be off in production")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [] if PRODUCTION else ["127.0.0.1", "localhost", "[::1]"])
if PRODUCTION and not ALLOWED_HOSTS:
    _refusals.append("ALLOWED_HOSTS is not set: name the host names the service answers to")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# HTTPS (README, "Settings"; docs/operations.md, "HTTPS"): on by default in production. Cookies
# only over HTTPS, plain HTTP redirected (but /healthz, which load balancers ask over HTTP),
# browsers told to use HTTPS only (HSTS); behind a proxy ending TLS, its X-Forwarded-Proto says
# the request came over HTTPS (the proxy must set it, overwriting what a client sent).
TAPIS_TLS = env_bool("TAPIS_TLS", default=PRODUCTION)
_hsts_seconds = env_str("TAPIS_HSTS_SECONDS", str(365 * 24 * 3600) if TAPIS_TLS else "0")
if not _hsts_seconds.isdigit():
    raise ImproperlyConfigured(f"TAPIS_HSTS_SECONDS={_hsts_seconds!r}: expected 0, 1, 2...")
TAPIS_PROXY_TLS = env_bool("TAPIS_PROXY_TLS", default=TAPIS_TLS)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = SECURE_SSL_REDIRECT = TAPIS_TLS
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = int(_hsts_seconds)
if TAPIS_PROXY_TLS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    # Swagger UI's files, served by the service itself (/api/v1/docs/): no CDN.
    "drf_spectacular_sidecar",
    # The site's live updates: htmx (shipped in django-htmx's static files) and request.htmx.
    "django_htmx",
    "axes",
    "tournaments",
    "api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # A URL over its limit gets a 414 before anything reads it (JSON under /api/).
    "api.middleware.UrlLengthMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Under /api/ a server error is the API's JSON error shape, with DEBUG=1 too, never
    # Django's HTML debug page (it sees a view's exception before those above it).
    "config.api_errors.ApiServerErrorMiddleware",
    # A successful login's browser gets the known-device cookie (api/authentication.py).
    "api.authentication.KnownDeviceMiddleware",
    # Last: turns a login refused for too many failures into a 429 (api/authentication.py).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

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
                "tournaments.pages.context.site",
            ],
        },
    },
]

# ---------------------------------------------------------------------------------------------
# Database
# ---------------------------------------------------------------------------------------------
_database_url = env_str("DATABASE_URL")
if _database_url is None:
    if PRODUCTION:
        _refusals.append("DATABASE_URL is not set: production needs PostgreSQL")
    _database_url = f"sqlite:///{VAR_DIR / 'tapis.sqlite3'}"
DATABASES = {
    "default": dj_database_url.parse(_database_url, conn_max_age=60, conn_health_checks=True),
}
if PRODUCTION and DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    _refusals.append("DATABASE_URL points at SQLite: production needs PostgreSQL")
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The demo's web server and worker write the same file at once. WAL: readers never wait
    # for the writer; a busy timeout: a writer waits for the other (20 s) instead of failing;
    # IMMEDIATE transactions: a transaction takes the write lock when it begins, so it never
    # fails with "database is locked" when it reads then writes while another process writes
    # (SQLite cannot wait for a read lock to become a write lock).
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        **DATABASES["default"].get("OPTIONS", {}),
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# ---------------------------------------------------------------------------------------------
# Failed logins (django-axes; api/authentication.py): every authenticate(request, ...) counts
# its failures per user name and per address in the default cache; at the limit, logins of
# that name or from that address are refused for the cool-off (or until `manage.py
# login_unlock`). docs/operations.md.
# ---------------------------------------------------------------------------------------------
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
_login_failure_limit = env_str("TAPIS_LOGIN_FAILURE_LIMIT", "10")
_login_lockout_minutes = env_str("TAPIS_LOGIN_LOCKOUT_MINUTES", "15")
if not _login_failure_limit.isdigit() or int(_login_failure_limit) < 1:
    raise ImproperlyConfigured(
        f"TAPIS_LOGIN_FAILURE_LIMIT={_login_failure_limit!r}: expected 1, 2, 3..."
    )
if not _login_lockout_minutes.isdigit() or int(_login_lockout_minutes) < 1:
    raise ImproperlyConfigured(
        f"TAPIS_LOGIN_LOCKOUT_MINUTES={_login_lockout_minutes!r}: expected 1, 2, 3..."
    )
AXES_ENABLED = True
# axes' cache handler, but a user name's lock-out waived for its owner's known-good logins.
AXES_HANDLER = "api.authentication.LoginHandler"
AXES_CACHE = "default"
AXES_FAILURE_LIMIT = int(_login_failure_limit)
AXES_COOLOFF_TIME = timedelta(minutes=int(_login_lockout_minutes))
AXES_LOCKOUT_PARAMETERS = "api.authentication.lockout_parameters"
AXES_CLIENT_IP_CALLABLE = "api.authentication.client_address"
AXES_USERNAME_CALLABLE = "api.authentication.lockout_username"
AXES_LOCKOUT_CALLABLE = "api.authentication.lockout_response"
AXES_HTTP_RESPONSE_CODE = 429
# A success does not wipe the failures of its address: else one account of the attacker's
# own, logged into between guesses, would reset the count of the address.
AXES_RESET_ON_SUCCESS = False
# The counts are in the cache: axes' database tables and their admin pages stay empty.
AXES_ENABLE_ADMIN = False

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
# Moments written by Django itself (the admin) say their zone: config/formats/.
FORMAT_MODULE_PATH = ["config.formats"]

# ---------------------------------------------------------------------------------------------
# Static files (the admin's, and templates/static/ for the site and the replay viewer)
# ---------------------------------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "templates" / "static"]
# No uploaded media is served (bots are stored in the database). Set anyway: Django's test live
# server serves MEDIA_ROOT at MEDIA_URL, and left empty that was the working directory at "/".
MEDIA_URL = "media/"
MEDIA_ROOT = VAR_DIR / "media"
if not PRODUCTION:
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Demo and tests: whitenoise serves the files where they are, without collectstatic (and
# with DEBUG off, as make run runs: Django's runserver serves static files only with DEBUG),
# looking each one up when it is asked for (autorefresh: by default whitenoise reads every
# file's size once at startup, and a file edited while the demo runs was sent cut to its old
# size), and browsers ask again each time (no max-age). Production serves the collected,
# hashed files (below), listed once at startup, cached for good.
WHITENOISE_USE_FINDERS = not PRODUCTION
WHITENOISE_AUTOREFRESH = not PRODUCTION
if not PRODUCTION:
    WHITENOISE_MAX_AGE = 0
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        ),
    },
}

# ---------------------------------------------------------------------------------------------
# Logging: everything to the console (stderr), where containers and supervisors collect it.
# ---------------------------------------------------------------------------------------------
LOG_LEVEL = env_str("LOG_LEVEL", "INFO").upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "{asctime} {levelname} {name}: {message}", "style": "{"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain"},
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
}

# ---------------------------------------------------------------------------------------------
# Celery (config/celery.py reads every CELERY_* name below)
# ---------------------------------------------------------------------------------------------
_broker_url = env_str("CELERY_BROKER_URL")
if _broker_url is None:
    if PRODUCTION:
        _refusals.append("CELERY_BROKER_URL is not set: production needs Redis")
    _broker_url = "filesystem://localhost//"
CELERY_BROKER_URL = _broker_url
_broker_scheme = CELERY_BROKER_URL.partition("://")[0]
TAPIS_BROKER_VISIBILITY_TIMEOUT = float(env_str("TAPIS_BROKER_VISIBILITY_TIMEOUT", "43200"))
if _broker_scheme in ("filesystem", "memory"):
    if PRODUCTION:
        _refusals.append(
            f"CELERY_BROKER_URL is {_broker_scheme}://, which only serves one machine: "
            "production needs Redis"
        )
    _broker_folder = VAR_DIR / "broker"
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        "data_folder_in": str(_broker_folder / "messages"),
        "data_folder_out": str(_broker_folder / "messages"),
        "control_folder": str(_broker_folder / "control"),
        # The virtual transports poll; poll often enough for a 1 s worker ping.
        "polling_interval": 0.1,
    }
    if _broker_scheme == "filesystem" and not PRODUCTION:
        for _folder in ("messages", "control"):
            (_broker_folder / _folder).mkdir(parents=True, exist_ok=True)
else:
    # Redis delivers an unacknowledged message again after this long: above the longest table
    # budget (tournaments.conf.max_table_budget refuses longer ones), so that a table still
    # playing is never handed to a second worker by the broker.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": TAPIS_BROKER_VISIBILITY_TIMEOUT}

_result_backend = env_str("CELERY_RESULT_BACKEND")
if _result_backend is None:
    if _broker_scheme in ("redis", "rediss"):
        _result_backend = CELERY_BROKER_URL
    else:
        _result_backend = f"file://{VAR_DIR / 'results'}"
CELERY_RESULT_BACKEND = _result_backend
if CELERY_RESULT_BACKEND.startswith("file://"):
    if PRODUCTION:
        _refusals.append("CELERY_RESULT_BACKEND keeps results in files: production needs Redis")
    else:
        Path(CELERY_RESULT_BACKEND.removeprefix("file://")).mkdir(parents=True, exist_ok=True)

# Queue the tasks go to and the exchange of the workers' remote control (ping): the web
# processes and the workers must agree on both. Distinct values let several Tapis instances
# (or test runs) share one Redis without answering each other.
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "tapis")
CELERY_CONTROL_EXCHANGE = env_str("CELERY_CONTROL_EXCHANGE", "tapis")

CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_EXPIRES = timedelta(days=1)
# One task at a time per worker process, acknowledged when done: a worker lost in the middle
# of a table gives the table back to the queue (tasks are written to be run twice).
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A pool process keeps its database connection from task to task (a new PostgreSQL backend
# for every table cost each table ~10 ms and the server its caches): Celery's Django fixup
# would close it after every task unless it is told to reuse it. tournaments.worker_process
# closes it instead, as Django does after a request, when it is broken or older than
# CONN_MAX_AGE. The fixup still recycles it every this many tasks.
CELERY_DB_REUSE_MAX = 1000
CELERY_BROKER_CONNECTION_TIMEOUT = 2.0
CELERY_TIMEZONE = TIME_ZONE
# Workers run the sweep themselves (each on its own timer, once per period overall: see
# tournaments.worker_process) and record their own heartbeats: beat is optional, and losing it
# stops nothing. When it runs, it sends the sweep too (it runs only if due).
CELERY_BEAT_SCHEDULE = {
    "tournaments-sweep": {
        "task": "tournaments.tasks.table_sweep",
        "schedule": timedelta(seconds=30),
        "options": {"expires": 30},
    },
}


# ---------------------------------------------------------------------------------------------
# Cache: the API's throttle counters (and CACHES["api"], the API's caches, if set). In memory
# per process by default; Redis (redis://host:6379/2) shares the counters between every web
# process, as a per-client rate needs.
# ---------------------------------------------------------------------------------------------
CACHE_URL = env_str("CACHE_URL", "locmem://")
_cache_scheme = CACHE_URL.partition("://")[0]
if _cache_scheme in ("redis", "rediss"):
    CACHES = {
        "default": {
            # Django's, keeping its redis-py clients (api/redis_cache.py: the throttles' CPU).
            "BACKEND": "api.redis_cache.RedisCache",
            "LOCATION": CACHE_URL,
            "KEY_PREFIX": "tapis",
        }
    }
elif _cache_scheme == "locmem":
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    # axes warns that failed logins counted per process are not shared: production refuses
    # locmem below; the demo (one web process) and the tests may use it.
    SILENCED_SYSTEM_CHECKS = ["axes.W001"]
    if PRODUCTION:
        _refusals.append(
            "CACHE_URL is locmem:// (per process): throttling needs a shared cache "
            "(CACHE_URL=redis://host:6379/2)"
        )
else:
    raise ImproperlyConfigured(f"CACHE_URL={CACHE_URL!r}: expected locmem:// or redis://...")


# ---------------------------------------------------------------------------------------------
# REST API
# ---------------------------------------------------------------------------------------------
def _num_proxies() -> int:
    value = env_str("TAPIS_NUM_PROXIES", "0")
    if not value.isdigit():
        raise ImproperlyConfigured(f"TAPIS_NUM_PROXIES={value!r}: expected 0, 1, 2...")
    return int(value)


def _throttle_rate(name: str, default: str) -> str | None:
    """A DRF rate (``120/minute``) from the environment; ``off`` turns the throttle off."""
    rate = env_str(name, default)
    if rate.lower() in ("off", "none", "0"):
        return None
    count, _, period = rate.partition("/")
    if not count.isdigit() or not period or period[0] not in "smhd":
        raise ImproperlyConfigured(f"{name}={rate!r}: expected N/second, N/minute, N/hour or N/day")
    return rate


REST_FRAMEWORK = {
    # Token first: a client without credentials gets 401 with WWW-Authenticate: Token.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "api.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "api.schema.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "api.parsers.LimitedJSONParser",
        "rest_framework.parsers.MultiPartParser",
        "rest_framework.parsers.FormParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_THROTTLE_CLASSES": ["api.throttling.ClientThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "anon": _throttle_rate("TAPIS_API_THROTTLE_ANON", "120/minute"),
        "user": _throttle_rate("TAPIS_API_THROTTLE_USER", "1200/minute"),
    },
    # The proxies in front of the web processes (each appends to X-Forwarded-For): throttles
    # count a client by the address the nearest of them saw. 0 (no proxy): by the socket's
    # address, whatever X-Forwarded-For a client sends (else it could pick its own identity).
    "NUM_PROXIES": _num_proxies(),
    "EXCEPTION_HANDLER": "api.exceptions.exception_handler",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Tapis API",
    "DESCRIPTION": "Tournaments and an online judge for card-game bots.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "api.schema.add_error_component",
    ],
    "ENUM_NAME_OVERRIDES": {
        "TournamentStatusEnum": "tournaments.models.Tournament.Status",
        "VersionStatusEnum": "tournaments.models.BotVersion.Status",
        "TableStatusEnum": "tournaments.models.Table.Status",
        "RoundStatusEnum": "tournaments.models.Round.Status",
    },
}
# The whole /healthz report for a monitor sending this in the X-Health-Token header (empty: to
# staff only; everyone else gets the status alone). config/health.py, docs/operations.md.
TAPIS_HEALTH_TOKEN = env_str("TAPIS_HEALTH_TOKEN", "")

# Anyone may open an account through POST /api/v1/auth/signup/ and the site's /accounts/signup/
# (off by default in production).
TAPIS_ALLOW_SIGNUP = env_bool("TAPIS_ALLOW_SIGNUP", default=not PRODUCTION)

# The members' pages (tournaments/pages/accounts.py): where logging in starts and ends.
LOGIN_URL = "tournaments:login"
LOGIN_REDIRECT_URL = "tournaments:account"
LOGOUT_REDIRECT_URL = "home"

# E-mail (password reset): EMAIL_URL is smtp://user:password@host:587 (STARTTLS),
# smtps://user:password@host:465 (TLS from the start), or console:// (printed to the log: the
# demo's default). Without it (production's default) the site offers no password reset by
# e-mail: an operator sets a new password (manage.py changepassword).
_email = email_settings(env_str("EMAIL_URL", "" if PRODUCTION else "console://"))
TAPIS_PASSWORD_RESET = _email is not None
globals().update(_email or {"EMAIL_BACKEND": "django.core.mail.backends.dummy.EmailBackend"})
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "tapis@localhost")

# ---------------------------------------------------------------------------------------------
# Judge and workers (read through tournaments/conf.py)
# ---------------------------------------------------------------------------------------------
# How workers run uploaded bots: "bwrap" (the sandbox) or "none" (no isolation at all, for a
# development machine with trusted bots only). "none" is refused unless
# TAPIS_ALLOW_UNSANDBOXED is also on, and production refuses it outright.
TAPIS_SANDBOX = env_str("TAPIS_SANDBOX", "bwrap")
TAPIS_ALLOW_UNSANDBOXED = env_bool("TAPIS_ALLOW_UNSANDBOXED", default=False)
if TAPIS_SANDBOX not in ("bwrap", "none"):
    raise ImproperlyConfigured(f"TAPIS_SANDBOX={TAPIS_SANDBOX!r}: expected 'bwrap' or 'none'")
if PRODUCTION and TAPIS_SANDBOX != "bwrap":
    _refusals.append("TAPIS_SANDBOX=none: uploaded bots must run in the bubblewrap sandbox")
# Fork each sandboxed Python bot from a zygote of its version kept by the worker (judge/zygote.py)
# instead of starting a sandbox and a Python for every table.
TAPIS_BOT_ZYGOTES = env_bool("TAPIS_BOT_ZYGOTES", default=True)
# Run each table (the judge and its bots) on a CPU no other table of the host holds.
TAPIS_PIN_TABLES = env_bool("TAPIS_PIN_TABLES", default=True)
TAPIS_TABLE_LEASE_SECONDS = float(env_str("TAPIS_TABLE_LEASE_SECONDS", "60"))
TAPIS_TABLE_MAX_ATTEMPTS = int(env_str("TAPIS_TABLE_MAX_ATTEMPTS", "3"))
TAPIS_TABLE_MAX_CLAIMS = int(env_str("TAPIS_TABLE_MAX_CLAIMS", "10"))
TAPIS_SWEEP_SECONDS = float(env_str("TAPIS_SWEEP_SECONDS", "30"))
TAPIS_WORKER_HEARTBEAT_SECONDS = float(env_str("TAPIS_WORKER_HEARTBEAT_SECONDS", "10"))
# Every worker runs the sweep on its timer when it is due; off, a worker leaves it to the others
# and to beat (tournaments.tasks.table_sweep).
TAPIS_WORKER_SWEEP = env_bool("TAPIS_WORKER_SWEEP", default=True)
TAPIS_PENDING_REQUEUE_SECONDS = float(env_str("TAPIS_PENDING_REQUEUE_SECONDS", "600"))
# A version validating this long (build and table) lost its worker: the sweep sends it again.
TAPIS_VALIDATION_LEASE_SECONDS = float(env_str("TAPIS_VALIDATION_LEASE_SECONDS", "900"))
# Batches of all matches ("is v2 better?") in flight at once: their fair share of the workers.
TAPIS_MATCH_BATCHES = int(env_str("TAPIS_MATCH_BATCHES", "1"))
# Practice runs (a version's "try it"): at most this many waiting or playing per author, and
# this many started per author in an hour.
TAPIS_PRACTICE_ACTIVE = int(env_str("TAPIS_PRACTICE_ACTIVE", "2"))
TAPIS_PRACTICE_PER_HOUR = int(env_str("TAPIS_PRACTICE_PER_HOUR", "20"))
# Practice tables of all authors in flight at once (sent or playing): their fair share of the
# workers; the others wait unsent. And a practice table's time bank per seat (seconds).
TAPIS_PRACTICE_IN_FLIGHT = int(env_str("TAPIS_PRACTICE_IN_FLIGHT", "2"))
TAPIS_PRACTICE_BANK_SECONDS = float(env_str("TAPIS_PRACTICE_BANK_SECONDS", "2"))
# Validations of new versions of all authors sent or running at once (taken in turns by
# author): their fair share of the workers; the others wait unsent.
TAPIS_VALIDATIONS_IN_FLIGHT = int(env_str("TAPIS_VALIDATIONS_IN_FLIGHT", "2"))
# Uploads: versions an author may upload in an hour, and bytes their uploads and stored builds
# may take in all; accounts one address may sign up in an hour.
TAPIS_UPLOADS_PER_HOUR = int(env_str("TAPIS_UPLOADS_PER_HOUR", "20"))
TAPIS_UPLOAD_BYTES = int(env_str("TAPIS_UPLOAD_BYTES", str(256 * 2**20)))
TAPIS_SIGNUPS_PER_HOUR = int(env_str("TAPIS_SIGNUPS_PER_HOUR", "5"))
TAPIS_BOT_CACHE_DIR = Path(env_str("TAPIS_BOT_CACHE_DIR", str(VAR_DIR / "bot-cache")))

# ---------------------------------------------------------------------------------------------
# Production refuses the embedded defaults
# ---------------------------------------------------------------------------------------------
if _refusals:
    raise ImproperlyConfigured(
        "Tapis refuses to start in production mode (TAPIS_ENV=production):\n"
        + "\n".join(f"  - {reason}" for reason in _refusals)
    )

ENVIRONMENT_VARIABLES = frozenset(READ)
