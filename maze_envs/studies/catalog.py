"""The studies shipped with the package (``maze_envs/studies/data/*.toml``), and finding one.

A study is named (``maze-envs study run radio``) or given as a file
(``maze-envs study run my-radio.toml``): the shipped files are starting points to copy
(``maze-envs study show radio > my-radio.toml``) and change.

    >>> [study.name for study, _ in shipped()][:3]
    ['ladder', 'radio', 'coordinates']
"""

from __future__ import annotations

import difflib
from functools import cache
from importlib import resources
from pathlib import Path

from maze_envs.studies.spec import Study


@cache
def shipped() -> tuple[tuple[Study, str], ...]:
    """Every shipped study with the text of its file, in the order of their numbers."""
    folder = resources.files("maze_envs.studies").joinpath("data")
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".toml"):
            text = entry.read_text(encoding="utf-8")
            found.append((Study.from_toml(text, f"maze_envs/studies/data/{entry.name}"), text))
    return tuple(sorted(found, key=lambda pair: (pair[0].number, pair[0].name)))


def find(name: str) -> tuple[Study, str, str]:
    """The study ``name`` (a shipped study's name, or the path of a study file): the study, the
    text of its file and where it came from. ValueError naming the studies for an unknown one."""
    path = Path(name)
    if name.endswith(".toml") or path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot read study file {path}: {exc}") from None
        return Study.from_toml(text, str(path)), text, str(path)
    for study, text in shipped():
        if study.name == name:
            return study, text, f"maze_envs/studies/data/{study.name}.toml"
    names = [study.name for study, _ in shipped()]
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ValueError(
        f"no study {name!r}{hint}; the studies are {', '.join(names)} (maze-envs study list), "
        "or give the path of a study file"
    )
