"""A thread bomb: threads that wait, until the process limit refuses one; then they end."""

import threading

from _attack import Attacker, blocked, main, succeeded


class ThreadBomb(Attacker):
    def attack(self):
        release = threading.Event()
        threads = []
        error = None
        while len(threads) < 10_000:
            thread = threading.Thread(target=release.wait, daemon=True)
            try:
                thread.start()
            except RuntimeError as exc:  # "can't start new thread"
                error = exc
                break
            threads.append(thread)
        release.set()
        for thread in threads:
            thread.join()
        if error is not None and len(threads) < 64:
            blocked(f"thread refused after {len(threads)} threads: {error}")
        else:
            succeeded(f"started {len(threads)} threads")


main(ThreadBomb())
