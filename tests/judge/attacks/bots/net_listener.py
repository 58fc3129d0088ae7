"""Connect to a port the test listens on, on the host's loopback: proof that it is reachable."""

import socket

from _attack import PARAMS, Attacker, main, must_fail


class NetListener(Attacker):
    def attack(self):
        port = PARAMS["port"]
        must_fail(
            f"connect 127.0.0.1:{port}", lambda: socket.create_connection(("127.0.0.1", port), 2)
        )


main(NetListener())
