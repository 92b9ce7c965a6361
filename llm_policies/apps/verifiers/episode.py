"""One game as one verifiers episode: the seats' interactions, the runner's rollout, the journal.

A verifiers task here is one whole game (:class:`MazeTaskData`: the runner's
:class:`~maze_envs.bench.spec.GameTask` as JSON). :func:`play` opens one interaction per player
of the game (each Maze Escape agent, or the AGI Maze player) on the env's agent, each with its own
trace; plays the game with the runner's rollout (:func:`maze_envs.bench.rollout.aplay`: every
agent of a turn asked at once, one step for all, the game meta, each decision's record, aborts)
and the verifiers LLM policies (:mod:`~llm_policies.apps.verifiers.policy`), so every episode is
journaled like any other game (``maze-envs verify``, ``view``, ``analyze``); and leaves the
game's row and where it is journaled in each trace's ``info["maze_envs"]``, from which the task's
rewards and metrics are read (:class:`MazeTask`, :mod:`~llm_policies.apps.verifiers.rubric`)
when verifiers closes the interactions and scores them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

import orjson
import verifiers.v1 as vf

from llm_policies.apps.journals import JOURNALS
from llm_policies.apps.verifiers.backend import Seat
from llm_policies.apps.verifiers.policy import Episode, playing
from llm_policies.apps.verifiers.rubric import Kind, NotScored, metrics, rewards
from maze_envs.bench.rollout import aplay
from maze_envs.bench.spec import GameTask

#: Where a trace keeps its game (``trace.info[INFO_KEY]``): the row, journal, game id, agent.
INFO_KEY: Final = "maze_envs"
#: The journal of the games unless ``--env.journal`` says otherwise (beside vf-eval's outputs).
DEFAULT_JOURNAL: Final = "outputs/maze_envs.sqlite"

Row = dict[str, Any]


class MazeTaskData(vf.TaskData):
    """One game: the runner's game task as JSON (``game``), and on each seat's copy the player
    whose trace it is (``seat``)."""

    game: dict[str, Any]
    seat: str | None = None


class MazeTask(vf.Task[MazeTaskData]):
    """A game's task: its key is the game's run key (the same game, the same key, in any run);
    the rewards and metrics of its kind (:attr:`KIND`) are defined by the subclasses."""

    KIND: ClassVar[Kind]

    @property
    def key(self) -> str:
        base = str(self.data.game.get("run_key") or self.hash)
        return base if self.data.seat is None else f"{base}/{self.data.seat}"

    def for_seat(self, seat: str) -> MazeTask:
        """This game's task as the player ``seat`` plays it (its own trace; no opening prompt:
        the game speaks first, turn by turn)."""
        return self.with_data(seat=seat, prompt=None)

    def reward_part(self, trace: vf.Trace, name: str) -> float:
        """The rubric's reward ``name`` of the game this trace played."""
        score, _ = rewards(self.KIND, row_of(trace))[name]
        return score

    @vf.metric
    async def game_metrics(self, trace: vf.Trace) -> Mapping[str, float]:
        """The game's numeric columns (turns, steps, budgets, fallbacks...), logged."""
        return metrics(self.KIND, row_of(trace))


def row_of(trace: vf.Trace) -> Mapping[str, Any]:
    """The game row a trace carries; :class:`~llm_policies.apps.verifiers.rubric.NotScored`
    when it carries none (the episode failed before the game was played)."""
    info = trace.info.get(INFO_KEY)
    row = info.get("row") if isinstance(info, Mapping) else None
    if not isinstance(row, Mapping):
        raise NotScored("this trace carries no game (trace.info['maze_envs'] has no row)")
    return row


def json_row(row: Mapping[str, Any]) -> Row:
    """``row`` as plain JSON data (NaN and other non-JSON numbers become null)."""
    loaded: Row = orjson.loads(orjson.dumps(row, option=orjson.OPT_NON_STR_KEYS))
    return loaded


async def play(task: MazeTask, agent: vf.Agent, seat_field: str, journal: Path) -> Row:
    """Play ``task``'s game with ``agent`` in every seat, into ``journal``; its row.

    ``seat_field`` names the env's agent field (``team``, ``player``) for the harness report.
    """
    game = GameTask.model_validate(task.data.game)
    config = agent.config
    sampling = config.sampling.model_dump(mode="json", exclude_none=True) if config.sampling else {}
    async with contextlib.AsyncExitStack() as stack:
        seats: dict[str, Seat] = {}
        for name in game.agents:
            interaction = await stack.enter_async_context(agent.interaction(task.for_seat(name)))
            seats[name] = Seat(name, interaction)
        episode = Episode(
            seats,
            model=str(config.model),
            sampling=sampling,
            harness=config.harness.id if config.harness is not None else "",
            seat=seat_field,
        )
        with playing(episode):
            async with JOURNALS.use(journal) as opened:
                row = await aplay(game, opened)
        row["journal"] = str(journal.resolve())
        info = {"journal": row["journal"], "game_id": row.get("game_id"), "row": json_row(row)}
        for seat in seats.values():  # before the interactions close: scoring reads it
            seat.trace.info[INFO_KEY] = {**info, "agent": seat.name}
    return row
