"""Talk to the host of the virtual machine over AF_VSOCK (not network-namespaced)."""

import socket

from _attack import Attacker, main, must_fail

AF_VSOCK = 40


def connect(cid, port):
    sock = socket.socket(AF_VSOCK, socket.SOCK_STREAM)
    sock.settimeout(2)
    sock.connect((cid, port))
    return sock


class NetVsock(Attacker):
    def attack(self):
        for port in (2024, 5001, 5002):
            must_fail(f"vsock host:{port}", lambda p=port: connect(2, p))


main(NetVsock())
