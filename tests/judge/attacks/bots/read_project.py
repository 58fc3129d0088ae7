"""Read the project's files (source, settings) by their host paths and by guesses."""

import os

from _attack import PARAMS, Attacker, blocked, main, must_fail, read_file, succeeded

# all of /etc the sandbox binds: the dynamic linker's cache, the time zone, the JDK's public
# configuration (java.security, jvm.cfg: docs/sandbox.md, "Runtimes")
RUNTIME_FILES = {"ld.so.cache", "localtime", "java-17-openjdk"}


class ReadProject(Attacker):
    def attack(self):
        repo = PARAMS["repo"]
        for path in (
            f"{repo}/pyproject.toml",
            f"{repo}/config/settings.py",
            f"{repo}/judge/runner.py",
            "/work/main/manage.py",
            "/app/manage.py",
            "/srv/tapis/manage.py",
        ):
            must_fail(f"read {path}", lambda p=path: read_file(p))
        for path in (repo, "/work", "/root", "/home", "/var", "/srv", "/opt", "/etc"):
            try:
                names = set(os.listdir(path)) - RUNTIME_FILES
            except OSError as exc:
                blocked(f"list {path}: {exc.__class__.__name__}")
                continue
            if names:
                succeeded(f"list {path}: {sorted(names)[:10]}")
            else:
                blocked(f"list {path}: nothing but the runtime's files")


main(ReadProject())
