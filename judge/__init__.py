"""The judge: runs sandboxed bots through the games engine. Never imports Django.

>>> from judge import run_table
>>> result = run_table(game="roi", bots=["builtin:lowest"] * 4, seed=7, sandbox="none")
>>> len(result.deal_points), result.faults
(10, ())
"""

from __future__ import annotations

from judge.faults import Fault, FaultKind
from judge.launchers.package import PackageError, PreparedBot
from judge.protocol import PROTOCOL_VERSION, ProtocolFault
from judge.runner import BotSpec, Limits, SeatResult, TableResult, run_table

__all__ = [
    "PROTOCOL_VERSION",
    "BotSpec",
    "Fault",
    "FaultKind",
    "Limits",
    "PackageError",
    "PreparedBot",
    "ProtocolFault",
    "SeatResult",
    "TableResult",
    "run_table",
]
