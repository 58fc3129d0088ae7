"""Exit at once, before saying ready."""

import sys

sys.stderr.write("ATTACK exit_at_once attempting: exiting\n")
sys.exit(0)
