"""Two bots at one table: seat 0 counts SIGUSR1s, the other sends SIGUSR1 to every pid."""

import os
import signal

from _attack import Attacker, blocked, main, succeeded

received = []


class ColludeSignals(Attacker):
    when = "hello"

    def attack(self):
        if self.seat == 0:
            signal.signal(signal.SIGUSR1, lambda *_: received.append(1))
            return
        sent = []
        for pid in range(1, 4096):
            if pid == os.getpid():
                continue
            try:
                os.kill(pid, signal.SIGUSR1)
                sent.append(pid)
            except OSError:
                pass
        if sent:
            succeeded(f"signalled pids {sent[:20]}")
        else:
            blocked("no other process to signal")

    def on_game_end(self, notice):
        if self.seat == 0:
            if received:
                succeeded(f"received {len(received)} signals")
            else:
                blocked("received no signal")


main(ColludeSignals())
