"""``python -m config.preflight``: do PostgreSQL and Redis answer? (``make test`` asks first.)

Reads ``DATABASE_URL`` and ``CELERY_BROKER_URL`` like the settings do, without Django. When a
service does not answer, says so with the command that starts it on a Debian machine, and
exits 1, so that the test suite fails at once instead of in its first database test.
"""

from __future__ import annotations

import os
import sys

START_POSTGRESQL = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
START_REDIS = (
    'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" '
    "--appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log"
)


def check_postgresql(url: str) -> str | None:
    """None when the server answers, else the error."""
    import psycopg

    try:
        # Ask the maintenance database: the tests create their own database next to it.
        psycopg.connect(url, dbname="postgres", connect_timeout=3).close()
    except psycopg.Error as exc:
        return str(exc).strip()
    return None


def check_redis(url: str) -> str | None:
    """None when the server answers, else the error."""
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3).ping()
    except redis.RedisError as exc:
        return str(exc).strip()
    return None


def main() -> int:
    failures = []
    database_url = os.environ.get("DATABASE_URL", "")
    if database_url.startswith(("postgres://", "postgresql://")):
        error = check_postgresql(database_url)
        if error:
            failures.append(("PostgreSQL", database_url, error, START_POSTGRESQL))
    else:
        failures.append(("PostgreSQL", database_url, "not a PostgreSQL URL", START_POSTGRESQL))
    broker_url = os.environ.get("CELERY_BROKER_URL", "")
    if broker_url.startswith(("redis://", "rediss://")):
        error = check_redis(broker_url)
        if error:
            failures.append(("Redis", broker_url, error, START_REDIS))
    else:
        failures.append(("Redis", broker_url, "not a Redis URL", START_REDIS))
    for name, url, error, start in failures:
        print(f"{name} does not answer at {url or '(unset)'}: {error}", file=sys.stderr)
        print(f"  Start it with:\n    {start}\n", file=sys.stderr)
    if not failures:
        print(f"preflight: PostgreSQL and Redis answer ({database_url}, {broker_url})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
