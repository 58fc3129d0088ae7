"""Read /proc/1/environ (the host's init, holding the boot environment) and the judge's."""

from _attack import PARAMS, Attacker, blocked, main, succeeded


class ReadProc1Environ(Attacker):
    def attack(self):
        with open("/proc/1/environ", "rb") as f:
            environ = f.read().split(b"\0")
        with open("/proc/1/cmdline", "rb") as f:
            cmdline = f.read()
        if b"/bot/" not in cmdline:  # pid 1 should be this very bot
            succeeded(f"pid 1 is someone else: {cmdline[:100]!r}")
        names = sorted(e.split(b"=")[0].decode() for e in environ if e)
        expected = {"PATH", "LANG", "HOME", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "PWD"}
        if set(names) - expected:
            succeeded(f"/proc/1/environ has {names}")
        else:
            blocked(f"/proc/1 is the bot itself, its environment is {names}")
        judge = PARAMS["judge_pid"]
        try:
            with open(f"/proc/{judge}/environ", "rb") as f:
                succeeded(f"read the judge's environment: {f.read(60)!r}")
        except OSError as exc:
            blocked(f"/proc/{judge}/environ: {exc.__class__.__name__}")


main(ReadProc1Environ())
