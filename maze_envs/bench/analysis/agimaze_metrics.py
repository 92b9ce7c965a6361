"""Behavioural metrics of one AGI Maze game (``AgiMaze-v0`` or a labyrinth set).

The AGI Maze counterparts of the Maze Escape metrics that apply to a single player, from the
journal's rows with the player's cells rebuilt by replaying the recorded actions on the embedded
engine (:func:`maze_envs.view.agimaze_data.replay_steps`):

``decisions``       actions sent (the set's ``start`` included);
``bad_actions``     actions that were not played (an ``error`` was recorded: the labyrinth does
                    not offer it; in a set: a move while it waits, ``start`` while one runs);
``wall_moves``      moves into a wall or the monolith (``bumped_wall`` / ``bumped_monolith``),
                    ``wall_move_rate`` per decision;
``reversals``       moves straight back the way the previous move came (``left`` after a
                    ``right`` that moved, ...);
``cells_visited``, ``coverage``, ``revisits``  as for Maze Escape, summed over the labyrinths
                    played (coverage over their cells);
``steps``, ``solved`` steps played (actions less those not played and the set's ``start``s) and
                    labyrinths solved (0/1; for a set, how many);
``lost_at``         the step at which the player entered a *dead state*, one from which no action
                    sequence wins (:func:`~maze_envs.agimaze.planner.dead_states`), counted in
                    the steps of that labyrinth: the episode was unwinnable from then on, not
                    merely slow; None when it never happened. In a set, the first labyrinth
                    where it happened, named by ``lost_labyrinth``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Final

from maze_envs.journal import GameInfo, TurnRecord
from maze_envs.view.agimaze_data import SET_ENV_ID, lost_steps, replay_steps

_OPPOSITE: Final = {"up": "down", "down": "up", "left": "right", "right": "left"}
_BUMPS: Final = frozenset({"bumped_wall", "bumped_monolith"})


@dataclass(frozen=True)
class AgiMazeMetrics:
    """One AGI Maze game's behaviour (see the module docstring)."""

    game: int
    env_id: str
    seed: int | None
    labyrinths: str
    decisions: int
    steps: int
    solved: int
    bad_actions: int
    wall_moves: int
    wall_move_rate: float | None
    reversals: int
    cells_visited: int
    coverage: float | None
    revisits: int
    lost_at: int | None = None
    lost_labyrinth: str | None = None
    note: str = ""

    def row(self) -> dict[str, Any]:
        """The metrics as one table row (column name -> value)."""
        return asdict(self)


def _not_played(before: dict[str, Any], step: dict[str, Any], is_set: bool) -> bool:
    """A labyrinth set ignores a move while it waits and a ``start`` while a labyrinth runs."""
    if not is_set:
        return False
    return (step["action"] == "start") != bool(before["waiting"])


def agimaze_metrics(info: GameInfo, turns: list[TurnRecord], note: str = "") -> AgiMazeMetrics:
    """The metrics of one AGI Maze game from its readable turns."""
    steps, labyrinths = replay_steps(info, turns)
    is_set = info.env_id == SET_ENV_ID
    decisions = len(steps) - 1
    bad = walls = reversals = revisits = 0
    seen: dict[int, set[tuple[int, int]]] = {}
    last_move: dict[int, str | None] = {}
    solved_labs: set[int] = set()
    played = 0
    for k, step in enumerate(steps):
        lab = step["lab"]
        events = (step.get("formal") or {}).get("events") or []
        if k > 0 and (step.get("error") or _not_played(steps[k - 1], step, is_set)):
            bad += 1
        elif k > 0 and step["action"] != "start":
            played += 1
        if any(e in _BUMPS for e in events):
            walls += 1
        if lab < 0 or step["pos"] is None:
            continue
        board = labyrinths[lab]
        cell = (step["pos"][0], step["pos"][1])
        inside = 0 <= cell[0] < board["rows"] and 0 <= cell[1] < board["cols"]
        visited = seen.setdefault(lab, set())
        if k > 0 and "moved" in events and step["action"] in _OPPOSITE:
            if last_move.get(lab) == _OPPOSITE[step["action"]]:
                reversals += 1
            last_move[lab] = step["action"]
            if inside and cell in visited:
                revisits += 1
        if inside:
            visited.add(cell)
        if step.get("solved"):
            solved_labs.add(lab)
    cells = sum(len(v) for v in seen.values())
    area = sum(labyrinths[lab]["rows"] * labyrinths[lab]["cols"] for lab in seen)
    names = [lab["name"] for lab in labyrinths if lab is not None]
    lost = lost_steps(steps, labyrinths)
    return AgiMazeMetrics(
        game=info.id,
        env_id=info.env_id,
        seed=info.seed,
        labyrinths=names[0] if len(names) == 1 else f"{len(names)} labyrinths",
        decisions=decisions,
        steps=played,
        solved=len(solved_labs),
        bad_actions=bad,
        wall_moves=walls,
        wall_move_rate=walls / decisions if decisions else None,
        reversals=reversals,
        cells_visited=cells,
        coverage=cells / area if area else None,
        revisits=revisits,
        lost_at=lost[0]["step"] if lost else None,
        lost_labyrinth=lost[0]["name"] if lost else None,
        note=note,
    )
