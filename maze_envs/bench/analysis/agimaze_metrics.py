"""Behavioural metrics of one AGI Maze game (``AgiMaze-v0`` or a labyrinth set).

The AGI Maze counterparts of the Maze Escape metrics that apply to a single player, from the
journal's rows with the player's cells rebuilt by replaying the recorded actions on the embedded
engine (:func:`maze_envs.reading.agimaze.replay_steps`):

``setup``, ``policy``, ``run_key``, ``status``  the benchmark arm of the game
                    (:mod:`.labels`) and how it ended, as for Maze Escape;
``decisions``       actions sent (the set's ``start`` included); ``fallbacks`` and ``outages``
                    of them were not the policy's play (:mod:`maze_envs.metrics`);
``bad_actions``     actions of the policy's play that were not played (an ``error`` was
                    recorded: the labyrinth does not offer it; in a set: a move while it waits,
                    ``start`` while one runs);
``moves_tried``, ``wall_moves``, ``wall_move_rate``  moves of the policy's play that were played;
                    those into a wall or the monolith (``bumped_wall`` / ``bumped_monolith``);
                    wall moves / moves tried (:func:`maze_envs.metrics.wall_move_rate`, the
                    benchmark row's number);
``reversals``       moves of the policy's play straight back the way the previous move came
                    (``left`` after a ``right`` that moved, ...);
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

from maze_envs.bench.analysis.agimaze_behaviour import AgiMazeGame
from maze_envs.bench.analysis.labels import game_labels
from maze_envs.bench.metrics import status_from_outcome
from maze_envs.journal import GameInfo, TurnRecord
from maze_envs.metrics import Metric, decision_metrics, metrics_for

#: The metrics of an AGI Maze row, in the table's order (each a field of :class:`AgiMazeMetrics`).
AGIMAZE_METRICS: Final[tuple[Metric, ...]] = metrics_for("analyze", "agimaze")


@dataclass(frozen=True)
class AgiMazeMetrics:
    """One AGI Maze game's behaviour (see the module docstring)."""

    game: int
    env_id: str
    seed: int | None
    setup: str | None
    policy: str | None
    run_key: str | None
    status: str
    labyrinths: str
    decisions: int
    fallbacks: int
    outages: int
    steps: int
    solved: int
    bad_actions: int
    moves_tried: int
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


def agimaze_metrics(info: GameInfo, turns: list[TurnRecord], note: str = "") -> AgiMazeMetrics:
    """The metrics of one AGI Maze game from its readable turns: each row of
    :data:`AGIMAZE_METRICS` by its function (the per-decision ones by
    :func:`maze_envs.metrics.decision_metrics`)."""
    game = AgiMazeGame(info, turns)
    counts = decision_metrics(game.counted, escape=False)
    values = {
        m.name: counts[m.name] if m.name in counts else m.compute(game) for m in AGIMAZE_METRICS
    }
    names = [lab["name"] for lab in game.labyrinths if lab is not None]
    labels = game_labels(info.meta)
    return AgiMazeMetrics(
        game=info.id,
        env_id=info.env_id,
        seed=info.seed,
        setup=labels.setup,
        policy=labels.policy,
        run_key=labels.run_key,
        status=status_from_outcome(info.outcome, counts["outages"]),
        labyrinths=names[0] if len(names) == 1 else f"{len(names)} labyrinths",
        lost_labyrinth=game.lost[0]["name"] if game.lost else None,
        note=note,
        **values,
    )
