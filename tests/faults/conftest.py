"""The fault-injection suite's fixtures (tests/faults/harness.py)."""

from tests.faults.harness import _print_recoveries, cluster, workers

__all__ = ["_print_recoveries", "cluster", "workers"]
