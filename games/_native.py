"""Which engine runs: the hot modules compiled by mypyc, or the pure-Python sources.

The ``.py`` files are the source of truth and the fallback. ``make compile`` (``python -m
games.compile``) builds the modules of :data:`COMPILED_MODULES` with mypyc into
``games/_compiled/`` and writes, last, a manifest holding the SHA-256 of every ``games/*.py``
file the build read, the Python it was built for and the file of each module. ``import games``
calls :func:`activate` first: it uses the compiled modules only when the manifest matches the
sources now on disk and this Python, by putting a finder for exactly those module names and
files in front of ``sys.meta_path``. Any edit to any file of the package (the compiled modules
also depend on the types of the ones they import) makes the build stale: the engine then runs
in pure Python and says so in one line on stderr until ``make compile`` runs again. Nothing
else is trusted: not the files' times, not a module found by chance on the path.

``TAPIS_PURE_PYTHON=1`` forces pure Python. ``games.COMPILED`` and ``games.ENGINE`` tell which
engine is in use.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Final

#: The modules mypyc compiles, in import order. games.base is not one of them: Roi's and
#: Dutch's Game and State subclasses, being interpreted, could not derive from native classes.
COMPILED_MODULES: Final = (
    "games.cards",
    "games.tricks",
    "games.dealing_fast",
    "games.hearts",
    "games.hearts_fast",
)
#: The shared library that holds the compiled code of every module (each module's own
#: extension is a small shim that loads it).
LIBRARY: Final = "games._engine__mypyc"
PURE_PYTHON_VARIABLE: Final = "TAPIS_PURE_PYTHON"
MANIFEST_FORMAT: Final = 1

PACKAGE_DIR: Final = Path(__file__).resolve().parent
BUILD_DIR: Final = PACKAGE_DIR / "_compiled"
MANIFEST: Final = BUILD_DIR / "manifest.json"


def sources_digest() -> dict[str, str]:
    """The SHA-256 of every ``.py`` file of the package, by file name."""
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(PACKAGE_DIR.glob("*.py"))
    }


def python_tag() -> dict[str, str]:
    """What a build is bound to besides the sources: this interpreter's ABI."""
    return {
        "cache_tag": str(sys.implementation.cache_tag),
        "extension_suffix": importlib.machinery.EXTENSION_SUFFIXES[0],
        "version": sys.version.split()[0],
    }


def forced_pure() -> bool:
    return os.environ.get(PURE_PYTHON_VARIABLE, "").strip().lower() not in ("", "0", "false", "no")


def check_build() -> tuple[dict[str, Path] | None, str]:
    """The compiled module files to use (None: pure Python) and why, without importing them."""
    try:
        manifest = json.loads(MANIFEST.read_bytes())
    except FileNotFoundError:
        return None, "not built (run make compile)"
    except (OSError, ValueError) as exc:
        return None, f"stale: unreadable {MANIFEST.name} ({exc})"
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        return None, "stale: a manifest of another format (run make compile)"
    if manifest.get("python") != python_tag():
        return None, f"stale: built for another Python ({manifest.get('python')})"
    built = manifest.get("sources")
    if not isinstance(built, dict):
        return None, "stale: the manifest lists no sources"
    now = sources_digest()
    if built != now:
        changed = sorted(n for n in built.keys() | now.keys() if built.get(n) != now.get(n))
        return None, f"stale: games/{', games/'.join(changed)} changed since make compile"
    modules = manifest.get("modules")
    if not isinstance(modules, dict) or set(modules) != {*COMPILED_MODULES, LIBRARY}:
        return None, "stale: the manifest lists other modules (run make compile)"
    files = {name: BUILD_DIR / str(file) for name, file in modules.items()}
    missing = [str(path.name) for path in files.values() if not path.is_file()]
    if missing:
        return None, f"stale: missing {', '.join(missing)} (run make compile)"
    return files, "compiled with mypyc"


class CompiledFinder(importlib.abc.MetaPathFinder):
    """Finds exactly the compiled modules of a checked build, at their recorded files."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        file = self.files.get(fullname)
        if file is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(file))
        return importlib.util.spec_from_file_location(fullname, file, loader=loader)


def activate() -> tuple[bool, str]:
    """Use the compiled modules if the build matches the sources; (whether, why). Called once,
    when games/__init__.py imports this module before any engine module. A stale or broken
    build is reported in one line on stderr; no build at all (the plain pure-Python install)
    stays silent."""
    if forced_pure():
        return False, f"pure Python ({PURE_PYTHON_VARIABLE} is set)"
    if any(name in sys.modules for name in COMPILED_MODULES):
        return False, "pure Python (the engine modules were imported before games)"
    files, why = check_build()
    if files is None:
        if why.startswith("stale"):
            warn(f"the compiled engine is {why}: using pure Python")
        return False, f"pure Python (compiled engine {why})"
    finder = CompiledFinder(files)
    sys.meta_path.insert(0, finder)
    try:
        importlib.import_module(LIBRARY)
    except Exception as exc:  # a broken build must never break the engine: fall back
        sys.meta_path.remove(finder)
        sys.modules.pop(LIBRARY, None)
        warn(f"the compiled engine does not load ({type(exc).__name__}: {exc}): using pure Python")
        return False, "pure Python (the compiled engine does not load)"
    return True, why


def in_use(module: ModuleType) -> bool:
    """Whether a module was loaded from a compiled extension."""
    loader = module.__spec__.loader if module.__spec__ else None
    return isinstance(loader, importlib.machinery.ExtensionFileLoader)


def warn(message: str) -> None:
    """One line on stderr, whatever the message holds."""
    print("warning: games:", " ".join(message.split()), file=sys.stderr)


ACTIVE, WHY = activate()
