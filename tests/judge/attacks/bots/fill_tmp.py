"""Fill /tmp (a tmpfs: the host's memory) until it refuses."""

from _attack import Attacker, blocked, main, succeeded


class FillTmp(Attacker):
    def attack(self):
        written = 0
        chunk = b"x" * (1 << 20)
        try:
            for i in range(1024):
                with open(f"/tmp/fill{i}", "wb") as f:
                    for _ in range(4):
                        f.write(chunk)
                        f.flush()
                        written += len(chunk)
        except OSError as exc:
            blocked(f"/tmp full after {written >> 20} MiB: errno {exc.errno}")
            return
        succeeded(f"wrote {written >> 20} MiB to /tmp")


main(FillTmp())
