"""Answer before being asked: an answer right after ready, then play properly.

Both lines go in one write, so that the early answer is surely there before the first request,
however loaded the machine (two writes could let the judge ask in between, and take the early
line for the answer to its request)."""

from _raw import answer, messages, send

for message in messages():
    if message.get("type") == "hello":
        send(b'{"type":"ready","name":"raw"}\n{"id":1,"action":"2C"}\n')
    elif message.get("type") == "act":
        answer(message)
