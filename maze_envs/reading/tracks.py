"""What happened on the board of a journaled Maze Escape game, rebuilt from its rows.

A journal holds what each agent saw, sent and was told, not where the agents stood (an
observation may carry no coordinates at all). :func:`escape_track` rebuilds the board from the
game's config, seed and generator (through the environment's own reset, so the layout is exactly
the game's) and then walks every agent through the recorded turns: the action says which way an
agent tried to move, the turn's events say whether it did (``move == "moved"``). Nothing is
replayed, so this is fast enough to read thousands of games, and it works for every layout
version of the observations. The viewer (:mod:`maze_envs.view`) and the behavioural analysis
(:mod:`maze_envs.bench.analysis`) read games through it.

Reading stops at the first turn that cannot be trusted (an unreadable or edited row, or a recorded
move through a wall of the rebuilt board); ``problem`` then says why and ``turns`` holds the turns
before it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from maze_envs.escape.engine import Board
from maze_envs.escape.generator import Layout, generator_from_description
from maze_envs.escape.types import MOVES, Config
from maze_envs.journal import (
    GameInfo,
    Journal,
    JournalError,
    TurnRecord,
    decode_json,
    encode_json,
)
from maze_envs.reading.turns import read_turns

#: Environment ids whose games :func:`escape_track` reads.
ESCAPE_ENV_PREFIX: Final = "maze_envs/MazeEscape-"
_STAY: Final = MOVES.index("STAY")
_MOVE_COUNT: Final = len(MOVES)


@dataclass(frozen=True)
class EscapeTrack:
    """One game's turns with every agent's true cell (flat index) and move, turn by turn.

    ``cells[agent][t]`` is the agent's cell after turn ``t`` (``t = 0``: its start); ``moves``
    and ``results`` hold the move it chose at turn ``t`` (``"N"`` ... ``"STAY"``, None at turn 0
    or when the action cannot be read) and the engine's result (``"moved"``, ``"stayed"``,
    ``"bumped_interior_wall"``, ``"bumped_outer_brick"``, ``"doorway"``, None at turn 0).
    """

    info: GameInfo
    config: Config
    layout: Layout
    board: Board
    agents: tuple[str, ...]
    turns: list[TurnRecord]
    cells: dict[str, list[int]]
    moves: dict[str, list[str | None]]
    results: dict[str, list[str | None]]
    problem: str | None = None

    @property
    def length(self) -> int:
        """Number of turns read, turn 0 included."""
        return len(self.turns)

    def row_col(self, agent: str, turn: int) -> tuple[int, int]:
        """The agent's (row, column) after ``turn``."""
        return self.board.cells[self.cells[agent][turn]]

    def path_distance(self, agent: str, turn: int) -> int:
        """Moves from the agent's cell after ``turn`` to the exit (true path, through the maze)."""
        return self.board.exit_path[self.cells[agent][turn]]

    def rewards(self, agent: str) -> list[float]:
        """The reward the agent received at each turn, from the recorded events and the config.

        ``exit_reward`` on the turn of its first exit visit (``reward_mode="exit_and_team"``) and
        ``team_bonus`` on the turn of team success, as :mod:`maze_envs.escape.env` gives them.
        """
        config = self.config
        out = [0.0]
        for record in self.turns[1:]:
            events = record.events.get(agent) or {}
            reward = 0.0
            if events.get("first_exit_visit") and config.reward_mode == "exit_and_team":
                reward += config.exit_reward
            if events.get("team_success"):
                reward += config.team_bonus
            out.append(reward)
        return out


def is_escape_game(info: GameInfo) -> bool:
    """Whether the game is a Maze Escape game (any version)."""
    return info.env_id.startswith(ESCAPE_ENV_PREFIX)


@lru_cache(maxsize=16)
def _board_maker(env_id: str, config_json: str, generator_json: str | None) -> Any:
    """One environment per distinct (version, config, generator), reset for each game: its
    spaces and tables are built once, not once per game of a thousand-game journal."""
    from maze_envs.escape.env import MazeEscapeEnv, MazeEscapeV1Env

    config = Config.model_validate_json(config_json)
    generator = (
        None if generator_json is None else generator_from_description(decode_json(generator_json))
    )
    kind = MazeEscapeV1Env if env_id.endswith("-v1") else MazeEscapeEnv
    return kind(config, generator=generator)


def game_layout(info: GameInfo) -> tuple[Config, Layout]:
    """The config and the board of a journaled Maze Escape game, through the env's own reset."""
    if info.seed is None:
        raise JournalError(f"game {info.id} has no seed, so its board cannot be rebuilt")
    generator = None if info.generator is None else encode_json(info.generator)
    env = _board_maker(info.env_id, encode_json(info.config), generator)
    env.reset(seed=info.seed)
    return env.config, env.layout


def stored_move(action: Any) -> str | None:
    """The move name of an action as journaled (an action-space dict or a typed Action's dump).

    >>> stored_move({"move": 2, "radio": ""}), stored_move({"move": "W"}), stored_move("x")
    ('S', 'W', None)
    """
    if not isinstance(action, dict):  # decoded JSON
        return None
    move = action.get("move")
    if isinstance(move, bool):
        return None
    if isinstance(move, int) and 0 <= move < len(MOVES):
        return MOVES[move]
    if isinstance(move, str) and move in MOVES:
        return move
    return None


def escape_track(
    journal: Journal,
    game_id: int,
    info: GameInfo | None = None,
    *,
    observations: bool | Collection[str] = True,
    events: Collection[str] | None = None,
    shared: bool = False,
) -> EscapeTrack:
    """Read one Maze Escape game and walk every agent through it (see the module docstring).

    ``observations``: which of each agent's observations the turns hold (every key; none;
    only the keys listed), ``events``: which keys of their events (None: every key; the track
    needs ``move``, :meth:`EscapeTrack.rewards` ``first_exit_visit`` and ``team_success``), and
    ``shared``: whether what did not change is shared from turn to turn (read-only), as
    :meth:`~maze_envs.journal.Journal.turns` reads them.
    """
    info = journal.game(game_id) if info is None else info
    if not is_escape_game(info):
        raise JournalError(f"game {game_id} is a {info.env_id} game, not a Maze Escape game")
    config, layout = game_layout(info)
    board = Board.from_layout(layout)
    agents = config.agents
    turns, problem = read_turns(
        journal, game_id, observations=observations, events=events, shared=shared
    )
    cells = {a: [board.starts[i]] for i, a in enumerate(agents)}
    moves: dict[str, list[str | None]] = {a: [None] for a in agents}
    results: dict[str, list[str | None]] = {a: [None] for a in agents}
    kept = 1 if turns else 0
    step_to = board.step_to
    columns = [(agent, cells[agent], moves[agent], results[agent]) for agent in agents]
    for record in turns[1:]:
        wrong = None
        actions, turn_events = record.actions, record.events
        for agent, agent_cells, agent_moves, agent_results in columns:
            action = actions.get(agent)
            # (decoded JSON: an integer move is what stored_move reads first)
            move_code = action.get("move") if type(action) is dict else None
            if type(move_code) is int and 0 <= move_code < _MOVE_COUNT:
                index: int | None = move_code
                move: str | None = MOVES[move_code]
            else:
                move = stored_move(action)
                index = None if move is None else MOVES.index(move)
            events = turn_events.get(agent)
            result = events.get("move") if type(events) is dict else None
            here = agent_cells[-1]
            if result == "moved":
                there = step_to[here][index] if index is not None and index != _STAY else -1
                if there < 0:
                    wrong = f"turn {record.turn}: {agent} is recorded as moving {move} into a wall"
                    break
                here = there
            agent_cells.append(here)
            agent_moves.append(move)
            agent_results.append(result if type(result) is str else None)
        if wrong is not None:
            for agent in agents:  # drop the partial turn
                del cells[agent][kept:], moves[agent][kept:], results[agent][kept:]
            problem = wrong
            break
        kept += 1
    if not turns:  # not even turn 0: nobody stood anywhere yet
        for table in (cells, moves, results):
            for agent in agents:
                table[agent].clear()
    return EscapeTrack(
        info=info,
        config=config,
        layout=layout,
        board=board,
        agents=agents,
        turns=turns[:kept],
        cells=cells,
        moves=moves,
        results=results,
        problem=problem,
    )


__all__ = [
    "ESCAPE_ENV_PREFIX",
    "EscapeTrack",
    "escape_track",
    "game_layout",
    "is_escape_game",
    "read_turns",
    "stored_move",
]
