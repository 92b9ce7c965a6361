"""The Inspect solver of the maze tasks: one whole game per sample, into our journal.

:func:`play_game` reads the sample's game (``metadata["game"]``) and plays it: a Maze Escape game
or a single AGI Maze labyrinth through the benchmark runner's rollout
(:func:`maze_envs.bench.rollout.aplay`: every agent's turn awaited together, the game meta, each
decision's record, aborts), a labyrinth set through
:func:`~llm_policies.apps.inspect.sets.play_set`.
The policies are the LLM policies on Inspect's model (:mod:`llm_policies.apps.inspect.policy`), so
each model call is an Inspect ``generate`` (logged by Inspect as a model event).

The game's row (the runner's columns: outcome metrics, usage, decisions, fallbacks, outages,
``game_id``) goes to the sample's store (``state.store[RESULT_KEY]``, with the journal's path) for
the scorer, and a one-line summary becomes the sample's output. A game whose policy failed
raises (Inspect records a sample error; the journal keeps the aborted game); a game that ran
into an Inspect sample limit is stopped cleanly and the limit is raised again, so Inspect records
it and still scores the game.

Games of concurrent samples share one :class:`~maze_envs.journal.Journal` per file (one event
loop, as the runner's inline executor does); it is closed when its last game ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver

from llm_policies.apps.inspect.games import SetGame
from llm_policies.apps.inspect.policy import game_control
from llm_policies.apps.inspect.sets import play_set
from llm_policies.apps.journals import JOURNALS
from maze_envs.bench.rollout import aplay
from maze_envs.bench.spec import GameTask
from maze_envs.journal import Journal

#: Where the solver leaves the game's row in the sample's store.
RESULT_KEY: Final = "maze_envs:game"


class GameError(RuntimeError):
    """A game ended with an error (a policy or the environment failed); the journal has it."""


def summary(row: Mapping[str, Any]) -> str:
    """One line saying how the game ended (the sample's output)."""
    env = row.get("env")
    if row.get("status") == "error":
        return f"error: {row.get('error')}"
    if env == "escape":
        if row.get("success"):
            turn, fastest = row.get("finish_turn"), row.get("fastest")
            text = f"team success at turn {turn} (fastest possible {fastest})"
        else:
            text = (
                f"no team success in {row.get('turns')} turns ({row.get('agents_out')} agents out)"
            )
    elif env == "agimaze":
        solved = "solved" if row.get("solved") else "not solved"
        text = f"{solved} in {row.get('steps')} steps (max_steps {row.get('max_steps')})"
    else:
        text = (
            f"target {'solved' if row.get('solved') else 'not solved'}; "
            f"{row.get('finished')} of {row.get('count')} labyrinths finished"
        )
    stop = row.get("stop_reason")
    return f"{text}; stopped: {stop}" if row.get("status") == "stopped" else text


async def play(game: dict[str, Any], journal: Journal) -> dict[str, Any]:
    """Play the game described by a sample's ``metadata["game"]``; return its row."""
    if game.get("kind") == "agimaze_set":
        return await play_set(SetGame.model_validate(game), journal)
    return await aplay(GameTask.model_validate(game), journal)


@solver
def play_game(journal: str) -> Solver:
    """Play the sample's game (see the module docstring); ``journal`` is the SQLite file."""
    path = Path(journal)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        game = state.metadata.get("game")
        if not isinstance(game, dict):
            raise GameError(
                "the sample has no game (metadata['game']); use the maze_envs tasks' datasets"
            )
        with game_control() as control:
            async with JOURNALS.use(path) as opened:
                row = await play(game, opened)
        row["journal"] = str(path.resolve())
        row["inspect_limit"] = control.stop_reason
        state.store.set(RESULT_KEY, row)
        state.output = ModelOutput.from_content(str(state.model), summary(row))
        state.completed = True
        if control.limit is not None:
            raise control.limit
        if row.get("status") == "error":
            raise GameError(f"game {row.get('game_id')} in {path}: {row.get('error')}")
        return state

    return solve
