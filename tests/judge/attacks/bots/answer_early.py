"""Answer before being asked: an answer right after ready, then play properly."""

from _raw import answer, messages, ready, send

for message in messages():
    if message.get("type") == "hello":
        ready()
        send(b'{"id":1,"action":"2C"}\n')
    elif message.get("type") == "act":
        answer(message)
