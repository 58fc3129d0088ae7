"""Become root: setuid(0), setgid(0), a setuid binary, /etc/shadow."""

import os
import subprocess

from _attack import Attacker, main, must_fail, read_file


def su():
    done = subprocess.run(["/usr/bin/sudo", "-n", "id", "-u"], capture_output=True, timeout=5)
    if done.returncode or done.stdout.strip() != b"0":
        raise PermissionError(done.returncode, done.stderr.decode(errors="replace")[:80])
    return done.stdout


class SetuidRoot(Attacker):
    def attack(self):
        must_fail("setuid(0)", lambda: os.setuid(0))
        must_fail("setgid(0)", lambda: os.setgid(0))
        must_fail("sudo", su)
        must_fail("read /etc/shadow", lambda: read_file("/etc/shadow"))


main(SetuidRoot())
