"""The usual escape system calls: new namespaces, mounts, bpf, io_uring, perf, userfaultfd."""

from _attack import Attacker, main, must_fail, syscall

CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET = 0x10000000, 0x00020000, 0x40000000


class EscapeSyscalls(Attacker):
    def attack(self):
        must_fail("unshare(CLONE_NEWUSER)", lambda: syscall(272, CLONE_NEWUSER))
        must_fail(
            "unshare(CLONE_NEWNS|CLONE_NEWNET)", lambda: syscall(272, CLONE_NEWNS | CLONE_NEWNET)
        )
        must_fail("setns", lambda: syscall(308, 0, 0))
        must_fail("mount", lambda: syscall(165, 0, 0, 0, 0, 0))
        must_fail("umount2 /bot", lambda: syscall(166, 0, 0))
        must_fail("pivot_root", lambda: syscall(155, 0, 0))
        must_fail("bpf", lambda: syscall(321, 0, 0, 0))
        must_fail("io_uring_setup", lambda: syscall(425, 8, 0))
        must_fail("perf_event_open", lambda: syscall(298, 0, 0, -1, -1, 0))
        must_fail("userfaultfd", lambda: syscall(323, 0))
        must_fail("personality", lambda: syscall(135, 0x0400000))  # READ_IMPLIES_EXEC
        must_fail("kexec_load", lambda: syscall(246, 0, 0, 0, 0))
        must_fail("init_module", lambda: syscall(175, 0, 0, 0))


main(EscapeSyscalls())
