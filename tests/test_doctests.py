"""The examples in the docstrings of the engine and the judge run and hold."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from types import ModuleType

import pytest

import games
import judge


def _modules_with_examples() -> list[str]:
    finder = doctest.DocTestFinder()
    names = []
    for package in (games, judge):
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
            module: ModuleType = importlib.import_module(info.name)
            if any(test.examples for test in finder.find(module)):
                names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules_with_examples())
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)

    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} failing example(s) in {name}"
