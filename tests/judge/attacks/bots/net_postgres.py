"""Connect to PostgreSQL on the worker's loopback (127.0.0.1:5432 and [::1]:5432)."""

import socket

from _attack import Attacker, main, must_fail


class NetPostgres(Attacker):
    def attack(self):
        for host in ("127.0.0.1", "::1", "localhost"):
            must_fail(f"connect {host}:5432", lambda h=host: socket.create_connection((h, 5432), 2))


main(NetPostgres())
