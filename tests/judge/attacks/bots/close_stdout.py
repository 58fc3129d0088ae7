"""Say ready, close stdout, and stay alive reading the judge's messages."""

import os
import sys

from _raw import ready

sys.stdin.buffer.readline()  # hello
ready()
os.close(1)
sys.stderr.write("ATTACK close_stdout attempting: stdout closed\n")
sys.stderr.flush()
for _line in sys.stdin.buffer:
    pass
