"""The example bots of docs/examples/ and the Python SDK as the site serves them, so that an
author can start from the site alone: a page per example (its files shown, how to try and
upload it), each file to download, a zip of a package example, and the SDK's file.

Only the files found in those folders are served, by name: nothing else of the repository.
"""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile
from collections.abc import Sequence
from pathlib import Path

from django.conf import settings
from django.http import Http404
from django.urls import reverse

from judge.launchers.runtimes import runtime_for_file
from tournaments.page_selectors.docs import heading_anchor

PACKAGE_MANIFEST = "tapis.json"
PACKAGE_ZIP = "bot.zip"
SDK_FILES = ("tapis_bot.py",)


def _examples_dir() -> Path:
    return Path(settings.BASE_DIR) / "docs" / "examples"


def _sdk_dir() -> Path:
    return Path(settings.BASE_DIR) / "judge" / "sdk"


@dataclasses.dataclass(frozen=True, slots=True)
class ExampleFile:
    name: str  # its path inside the example, "src/main.rs"
    text: str
    url: str


@dataclasses.dataclass(frozen=True, slots=True)
class ExamplePage:
    folder: str  # "python", "rust"
    runtime: str  # "python3", "rust"
    files: Sequence[ExampleFile]
    upload: str  # what to upload: a file's name, or the package's zip
    upload_url: str
    package: bool  # a folder with tapis.json (uploaded as a zip)
    runtime_section: str  # the protocol guide's section on this runtime


def example_folders() -> list[str]:
    """The examples, by folder name ("c", "python", "rust"...)."""
    root = _examples_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.is_symlink())


def _files(folder: str) -> list[str]:
    if folder not in example_folders():
        raise Http404("no such example")
    root = _examples_dir() / folder
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink() and not p.name.startswith(".")
    )


def _runtime(folder: str, names: list[str]) -> tuple[str, str | None]:
    """The example's runtime and, for a package, None as its single file (else that file)."""
    if PACKAGE_MANIFEST in names:
        manifest = json.loads((_examples_dir() / folder / PACKAGE_MANIFEST).read_text())
        return str(manifest["runtime"]), None
    sources = [n for n in names if runtime_for_file(n)]
    if len(sources) != 1:
        raise Http404("this example is not a bot")
    return str(runtime_for_file(sources[0])), sources[0]


def example_page(*, folder: str) -> ExamplePage:
    names = _files(folder)
    runtime, single = _runtime(folder, names)
    title = {"python3": "Python", "javascript": "JavaScript", "cpp": "C++"}.get(
        runtime, runtime.capitalize()
    )
    upload = single or PACKAGE_ZIP
    return ExamplePage(
        folder=folder,
        runtime=runtime,
        files=[
            ExampleFile(
                name=name,
                text=(_examples_dir() / folder / name).read_text(encoding="utf-8"),
                url=reverse("tournaments:docs-example-file", args=[folder, name]),
            )
            for name in names
        ],
        upload=upload,
        upload_url=reverse("tournaments:docs-example-file", args=[folder, upload]),
        package=single is None,
        runtime_section=heading_anchor(f"{title} ({runtime})"),
    )


def example_file(*, folder: str, name: str) -> bytes:
    """One file of an example, or a package example's zip (``bot.zip``), as uploaded."""
    names = _files(folder)
    root = _examples_dir() / folder
    if name == PACKAGE_ZIP and PACKAGE_MANIFEST in names:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for member in names:
                archive.write(root / member, member)
        return buffer.getvalue()
    if name not in names:
        raise Http404("no such file in this example")
    return (root / name).read_bytes()


def sdk_file(*, name: str) -> bytes:
    if name not in SDK_FILES:
        raise Http404("no such file of the SDK")
    return (_sdk_dir() / name).read_bytes()


def served_files() -> dict[str, str]:
    """The addresses of the files the guides link to, by their path from docs/ (as a guide's
    link resolves: ``examples/python/bot.py``, ``../judge/sdk/tapis_bot.py``)."""
    served = {
        f"../judge/sdk/{name}": reverse("tournaments:docs-sdk", args=[name]) for name in SDK_FILES
    }
    for folder in example_folders():
        page = reverse("tournaments:docs-example", args=[folder])
        served[f"examples/{folder}"] = page
        for name in _files(folder):
            served[f"examples/{folder}/{name}"] = page
    return served
