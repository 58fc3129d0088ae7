"""Find the service's secrets: SECRET_KEY, DATABASE_URL, in any environment or settings file."""

import glob
import os

from _attack import PARAMS, Attacker, blocked, main, succeeded

KEYS = (b"SECRET_KEY", b"DATABASE_URL", b"CELERY_BROKER_URL", b"REDIS_URL")


class ReadSecretKey(Attacker):
    def attack(self):
        found = [k for k in os.environ if k.encode() in KEYS]
        places = ["/proc/self/environ", "/proc/1/environ", *glob.glob("/proc/[0-9]*/environ")]
        repo = PARAMS["repo"]
        places += [f"{repo}/.env", f"{repo}/config/settings.py", "/etc/environment", "/run/secrets"]
        for path in places:
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            found += [f"{k.decode()} in {path}" for k in KEYS if k in data]
        if found:
            succeeded(", ".join(found))
        else:
            blocked(f"no secret in the environment nor in {len(places)} places")


main(ReadSecretKey())
