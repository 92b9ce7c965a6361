"""The rules of Maze Escape for N games at once: one call resolves a turn of every game.

The rules are the scalar engine's (:mod:`maze_envs.escape.engine`), on arrays: every agent moves
through an open edge or stays (a wall or the outer brick is a bump, the exit's doorway keeps it
on the exit); with ``radio_symbols=K`` each agent may send one of K symbols, heard by every
other agent next turn, under the radio's cooldown (refused while cooling down or with the radio
switched off); an agent's first exit visit earns ``exit_reward`` (``reward_mode=
"exit_and_team"``), and the team bonus ends a game when every agent has visited; turn
``max_turns`` truncates it. Agents of the batched engine have no notebook and no radio text
(both stay empty, as in a scalar game played with moves and symbols only).

A turn is a fixed sequence of numpy operations over all rows (an agent of a game): lookups in
tables built once per configuration (:class:`Rules`), no Python loop over games or agents.

Example:
    >>> import numpy as np
    >>> from maze_envs.escape.batch.generator import BoardSource
    >>> from maze_envs.escape.batch.types import BatchState
    >>> from maze_envs.escape.config import Config
    >>> config = Config(width=5, height=5, num_agents=2)
    >>> rules = Rules(config)
    >>> state = rules.empty_state(games=3)
    >>> rng = np.random.default_rng(0)
    >>> start_games(state, rules, np.arange(3), BoardSource(config).draw(3, rng))
    >>> outcome = step(state, rules, np.full(6, 4), None)  # everyone stays
    >>> state.turn.tolist(), outcome.rewards.tolist()
    ([1, 1, 1], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
"""

from __future__ import annotations

from typing import Final, NamedTuple

import numpy as np
from numpy.typing import NDArray

from maze_envs.escape.batch.generator import Boards
from maze_envs.escape.batch.types import FRAME_BITS, OPEN_BITS, BatchState
from maze_envs.escape.config import Config
from maze_envs.escape.vocab import Move, MoveResult, RadioResult
from maze_envs.grid import DELTAS, OPPOSITE

__all__ = ["Outcome", "Rules", "start_games", "step"]

_MOVES: Final = len(Move)
_STAY: Final = int(Move.STAY)


class Outcome(NamedTuple):
    """What a turn means for each game (arrays of the step; the state holds the rest)."""

    rewards: NDArray[np.float32]  # (G * n,) each row's reward
    success: NDArray[np.bool_]  # (G,) every agent has visited the exit: the game terminates
    truncated: NDArray[np.bool_]  # (G,) turn max_turns reached without success


class Rules:
    """The tables of one configuration's rules (shared by all its games, built once)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.width, self.height = config.width, config.height
        self.cells = cells = config.width * config.height
        self.agents = config.num_agents
        self.trail_length = config.trail_length
        self.used_exits = config.used_exits
        self.symbols = getattr(config, "radio_symbols", 0)
        self.pay_visits = config.reward_mode == "exit_and_team"
        # [board byte * 5 + move] -> MoveResult, cell offset, edge bits used here and there
        result = np.empty((256, _MOVES), np.intp)
        offset = np.zeros((256, _MOVES), np.intp)
        used_here = np.zeros((256, _MOVES), np.uint8)
        used_there = np.zeros((256, _MOVES), np.uint8)
        result[:, _STAY] = MoveResult.STAYED
        byte = np.arange(256)
        for move, bit in enumerate(OPEN_BITS):
            is_open = (byte & bit) != 0
            in_frame = (byte & FRAME_BITS[move]) != 0
            result[:, move] = np.select(
                [is_open & in_frame, is_open, in_frame],
                [MoveResult.DOORWAY, MoveResult.MOVED, MoveResult.BUMPED_OUTER_BRICK],
                MoveResult.BUMPED_INTERIOR_WALL,
            )
            dr, dc = DELTAS[bit]
            moved = result[:, move] == MoveResult.MOVED
            offset[moved, move] = dr * config.width + dc
            used_here[moved, move] = bit
            used_there[moved, move] = OPPOSITE[bit]
        self.move_result = result.ravel()
        self.move_offset = offset.ravel()
        self.used_here = used_here.ravel()
        self.used_there = used_there.ravel()
        # frame codes: (x + sx) * (2 sy + 1) + (y + sy) for x east, y north in a frame; the
        # code of a cell in a frame is its absolute code minus the origin's offset (linear)
        self.span_x, self.span_y = config.width - 1, config.height - 1
        self.code_stride = 2 * self.span_y + 1
        rows, cols = np.divmod(np.arange(cells), config.width)
        self.absolute_code = (cols + self.span_x) * self.code_stride + (
            config.height - 1 - rows + self.span_y
        )
        #: the frame code of [0, 0] (the trail's padding)
        self.zero_code = self.span_x * self.code_stride + self.span_y
        for array in (self.move_result, self.move_offset, self.used_here, self.used_there):
            array.flags.writeable = False

        self._bases: dict[tuple[int, bool], NDArray[np.intp]] = {}
        self._others: dict[int, NDArray[np.bool_]] = {}

    def row_base(self, games: int, per_row: bool) -> NDArray[np.intp]:
        """(G * n,) per row the flat index of cell 0 of its game's board (``game * C``), or
        with ``per_row`` of its own per-cell array (``row * C``): read-only, built once."""
        base = self._bases.get((games, per_row))
        if base is None:
            rows = np.arange(games * self.agents, dtype=np.intp)
            base = (rows if per_row else rows // self.agents) * self.cells
            base.flags.writeable = False
            self._bases[(games, per_row)] = base
        return base

    def others(self, rows: int) -> NDArray[np.bool_]:
        """(n, rows) ``[j, row]``: agent j is a teammate of the row's agent (not itself), for
        ``rows`` rows of whole games; read-only, built once per size."""
        others = self._others.get(rows)
        if others is None:
            others = np.arange(rows)[None, :] % self.agents != np.arange(self.agents)[:, None]
            others.flags.writeable = False
            self._others[rows] = others
        return others

    def rows_of(self, games: NDArray[np.intp]) -> NDArray[np.intp]:
        """The rows of ``games``, game by game (``game * n + agent``)."""
        return (games[:, None] * self.agents + np.arange(self.agents)).ravel()

    def empty_state(self, games: int) -> BatchState:
        """The arrays of ``games`` games, none started yet."""
        return BatchState.empty(games, self.agents, self.cells, self.trail_length, self.used_exits)

    def origin_offsets(self, starts: NDArray[np.intp]) -> NDArray[np.intp]:
        """(k, n) what each agent's frame subtracts from an absolute frame code (0 for the
        absolute frame; the agent's own start for ``own``; agent A's start for ``shared``)."""
        frame = self.config.coordinates
        if frame == "own":
            origin = starts
        elif frame == "shared":
            origin = np.repeat(starts[:, :1], starts.shape[1], axis=1)
        else:
            return np.zeros(starts.shape, np.intp)
        return self.absolute_code[origin] - self.zero_code


def start_games(state: BatchState, rules: Rules, games: NDArray[np.intp], boards: Boards) -> None:
    """Start games ``games`` on ``boards``: turn 0, agents on their starts, nothing sent."""
    n = rules.agents
    state.board[games] = boards.board
    state.landmark[games] = boards.landmark
    state.exit_cell[games] = boards.exit_cell
    state.doorway[games] = boards.doorway
    state.starts[games] = boards.starts
    state.positions[games] = boards.starts
    rows = rules.rows_of(games)
    state.exit_row[rows] = np.repeat(boards.exit_cell, n)
    state.origin[games] = rules.origin_offsets(boards.starts)
    state.turn[games] = 0
    state.visited[games] = False
    state.ready_turn[games] = 1
    state.symbols[games] = 0
    state.move_result[games] = MoveResult.NONE
    state.radio_result[games] = RadioResult.NONE
    if rules.used_exits:
        state.used[games] = 0
    if rules.trail_length:
        state.trail[games] = rules.zero_code


def step(
    state: BatchState,
    rules: Rules,
    moves: NDArray[np.intp],
    symbols: NDArray[np.intp] | None,
    rewards: NDArray[np.float32] | None = None,
) -> Outcome:
    """Resolve one turn of every game in place: ``moves`` (G * n,) move codes 0..4 and
    ``symbols`` (G * n,) radio symbols 0..K (``None``: nothing sent), both already checked.
    ``rewards``, if given, is the (G * n,) buffer the rewards are written into."""
    config = rules.config
    games, n = state.games, rules.agents
    positions = state.positions.reshape(-1)  # views: rows in order
    if rules.trail_length:
        _push_trail(state, rules, positions)
    key = state.board.reshape(-1).take(rules.row_base(games, per_row=False) + positions)
    key = key.astype(np.intp)
    key *= _MOVES
    key += moves
    rules.move_result.take(key, out=state.move_result.reshape(-1))
    offset = rules.move_offset.take(key)
    if rules.used_exits:
        used = state.used.reshape(-1)
        here = rules.row_base(games, per_row=True) + positions
        used[here] |= rules.used_here.take(key)
        here += offset
        used[here] |= rules.used_there.take(key)
    positions += offset
    turn = state.turn
    turn += 1
    if symbols is not None:
        _radio(state, rules, symbols, np.repeat(turn, n))
    visited = state.visited.reshape(-1)
    first = positions == state.exit_row
    first &= ~visited
    visited |= first
    success = np.logical_and.reduce(state.visited, axis=1)
    out = rewards if rewards is not None else np.empty(games * n, np.float32)
    if rules.pay_visits:
        np.multiply(first, np.float32(config.exit_reward), out=out)
    else:
        out[:] = 0.0
    if success.any():
        out += np.repeat(success, n) * np.float32(config.team_bonus)
    truncated = ~success & (turn >= config.max_turns)
    return Outcome(out, success, truncated)


def _radio(
    state: BatchState, rules: Rules, symbols: NDArray[np.intp], turn: NDArray[np.int64]
) -> None:
    """The radio rule for symbols (the scalar rule's, :mod:`maze_envs.escape.radio`): a symbol
    is refused while the radio cools down (``ready_turn > turn``) or is switched off. All
    arrays per row."""
    config = rules.config
    ready = state.ready_turn.reshape(-1)
    want = symbols > 0
    allowed = ready <= turn
    if not config.radio:
        allowed[:] = False
    sent = want & allowed
    state.radio_result.reshape(-1)[:] = np.where(
        want, np.where(allowed, RadioResult.SENT, RadioResult.REFUSED), RadioResult.NONE
    )
    np.multiply(symbols, sent, out=state.symbols.reshape(-1))
    np.copyto(ready, turn + (config.radio_cooldown + 1), where=sent)


def _push_trail(state: BatchState, rules: Rules, positions: NDArray[np.intp]) -> None:
    """Append each row's cell (as a frame code) to its trail; the oldest entry drops out."""
    k, head = rules.trail_length, state.trail_head
    codes = rules.absolute_code.take(positions)
    codes -= state.origin.reshape(-1)
    ring = state.trail.reshape(len(positions), 2 * k)
    ring[:, head] = codes
    ring[:, head + k] = codes
    state.trail_head = head + 1 if head + 1 < k else 0
