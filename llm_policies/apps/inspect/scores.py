"""What a game scores in the Inspect tasks, each number defined once (docstring = definition).

Maze Escape and single AGI Maze labyrinths take the runner's per-game columns
(:mod:`maze_envs.bench.metrics`): team success and finish / fastest possible; solved and RHAE70.
A labyrinth set is scored here from the per-labyrinth results the set environment reports, each
labyrinth through :func:`maze_envs.bench.metrics.agimaze_scores`.

Example:
    >>> results = [{"name": "t1", "steps": 4, "max_steps": 10, "budget": 50, "solved": True},
    ...            {"name": "goal", "steps": 50, "max_steps": 10, "budget": 50, "solved": False}]
    >>> scores = set_scores(results, count=3)
    >>> scores["solved"], scores["rhae70"], scores["labyrinths_solved"], scores["finished"]
    (False, 0.0, 0.3333333333333333, 2)
    >>> round(scores["mean_rhae70"], 3)
    0.333
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from maze_envs.bench.metrics import agimaze_scores


def labyrinth_scores(result: Mapping[str, Any]) -> dict[str, Any]:
    """One finished labyrinth of a set, scored like a single-labyrinth game."""
    return {
        "name": result.get("name", ""),
        **agimaze_scores(
            steps=int(result["steps"]),
            solved=bool(result["solved"]),
            max_steps=int(result["max_steps"]),
            soft_good_steps=None,
            budget=int(result["budget"]),
        ),
    }


def set_scores(results: Sequence[Mapping[str, Any]], count: int) -> dict[str, Any]:
    """A labyrinth set's scores from its finished labyrinths' results (``info["results"]``).

    * ``solved`` / ``rhae70``: the set's final labyrinth (its target; the tutorials before it
      are for learning), solved within its budget, and its RHAE70; a set that ended before the
      target finished counts it unsolved (RHAE70 0);
    * ``labyrinths_solved``: the share of the set's ``count`` labyrinths solved;
    * ``mean_rhae70``: the mean RHAE70 over the set's ``count`` labyrinths (unfinished ones 0);
    * ``finished``: how many labyrinths ended (solved or out of budget); ``labyrinths``: each
      finished labyrinth's scores.
    """
    if count < 1:
        raise ValueError(f"a labyrinth set has at least one labyrinth, got count={count}")
    scored = [labyrinth_scores(r) for r in results]
    target = scored[count - 1] if len(scored) >= count else None
    return {
        "solved": bool(target and target["solved"]),
        "rhae70": float(target["rhae70"]) if target else 0.0,
        "labyrinths_solved": sum(bool(s["solved"]) for s in scored) / count,
        "mean_rhae70": sum(float(s["rhae70"]) for s in scored) / count,
        "finished": len(scored),
        "count": count,
        "labyrinths": scored,
    }
