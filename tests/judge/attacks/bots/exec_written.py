"""A bot writes a program (an ELF copy of /usr/bin/true, a #! script) into every writable place
and tries to execute it: directly, through the dynamic loader, as a memfd; all refused
(``noexec``, and no executable memfd)."""

import os
import shutil
import subprocess

from _attack import Attacker, blocked, evidence, main, must_fail

FOLDERS = ("/tmp", "/dev/shm", "/bot", "/sdk", "/", "/dev")
LOADER = "/lib64/ld-linux-x86-64.so.2"


def run(*argv):
    """Status 0: it ran (the attack got through); else an exception, as must_fail wants."""
    status = subprocess.run(argv, capture_output=True, timeout=10).returncode
    if status != 0:
        raise OSError(f"status {status}")
    return "it ran"


def memfd_program():
    fd = os.memfd_create("x", 0)  # neither MFD_NOEXEC_SEAL nor MFD_EXEC: executable by default
    with open("/usr/bin/true", "rb") as source:
        os.write(fd, source.read())
    return run(f"/proc/self/fd/{fd}")


class ExecWritten(Attacker):
    def attack(self):
        written = 0
        for folder in FOLDERS:
            elf, script = f"{folder}/x-elf", f"{folder}/x-script"
            try:
                shutil.copyfile("/usr/bin/true", elf)
                os.chmod(elf, 0o755)
            except OSError:
                blocked(f"cannot write {elf}")
            else:
                written += 1
                must_fail(f"execve {elf}", lambda p=elf: run(p))
                must_fail(f"ld.so {elf}", lambda p=elf: run(LOADER, p))
            try:
                with open(script, "w") as out:
                    out.write("#!/bin/sh\nexit 0\n")
                os.chmod(script, 0o755)
            except OSError:
                blocked(f"cannot write {script}")
            else:
                written += 1
                must_fail(f"execve {script}", lambda p=script: run(p))
        must_fail("execve of a memfd", memfd_program)
        if not written:
            evidence("ERROR", "wrote no program anywhere")


main(ExecWritten())
