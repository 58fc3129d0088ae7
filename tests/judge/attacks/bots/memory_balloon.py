"""Allocate memory until refused; then play on (the balloon released)."""

from _attack import Attacker, blocked, main, succeeded


class MemoryBalloon(Attacker):
    def attack(self):
        held = []
        try:
            for _ in range(4096):  # up to 64 GiB
                held.append(bytearray(16 << 20))
        except MemoryError:
            size = 16 * len(held)
            held.clear()
            blocked(f"MemoryError after {size} MiB")
            return
        succeeded(f"allocated {16 * len(held)} MiB")


main(MemoryBalloon())
