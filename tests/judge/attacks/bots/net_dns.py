"""Resolve host names (to exfiltrate through DNS, or to find the database)."""

import socket

from _attack import Attacker, main, must_fail


class NetDns(Attacker):
    def attack(self):
        for name in ("example.org", "postgres", "redis", "localhost.localdomain"):
            must_fail(f"resolve {name}", lambda n=name: socket.getaddrinfo(n, 443))


main(NetDns())
