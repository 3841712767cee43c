"""Packages whose names are imported when first used (PEP 562).

A package lists its public names as the relative imports of an `if TYPE_CHECKING:` block (what type checkers and
readers see) and calls `lazy_names(__name__, __file__)`: that block, read once from the source, says which submodule
holds each name. Importing the package then costs nothing; its first use of a name imports that name's submodule.
The terminal (`consulta --help`, `consulta asks`) so never pays for the engine it does not use.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, file: str) -> Callable[[str], Any]:
    """The module `__getattr__` of `package` (whose `__init__` is `file`): each name of its `if TYPE_CHECKING:`
    relative imports, imported from its submodule when first asked for and kept in the package."""
    where: dict[str, str] = {}
    for node in ast.parse(Path(file).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.level == 1 and statement.module:
                    for alias in statement.names:
                        where[alias.asname or alias.name] = "." + statement.module

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module hook's own name
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(where[name], package), name)
        vars(import_module(package))[name] = value  # the next use is a plain attribute
        return value

    return __getattr__
