"""Reach the internet: TCP to public addresses, UDP to a public resolver."""

import socket

from _attack import Attacker, main, must_fail


def udp_dns():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(2)
        sock.sendto(
            b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x01", ("8.8.8.8", 53)
        )
        return sock.recvfrom(512)


class NetPublic(Attacker):
    def attack(self):
        for address in (("1.1.1.1", 443), ("8.8.8.8", 53), ("2606:4700:4700::1111", 443)):
            must_fail(f"connect {address}", lambda a=address: socket.create_connection(a, 2))
        must_fail("udp 8.8.8.8:53", udp_dns)


main(NetPublic())
