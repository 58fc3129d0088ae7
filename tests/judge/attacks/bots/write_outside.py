"""Write outside /tmp: its own package, the system, the SDK, and host paths it was told about."""

import os

from _attack import PARAMS, Attacker, blocked, main, must_fail


def write(path):
    with open(path, "w") as f:
        f.write("pwned")
    return path


class WriteOutside(Attacker):
    def attack(self):
        targets = [
            "/bot/pwned",
            "/bot/main.py",
            "/sdk/pwned",
            "/sdk/tapis_bot.py",
            "/pwned",
            "/usr/pwned",
            "/usr/bin/python3",
            "/etc/pwned",
            "/dev/shm/pwned",
            "/proc/sysrq-trigger",
            "/proc/sys/kernel/core_pattern",
            f"{PARAMS['dropbox']}/pwned",
            f"{PARAMS['repo']}/pwned",
        ]
        for path in targets:
            must_fail(f"write {path}", lambda p=path: write(p))
        must_fail("mkdir /bot/dir", lambda: os.mkdir("/bot/dir"))
        must_fail("chmod /bot", lambda: os.chmod("/bot", 0o777))
        # Inside the sandbox this lands in its private /tmp; the test checks the host's /tmp.
        write(PARAMS["host_tmp_marker"])
        blocked("wrote the /tmp marker: private to the sandbox (the test checks the host)")


main(WriteOutside())
