"""A bot that leaves a listening unix socket that no process holds, for the next table: sent,
with the socket it was sent over, over that very socket (a cycle that only the kernel's
garbage collector ends, some time after the table). It reports ``FOUND`` on stderr if the
socket of an earlier table answers, ``LEFT`` once its own is in flight."""

import socket
import sys

from tapis_bot import Bot, run

ADDRESS = b"\0tapis-trace-in-flight"

with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
    try:
        probe.connect(ADDRESS)
        print("FOUND socket_in_flight", file=sys.stderr, flush=True)
    except OSError:
        pass
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(ADDRESS)
listener.listen()
left, right = socket.socketpair()
socket.send_fds(right, [b"x"], [listener.fileno(), left.fileno()])
socket.send_fds(left, [b"x"], [right.fileno()])
for sock in (listener, left, right):
    sock.close()
print("LEFT socket_in_flight", file=sys.stderr, flush=True)


class First(Bot):
    name = "in-flight"

    def act(self, observation, legal_actions):
        return legal_actions[0]


run(First())
