"""A scripted fake bot: it follows ``script.json`` found next to it, step by step.

Like python-chess's mock engine that ``expect``s lines: each step either checks what the judge
sent (and exits with status 3 and a message on stderr when it differs) or sends something, good
or bad. Steps are ``[op, arg]``:

- ``["expect", {...}]``: read one message; each given key must have the given value.
- ``["expect_act"]``: read messages until an ``act`` (notices in between are fine).
- ``["answer"]``: answer the last ``act`` with its first legal action.
- ``["send", "text"]``: write a line; ``{id}`` becomes the last act's id, ``{first}`` its first
  legal action as JSON.
- ``["send_raw", "hex"]``: write these bytes as they are.
- ``["flood", n]``: write ``n`` bytes of ``x`` without a newline.
- ``["sleep", seconds]``, ``["exit", status]``, ``["close_stdin"]``, ``["close_stdout"]``,
  ``["log", "text"]``.
- ``["play"]``: answer every act with its first legal action until ``bye``, then exit 0.
- ``["play_on"]``: the same, but ignore ``bye`` and, at the end of the input, sleep an hour.
- ``["log_pid"]``: write the bot's pid and a newline on stderr.
- ``["hang"]``: read and ignore everything until the input ends.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "script.json")) as f:
    SCRIPT = json.load(f)

stdin = sys.stdin.buffer
out = sys.stdout.buffer
last = None


def fail(message):
    sys.stderr.write("EXPECT FAILED: " + message + "\n")
    sys.stderr.flush()
    sys.exit(3)


def read():
    line = stdin.readline()
    if not line:
        fail("end of input")
    return json.loads(line)


def send(data):
    out.write(data)
    out.flush()


def answer(message):
    action = json.dumps(message["legal_actions"][0])
    send(b'{"id":%d,"action":%s}\n' % (message["id"], action.encode()))


for op, *args in SCRIPT:
    arg = args[0] if args else None
    if op == "expect":
        message = read()
        for key, value in arg.items():
            if message.get(key) != value:
                fail(f"{key}={message.get(key)!r}, expected {value!r} in {message!r}"[:500])
        if message.get("type") == "act":
            last = message
    elif op == "expect_act":
        while True:
            message = read()
            if message.get("type") == "act":
                last = message
                break
            if message.get("type") == "bye":
                fail("bye while waiting for an act")
    elif op == "answer":
        answer(last)
    elif op == "send":
        text = arg
        if last is not None:
            text = text.replace("{id}", str(last["id"]))
            text = text.replace("{first}", json.dumps(last["legal_actions"][0]))
        send(text.encode() + b"\n")
    elif op == "send_raw":
        send(bytes.fromhex(arg))
    elif op == "flood":
        chunk = b"x" * 65536
        left = arg
        while left > 0:
            send(chunk[:left])
            left -= len(chunk)
    elif op == "sleep":
        time.sleep(arg)
    elif op == "exit":
        sys.exit(arg)
    elif op == "close_stdin":
        os.close(0)
    elif op == "close_stdout":
        sys.stdout.flush()
        os.close(1)
    elif op == "log":
        sys.stderr.write(arg)
        sys.stderr.flush()
    elif op == "play":
        while True:
            line = stdin.readline()
            if not line:
                sys.exit(4)
            message = json.loads(line)
            if message.get("type") == "act":
                answer(message)
            elif message.get("type") == "bye":
                sys.exit(0)
    elif op == "play_on":
        for line in stdin:
            message = json.loads(line)
            if message.get("type") == "act":
                answer(message)
        time.sleep(3600)
    elif op == "log_pid":
        sys.stderr.write(f"{os.getpid()}\n")
        sys.stderr.flush()
    elif op == "hang":
        try:
            while stdin.readline():
                pass
        except (OSError, ValueError):
            time.sleep(3600)
    else:
        fail("unknown step " + op)
