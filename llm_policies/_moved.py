"""Import paths of modules that moved (issue 26): the old name is the new module, with a warning.

``moved(__name__, "llm_policies.apps.study_run")`` in the old module's file makes the old name
the very module of the new one (one module object, so registries such as Inspect's ``@task`` see
each object once) and warns once that the name is deprecated. For a moved package, its old
submodule names (``llm_policies.inspect.tasks``) resolve to the new package's submodules.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``old.<name>`` as the module ``new.<name>``."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def find_spec(self, fullname, path=None, target=None):  # type: ignore[no-untyped-def]
        if not fullname.startswith(self.old + "."):
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.new + spec.name.removeprefix(self.old))

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module is the new one, already imported."""


def moved(old: str, new: str) -> None:
    """Make the module ``old`` (being imported) the module ``new``, warning the caller."""
    warnings.warn(
        f"{old} moved to {new}; import it from there ({old} will be removed)",
        DeprecationWarning,
        stacklevel=3,
    )
    module = importlib.import_module(new)
    if hasattr(module, "__path__") and not any(
        isinstance(finder, _Alias) and finder.old == old for finder in sys.meta_path
    ):
        sys.meta_path.insert(0, _Alias(old, new))
    sys.modules[old] = module
