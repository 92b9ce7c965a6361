"""Labyrinth-set games in the runner: the adapter that plays ``AgiMazeSet-v0`` and its scores.

A set game is one ``AgiMazeSet-v0`` episode (:mod:`maze_envs.bench.setspec`): one policy plays
every labyrinth of the set as ``"player"``; it is reset with each labyrinth's episode right after
``start`` (the baselines answer ``start`` themselves while the set waits), so what it carries
from one labyrinth to the next is whatever it keeps across resets, as an agent in the
EnvTraverse curriculum keeps its conversation.

Scores (:func:`agimaze_set_scores`) follow the EnvTraverse evaluation: only the target, the
set's last labyrinth, counts for the score and the completion count. The wall moves
(``wall_moves``, ``wall_move_rate``) count every labyrinth's moves, as the policy's behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from maze_envs.bench.envs import _Base
from maze_envs.bench.metrics import RHAE_FACTORS, AgiMazeTally, Status, agimaze_scores
from maze_envs.bench.setspec import AgiMazeSetCase
from maze_envs.bench.spec import GameTask


def agimaze_set_scores(
    results: Sequence[Mapping[str, Any]], count: int, soft_good_steps: int | None
) -> dict[str, Any]:
    """A labyrinth-set game's scores from its per-labyrinth results (``info["results"]``).

    The set's score is its target's: ``solved``, ``steps``, ``rhae70`` / ``rhae60`` /
    ``rhae80``, ``x1_solved``, ``success`` / ``good`` / ``late`` and ``step_fraction`` are those
    of :func:`~maze_envs.bench.metrics.agimaze_scores` for the last labyrinth (all zero / false
    when the set ended before it finished). ``labyrinths`` lists every finished labyrinth in set
    order (``name``, ``steps``, ``max_steps``, ``budget``, ``solved``, ``rhae70``);
    ``set_steps`` is the steps of the whole set (the resource use, tutorials included),
    ``set_solved`` the labyrinths solved, ``set_labyrinths`` how many the set has.
    """
    finished = [dict(r) for r in results]
    target = finished[-1] if len(finished) == count else None
    if target is None:  # the set stopped before its target ended: nothing of it to score
        scores: dict[str, Any] = {
            "solved": False,
            "steps": 0,
            "max_steps": None,
            "soft_good_steps": None,
            "budget": None,
            "step_fraction": None,
            "x1_solved": False,
            "success": False,
            "good": False,
            "late": False,
            **dict.fromkeys(RHAE_FACTORS, 0.0),
        }
    else:
        scores = agimaze_scores(
            steps=int(target["steps"]),
            solved=bool(target["solved"]),
            max_steps=int(target["max_steps"]),
            soft_good_steps=soft_good_steps,
            budget=int(target["budget"]),
        )
    scores["labyrinths"] = [
        {
            "name": r["name"],
            "steps": int(r["steps"]),
            "max_steps": int(r["max_steps"]),
            "budget": int(r["budget"]),
            "solved": bool(r["solved"]),
            "rhae70": float(r["rhae"]),  # the set env reports each labyrinth's RHAE70
        }
        for r in finished
    ]
    scores["set_steps"] = sum(int(r["steps"]) for r in finished)
    scores["set_solved"] = sum(bool(r["solved"]) for r in finished)
    scores["set_labyrinths"] = count
    return scores


class AgiMazeSetAdapter(_Base):
    """A labyrinth set, played by one policy as ``"player"``."""

    def __init__(self, task: GameTask, journal: Any) -> None:
        super().__init__(task, journal)
        from maze_envs.agimaze.packs import PACK_VERSIONS
        from maze_envs.agimaze.set_env import AgiMazeSetEnv

        case = task.case
        assert isinstance(case, AgiMazeSetCase)
        self.case = case
        shipped = case.pack_root is None and case.pack_version in PACK_VERSIONS
        kwargs: dict[str, Any] = {
            "paths": list(case.paths),
            "budget_factor": case.budget_factor,
            "pack_root": case.pack_root,
            "pack_version": case.pack_version if shipped else None,
        }
        if journal is not None:
            kwargs["journal"] = journal
        self.env = AgiMazeSetEnv(**kwargs)
        self._attach_recorder()
        self._typed: Any = None
        self._info: dict[str, Any] = {}
        self._over = False
        self.tally = AgiMazeTally()

    def _reset_policy(self, info: Mapping[str, Any]) -> None:
        from maze_envs.policies.episodes import agimaze_episode

        episode = agimaze_episode(self.env, info, privileged="player" in self.privileged)
        self.policies["player"].reset("player", self.policy_seeds["player"], episode)

    def reset(self) -> None:
        from maze_envs.agimaze.observation import AgiMazeObservation
        from maze_envs.policies.episodes import agimaze_episode

        obs, info = self.env.reset(seed=self.task.seed)
        self._started()
        self._info = info
        self._typed = AgiMazeObservation.from_env(obs, info, env=self.env)
        # while the set waits nothing of a labyrinth is known, privileged or not
        episode = agimaze_episode(self.env, info)
        self.policies["player"].reset("player", self.policy_seeds["player"], episode)

    def observations(self) -> dict[str, Any]:
        return {"player": self._typed}

    def step(self, actions: dict[str, Any], statuses: dict[str, Status] | None = None) -> None:
        from maze_envs.agimaze.observation import AgiMazeObservation

        action = str(actions["player"])
        was_waiting = bool(self._info.get("waiting", True))
        obs, _, terminated, truncated, info = self.env.step_name(action)
        status = (statuses or {}).get("player", "ok")
        # an action the set ignored (a move while it waits, one the labyrinth lacks) has no steps
        self.tally.add_step(action, info.get("events") or [], "steps" in info, status)
        self._info = info
        self._over = bool(terminated or truncated)
        typed = AgiMazeObservation.from_env(obs, info, env=self.env, last_action=action)
        if was_waiting and not info["waiting"] and not self._over:  # a labyrinth began
            self._reset_policy(info)
            typed = typed.model_copy(update={"last_action": None})
        self._typed = typed

    @property
    def running(self) -> bool:
        return self.started and not self._over

    def metrics(self) -> dict[str, Any]:
        if not self.started:
            return {}
        scores = agimaze_set_scores(
            self._info.get("results") or [], len(self.case.paths), self.case.soft_good_steps
        )
        return {**scores, **self.tally.metrics()}

    def abort(self, extra: dict[str, Any]) -> None:
        if self.recorder is not None:
            from maze_envs.agimaze.recording import set_outcome

            outcome = set_outcome(self._info.get("results") or [], len(self.case.paths))
            self.recorder.abort({**outcome, **extra})


__all__ = ["AgiMazeSetAdapter", "agimaze_set_scores"]
