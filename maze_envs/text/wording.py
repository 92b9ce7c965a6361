"""Versioned wording of the text a model reads, loaded from this package's data files.

Every sentence of the renderers lives in ``maze_envs/text/data/<env>-<version>.json``. A released
file is never edited: a change of wording is a new version, so a journal that names the version it
was played with can always be read with the exact words its agents read.

Example:
    >>> wording = load_wording("escape")
    >>> wording.version
    'escape-v1'
    >>> wording.label("on_exit_yes")
    'On the exit: yes.'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Final

from maze_envs._registration import EnvKind

#: Newest wording version per environment (what the renderers use by default).
LATEST: Final[dict[str, str]] = {"escape": "v1", "agimaze": "v1"}


@dataclass(frozen=True)
class Wording:
    """One wording file: ``sections`` maps a section name (``legend``, ``labels``...) to text."""

    version: str
    sections: dict[str, dict[str, Any]]

    def text(self, section: str, key: str) -> str:
        """The string ``key`` of ``section``; KeyError naming both when absent."""
        try:
            value = self.sections[section][key]
        except KeyError:
            raise KeyError(f"wording {self.version} has no {section}.{key}") from None
        if not isinstance(value, str):
            raise KeyError(f"wording {self.version}: {section}.{key} is not a string")
        return value

    def table(self, section: str, key: str) -> dict[str, str]:
        """The string table ``key`` of ``section`` (e.g. one sentence per move result)."""
        value = self.sections[section][key]
        if not isinstance(value, dict):
            raise KeyError(f"wording {self.version}: {section}.{key} is not a table")
        return value

    def label(self, key: str) -> str:
        """Shorthand for ``text("labels", key)``."""
        return self.text("labels", key)


def available_versions(env: EnvKind) -> list[str]:
    """The wording versions shipped for ``env`` (``["v1", ...]``)."""
    names = [p.name for p in resources.files("maze_envs.text").joinpath("data").iterdir()]
    prefix = f"{env}-"
    return sorted(n[len(prefix) : -len(".json")] for n in names if n.startswith(prefix))


@cache
def load_wording(env: EnvKind, version: str | None = None) -> Wording:
    """The wording ``version`` (default: :data:`LATEST`) of ``env`` (``"escape"``/``"agimaze"``)."""
    if env not in LATEST:
        raise ValueError(f"unknown environment kind {env!r}; choose 'escape' or 'agimaze'")
    chosen = version or LATEST[env]
    path = resources.files("maze_envs.text").joinpath("data").joinpath(f"{env}-{chosen}.json")
    if not path.is_file():
        raise ValueError(
            f"no {env} wording version {chosen!r}; shipped: {', '.join(available_versions(env))}"
        )
    data = json.loads(path.read_text(encoding="utf-8"))
    sections = {k: v for k, v in data.items() if isinstance(v, dict)}
    return Wording(version=str(data["version"]), sections=sections)
