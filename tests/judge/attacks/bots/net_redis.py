"""Connect to Redis on the worker's loopback (127.0.0.1:6379) and send it a command."""

import socket

from _attack import Attacker, main, must_fail


def ping():
    with socket.create_connection(("127.0.0.1", 6379), 2) as conn:
        conn.sendall(b"PING\r\n")
        return conn.recv(64)


class NetRedis(Attacker):
    def attack(self):
        must_fail("redis 127.0.0.1:6379", ping)


main(NetRedis())
