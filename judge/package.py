"""The bot package format under the name the service imports it by (its upload checks):
judge.launchers.package is where it lives."""

from judge.launchers.package import (
    MAX_FILES,
    MAX_UNPACKED_BYTES,
    MAX_ZIP_BYTES,
    RUNTIMES,
    PackageError,
    PreparedBot,
    check,
    prepare,
)

__all__ = [
    "MAX_FILES",
    "MAX_UNPACKED_BYTES",
    "MAX_ZIP_BYTES",
    "RUNTIMES",
    "PackageError",
    "PreparedBot",
    "check",
    "prepare",
]
