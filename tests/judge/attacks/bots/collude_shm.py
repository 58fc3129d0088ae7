"""Two bots at one table share memory: POSIX shm (/dev/shm), System V shm, a memfd by path."""

from multiprocessing import shared_memory

from _attack import PARAMS, Attacker, blocked, main, must_fail, succeeded, syscall

NAME = "tapis-collude-" + PARAMS["token"]
IPC_PRIVATE, IPC_CREAT = 0, 0o1000
KEY = 0x7A915


class ColludeShm(Attacker):
    def attack(self):
        self.tries = 0
        if self.seat == 0:
            must_fail(
                "POSIX shm create", lambda: shared_memory.SharedMemory(NAME, create=True, size=4096)
            )
            must_fail("System V shmget create", lambda: syscall(29, KEY, 4096, IPC_CREAT | 0o666))
            must_fail("System V msgget create", lambda: syscall(68, KEY, IPC_CREAT | 0o666))

    def on_act(self, observation, legal_actions):
        if self.seat == 0 or self.tries >= 5:
            return
        self.tries += 1
        found = []
        for label, action in (
            ("POSIX shm", lambda: shared_memory.SharedMemory(NAME)),
            ("System V shm", lambda: syscall(29, KEY, 0, 0)),
            ("System V msg", lambda: syscall(68, KEY, 0)),
        ):
            try:
                action()
                found.append(label)
            except OSError:
                pass
        if found:
            succeeded(f"found the partner's {found}")
        elif self.tries == 5:
            blocked("5 tries: no shared memory of the partner")


main(ColludeShm())
