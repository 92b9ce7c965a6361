"""One AGI Maze labyrinth set played into the journal (the runner plays single labyrinths).

The loop of :func:`play_set` is the runner's (:mod:`maze_envs.bench.rollout`) for one player:
the game meta before reset (run key, the game, the policy spec, its harness report), each
decision's record noted before its step, the policy reset with each labyrinth's episode after
``start`` (so with ``set_memory`` the conversation goes on across labyrinths), and a game a
policy asks to stop, or whose policy fails, stored as aborted with the reason. The row carries
the set's scores (:func:`~llm_policies.apps.inspect.scores.set_scores`) and the usage columns.
"""

from __future__ import annotations

import time
from typing import Any

from llm_policies.apps.inspect.games import SetGame
from llm_policies.apps.inspect.scores import set_scores
from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.agimaze.recording import set_outcome
from maze_envs.agimaze.set_env import AgiMazeSetEnv
from maze_envs.bench.metrics import UsageTally
from maze_envs.journal import JournalError
from maze_envs.policies.episodes import PLAYER, agimaze_episode
from maze_envs.policies.interface import as_decision
from maze_envs.policies.registry import make_policy

Row = dict[str, Any]


def set_columns(game: SetGame) -> Row:
    """The columns that say which game a row is."""
    return {
        "run_key": game.run_key,
        "game_id": None,
        "experiment": game.experiment,
        "env": "agimaze_set",
        "env_id": game.env_id,
        "setup": game.name,
        "case": game.name,
        "policy": game.policy.text,
        "policy_specs": [game.policy.text],
        "seed": game.seed,
        "paths": list(game.paths),
    }


async def play_set(game: SetGame, journal: Any) -> Row:
    """Play the labyrinth set ``game`` with its policy, into ``journal``; return its row."""
    started = time.perf_counter()
    row = set_columns(game)
    try:
        policy = make_policy(game.policy.spec, "agimaze", **game.policy.options)
        env = AgiMazeSetEnv(
            paths=list(game.paths),
            budget_factor=game.budget_factor,
            pack_root=game.pack_root,
            journal=journal,
        )
    except JournalError:
        raise
    except Exception as exc:
        row.update(status="error", stop_reason=None, privileged=False)
        row["error"] = f"the game could not be set up: {type(exc).__name__}: {exc}"
        return row
    usage = UsageTally()
    stop: str | None = None
    error: str | None = None
    results: list[dict[str, Any]] = []
    try:
        report = policy.harness() if callable(getattr(policy, "harness", None)) else {}
        recorder = env.recorder  # None when played without a journal
        if recorder is not None:
            recorder.set_game_meta(
                {
                    "run_key": game.run_key,
                    "experiment": game.experiment,
                    "task": game.model_dump(mode="json"),
                    "policies": {PLAYER: game.policy.text},
                    "privileged": [],
                    "harness": {PLAYER: dict(report)} if report else {},
                }
            )
        obs, info = env.reset(seed=game.seed)
        row["game_id"] = None if recorder is None else recorder.game_id
        policy.reset(PLAYER, game.seed, agimaze_episode(env, info))
        typed = AgiMazeObservation.from_env(obs, info, env=env)
        over = False
        while not over and stop is None:
            try:
                decision = as_decision(await policy.aact(typed))
            except JournalError:
                raise
            except Exception as exc:  # a policy bug ends this game, never the eval
                error = f"{PLAYER}: {type(exc).__name__}: {exc}"
                break
            usage.add(PLAYER, decision)
            if decision.record is not None and recorder is not None:
                recorder.note(PLAYER, decision.record)
            stop = decision.stop
            waiting = typed.waiting
            try:
                obs, _, terminated, truncated, info = env.step_name(str(decision.action))
            except (ValueError, TypeError) as exc:  # an action the environment refuses
                error = f"{PLAYER}: {type(exc).__name__}: {exc}"
                break
            action = str(decision.action)
            typed = AgiMazeObservation.from_env(obs, info, env=env, last_action=action)
            over = bool(terminated or truncated)
            if waiting and not typed.waiting and not over:  # a labyrinth began: its episode
                policy.reset(PLAYER, game.seed, agimaze_episode(env, info))
                typed = typed.model_copy(update={"last_action": None})
        results = [dict(r) for r in info.get("results", [])]
        if not over and recorder is not None:
            extra = {"stopped": "error" if error else "requested"}
            extra["error" if error else "stop_reason"] = str(error or stop)
            recorder.abort({**set_outcome(results, len(game.paths)), **extra})
    finally:
        try:
            policy.close()
        finally:
            env.close()
    status = "error" if error else "stopped" if stop and not over else "ok"
    row.update(status=status, error=error, stop_reason=stop, privileged=False)
    row.update(set_scores(results, len(game.paths)))
    row.update(usage.row())
    row["elapsed_s"] = time.perf_counter() - started
    return row
