"""ptrace: trace itself, attach to a child, read another process's memory."""

import os
import time

from _attack import Attacker, main, must_fail, read_file, syscall

PTRACE_TRACEME, PTRACE_ATTACH, PTRACE_SEIZE = 0, 16, 0x4206


class Ptrace(Attacker):
    def attack(self):
        must_fail("PTRACE_TRACEME", lambda: syscall(101, PTRACE_TRACEME, 0, 0, 0))
        child = os.fork()
        if child == 0:
            time.sleep(30)
            os._exit(0)
        try:
            must_fail("PTRACE_ATTACH child", lambda: syscall(101, PTRACE_ATTACH, child, 0, 0))
            must_fail("PTRACE_SEIZE child", lambda: syscall(101, PTRACE_SEIZE, child, 0, 0))
            must_fail("process_vm_readv child", lambda: syscall(310, child, 0, 0, 0, 0, 0))
            must_fail("open /proc/child/mem", lambda: read_file(f"/proc/{child}/mem", 1))
        finally:
            os.kill(child, 9)
            os.waitpid(child, 0)


main(Ptrace())
