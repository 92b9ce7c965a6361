"""The behaviour metrics of one journaled AGI Maze game: one function per metric.

Each function takes an :class:`AgiMazeGame` (the game's steps replayed once on the embedded
engine, :func:`maze_envs.reading.agimaze.replay_steps`) and returns one number; its
docstring is the definition ``maze-envs analyze`` prints (each is a row of
:data:`maze_envs.metrics.METRICS`). Only the policy's own decisions (status ``ok``) count,
never a fallback or an outage. The per-decision metrics (decisions, fallbacks, outages, wall
moves and the wall-move rate) are :mod:`maze_envs.metrics`'s, as in the benchmark row.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Final

from maze_envs.agimaze.recording import SET_ENV_ID
from maze_envs.agimaze.types import OPPOSITE_DIRECTION
from maze_envs.journal import GameInfo, TurnRecord
from maze_envs.metrics import Step, metric_function
from maze_envs.reading.agimaze import decision_steps, lost_steps, not_played, replay_steps

_OPPOSITE: Final = OPPOSITE_DIRECTION


class AgiMazeGame:
    """One journaled AGI Maze game's steps as the metric functions read them: ``steps`` (the
    replayed steps), ``labyrinths`` (their boards), ``counted`` (each decision as the metrics
    count it)."""

    def __init__(self, info: GameInfo, turns: list[TurnRecord]) -> None:
        self.info = info
        self.steps, self.labyrinths = replay_steps(info, turns)
        self.counted: list[Step] = decision_steps(self.steps, turns, info)
        self.is_set = info.env_id == SET_ENV_ID

    def own(self, k: int) -> bool:
        """Whether step ``k`` was the policy's play (the first step, the reset, always is)."""
        return k == 0 or self.counted[k - 1].status == "ok"

    @cached_property
    def walk(self) -> dict[str, Any]:
        """One walk over the steps: the actions not played (by the policy's play), the steps
        played, reversals, revisits, the cells seen per labyrinth and the labyrinths solved."""
        steps, labyrinths = self.steps, self.labyrinths
        bad = reversals = revisits = played = 0
        seen: dict[int, set[tuple[int, int]]] = {}
        last_move: dict[int, str | None] = {}
        solved: set[int] = set()
        for k, step in enumerate(steps):
            lab = step["lab"]
            events = (step.get("formal") or {}).get("events") or []
            own = self.own(k)
            if k > 0:
                if not_played(steps[k - 1], step, self.is_set):
                    bad += own
                elif step["action"] != "start":
                    played += 1
            if lab < 0 or step["pos"] is None:
                continue
            board = labyrinths[lab]
            cell = (step["pos"][0], step["pos"][1])
            inside = 0 <= cell[0] < board["rows"] and 0 <= cell[1] < board["cols"]
            visited = seen.setdefault(lab, set())
            if k > 0 and "moved" in events and step["action"] in _OPPOSITE:
                if last_move.get(lab) == _OPPOSITE[step["action"]] and own:
                    reversals += 1
                last_move[lab] = step["action"]
                if inside and cell in visited and own:
                    revisits += 1
            if inside:
                visited.add(cell)
            if step.get("solved"):
                solved.add(lab)
        return {
            "bad": bad,
            "played": played,
            "reversals": reversals,
            "revisits": revisits,
            "seen": seen,
            "solved": solved,
        }

    @cached_property
    def lost(self) -> list[dict[str, Any]]:
        """The dead states the player entered
        (:func:`maze_envs.reading.agimaze.lost_steps`)."""
        return lost_steps(self.steps, self.labyrinths)


@metric_function
def played_steps(game: AgiMazeGame) -> int:
    """Steps played: actions less those not played and the set's ``start``s."""
    return int(game.walk["played"])


@metric_function
def solved(game: AgiMazeGame) -> int:
    """Labyrinths solved: 0/1 for one labyrinth; for a set, how many."""
    return len(game.walk["solved"])


@metric_function
def bad_actions(game: AgiMazeGame) -> int:
    """Actions not played: actions of the policy's play that were not played (an ``error`` was
    recorded: the labyrinth does not offer it; in a set: a move while it waits, ``start`` while
    one runs)."""
    return int(game.walk["bad"])


@metric_function
def reversals(game: AgiMazeGame) -> int:
    """Reversals: moves of the policy's play straight back the way the previous move came
    (``left`` after a ``right`` that moved, ...)."""
    return int(game.walk["reversals"])


@metric_function
def cells_visited(game: AgiMazeGame) -> int:
    """Cells visited: distinct cells the player stood on, summed over the labyrinths played."""
    return sum(len(cells) for cells in game.walk["seen"].values())


@metric_function
def coverage(game: AgiMazeGame) -> float | None:
    """Coverage: the cells visited as a share of the cells of the labyrinths played (None
    without any)."""
    seen = game.walk["seen"]
    area = sum(game.labyrinths[lab]["rows"] * game.labyrinths[lab]["cols"] for lab in seen)
    return cells_visited(game) / area if area else None


@metric_function
def revisits(game: AgiMazeGame) -> int:
    """Revisits: moves of the policy's play into a cell the player had stood on before."""
    return int(game.walk["revisits"])


@metric_function
def lost_at(game: AgiMazeGame) -> int | None:
    """Lost at: the step at which the player entered a dead state, one from which no action
    sequence wins (:func:`~maze_envs.agimaze.planner.dead_states`), counted in the steps of
    that labyrinth: the episode was unwinnable from then on, not merely slow; None when it
    never happened (in a set, the first labyrinth where it happened)."""
    return game.lost[0]["step"] if game.lost else None
