"""Import paths of modules that moved (issue 26): the old name is the new module, with a warning.

:func:`install` puts one finder in front of ``sys.meta_path`` for a table ``{old: new}``: the
old name of a module (``llm_policies.study_run``) and of every module below a moved package
(``llm_policies.inspect.tasks``) resolves to the very module of the new name (one module object,
so registries such as Inspect's ``@task`` see each object once), and the first import of an old
name warns that it is deprecated. No file is left at the old paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Mapping, Sequence
from types import ModuleType


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old name as the module of its new one (see the module docstring)."""

    def __init__(self, table: Mapping[str, str]) -> None:
        self.table = dict(table)
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def _target(self, fullname: str) -> str | None:
        for old, new in self.table.items():
            if fullname == old or fullname.startswith(old + "."):
                return new + fullname.removeprefix(old)
        return None

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if self._target(fullname) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = self._target(spec.name)
        assert new is not None
        if spec.name in self.table:
            warnings.warn(
                f"{spec.name} moved to {new}; import it from there ({spec.name} will be removed)",
                DeprecationWarning,
                stacklevel=2,
            )
        module = importlib.import_module(new)
        self._specs[spec.name] = module.__spec__  # the import system writes the old one over it
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module is the new one, already imported; its own spec back."""
        module.__spec__ = self._specs.pop(module.__spec__.name if module.__spec__ else "", None)


def install(table: Mapping[str, str]) -> None:
    """Resolve each old module name of ``table`` (and the modules below it) to its new one."""
    if not any(isinstance(finder, _Moved) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Moved(table))
