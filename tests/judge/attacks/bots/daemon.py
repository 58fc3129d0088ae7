"""Double-fork a daemon (new session, no parent) to outlive the table and leave a mark."""

import contextlib
import os
import time

from _attack import PARAMS, Attacker, blocked, main, set_name


class Daemon(Attacker):
    def attack(self):
        if os.fork() == 0:
            with contextlib.suppress(
                OSError
            ):  # refused since issue 23 (the autogroup number is host-wide)
                os.setsid()
            if os.fork() == 0:
                set_name(PARAMS["process_name"])
                for fd in (0, 1, 2):
                    os.close(fd)
                while True:  # try to leave a mark on the host, forever
                    for path in (f"{PARAMS['dropbox']}/daemon-alive", PARAMS["host_tmp_marker"]):
                        try:
                            with open(path, "w") as f:
                                f.write(str(time.time()))
                        except OSError:
                            pass
                    time.sleep(0.05)
            os._exit(0)
        os.wait()
        blocked("daemon started; the test checks that it died with the table")


main(Daemon())
