"""A hand-made 5x5 board whose every value in the rule tests can be checked by hand.

The maze is a comb: the top row is one corridor and every column hangs down from it. Rows grow
south, columns east (``grid`` convention); absolute coordinates are x = column, y = 4 - row.

    +---+---+---+---+---+
    | C      tree       |      C starts at (0, 0)   abs (0, 4)
    +   +   +   +   +   +
    |   |   |   |   |   |
    +   +   +   +   +   +
    |   |   |   |   |pia|      piano at (2, 4)
    +   +   +   +   +   +
    |   |   |   |   |   |
    +   +   +   +   +   +
    |   |   | B |   | A |      A starts at (4, 4) abs (4, 0); B at (4, 2) abs (2, 0)
    +EEE+---+---+---+---+      exit (4, 0), doorway in the south wall

Path distances to the exit: (r, c) -> 4 + c + r for c > 0; (r, 0) -> 4 - r.
So A is 12 moves away, B 10, C 4; the fastest possible finish is turn 12.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from maze_envs.escape.env import MazeEscapeEnv
from maze_envs.escape.generator import FixedGenerator, Layout
from maze_envs.escape.types import Config
from maze_envs.grid import EAST, SOUTH, carve, empty_grid

N, E, S, W, STAY = 0, 1, 2, 3, 4


def comb_layout() -> Layout:
    maze = empty_grid(5, 5)
    for c in range(4):
        carve(maze, (0, c), EAST)
    for c in range(5):
        for r in range(4):
            carve(maze, (r, c), SOUTH)
    return Layout(
        maze=maze,
        exit_cell=(4, 0),
        doorway=SOUTH,
        landmarks=(((0, 2), "tree"), ((2, 4), "piano")),
        starts=((4, 4), (4, 2), (0, 0)),
    )


def comb_env(**overrides: Any) -> MazeEscapeEnv:
    """The comb board with the given Config overrides (width/height fixed at 5)."""
    config = Config(**{"width": 5, "height": 5, **overrides})
    return MazeEscapeEnv(config, generator=FixedGenerator(comb_layout()))


def act(
    move: int = STAY, *, edit: tuple[int, int, str] | None = None, radio: str = ""
) -> dict[str, Any]:
    """A splice-mode action."""
    notebook = (
        {"edit": 1, "start": edit[0], "end": edit[1], "text": edit[2]}
        if edit
        else {"edit": 0, "start": 0, "end": 0, "text": ""}
    )
    return {"move": move, "notebook": notebook, "radio": radio}


def log_act(move: int = STAY, *, append: str = "", radio: str = "") -> dict[str, Any]:
    """A rolling-log-mode action."""
    return {"move": move, "notebook": {"append": append}, "radio": radio}


def step(env: MazeEscapeEnv, **actions: dict[str, Any]) -> tuple[Any, ...]:
    """One turn; agents not named stay put (splice or log form chosen from the config)."""
    stay = act() if env.config.notebook_mode == "splice" else log_act()
    return env.step({a: actions.get(a, stay) for a in env.agents})


def as_list(value: Any) -> Any:
    return np.asarray(value).tolist()
