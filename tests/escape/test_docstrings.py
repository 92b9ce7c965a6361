"""The runnable examples in the Maze Escape docstrings stay runnable."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "maze_envs.maze_escape_v0",
    "maze_envs.escape.env",
    "maze_envs.escape.types",
    "maze_envs.escape.generator",
    "maze_envs.escape.notebook",
    "maze_envs.escape.radio",
    "maze_envs.escape.convert",
    "maze_envs.escape.replay",
    "maze_envs.journal",
    "maze_envs.view.escape_page",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
