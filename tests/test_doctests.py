"""The examples in the docstrings of every package (the engine, the judge, the tournaments,
the API and the configuration) run and hold.

Modules compiled by mypyc keep no docstrings, so their examples are read from the source file
(the same text) and run against the compiled module: the examples check the code in use.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

import api
import config
import games
import judge
import tournaments
from games import _native


def _source_tests(module: ModuleType) -> list[doctest.DocTest]:
    """The docstring examples of a compiled module, from its ``.py`` source."""
    path = Path(games.__file__).parent / f"{module.__name__.rsplit('.', 1)[1]}.py"
    tree = ast.parse(path.read_text(), filename=str(path))
    parser = doctest.DocTestParser()
    tests = []
    for node in [tree, *ast.walk(tree)]:
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        docstring = ast.get_docstring(node, clean=False)
        if not docstring:
            continue
        name = module.__name__ if isinstance(node, ast.Module) else node.name
        line = 0 if isinstance(node, ast.Module) else node.lineno
        test = parser.get_doctest(docstring, dict(vars(module)), name, str(path), line)
        if test.examples:
            tests.append(test)
    return tests


def _tests(module: ModuleType) -> list[doctest.DocTest]:
    if _native.in_use(module):
        return _source_tests(module)
    return [test for test in doctest.DocTestFinder().find(module) if test.examples]


def _modules_with_examples() -> list[str]:
    names = []
    for package in (games, judge, tournaments, api, config):
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
            if _tests(importlib.import_module(info.name)):
                names.append(info.name)
    return sorted(names)


def test_compiled_modules_examples_are_found() -> None:
    """Compiled or not, the engine's modules with examples are all tested."""
    names = _modules_with_examples()

    for name in _native.COMPILED_MODULES:
        assert name in names


@pytest.mark.parametrize("name", _modules_with_examples())
def test_docstring_examples(name: str) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in _tests(importlib.import_module(name)):
        runner.run(test)
    result = runner.summarize(verbose=False)

    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} failing example(s) in {name}"
