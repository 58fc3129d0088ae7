"""Two bots at one table: seat 0 listens on an abstract unix socket, the other seat connects."""

import socket

from _attack import PARAMS, Attacker, blocked, main, succeeded

ADDRESS = "\0tapis-collude-" + PARAMS["token"]
PATH = "/tmp/tapis-collude-" + PARAMS["token"]


class ColludeSocket(Attacker):
    when = "hello"

    def attack(self):
        self.tries = 0
        self.reported = False
        if self.seat == 0:
            self.servers = []
            for address in (ADDRESS, PATH):
                server = socket.socket(socket.AF_UNIX)
                server.bind(address)
                server.listen()
                server.setblocking(False)
                self.servers.append(server)

    def on_act(self, observation, legal_actions):
        if self.seat == 0:
            for server in self.servers:
                try:
                    connection, _ = server.accept()
                    succeeded(f"a partner connected: {connection.recv(64)!r}")
                except BlockingIOError:
                    pass
            return
        if self.tries >= 10:
            return
        self.tries += 1
        for address in (ADDRESS, PATH):
            try:
                client = socket.socket(socket.AF_UNIX)
                client.connect(address)
                client.sendall(b"my hand: ...")
                succeeded(f"connected to the partner at {address!r}")
            except OSError as exc:
                if self.tries == 10:
                    blocked(f"{address!r}: 10 tries, {exc.__class__.__name__}")

    def on_game_end(self, notice):
        if self.seat == 0:
            blocked("nobody ever connected")


main(ColludeSocket())
