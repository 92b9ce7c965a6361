"""Maze Escape turn resolution: the rules, and nothing else (no drawing, text layout or storage).

All agents act at once. Resolving turn ``t`` (the state's turn goes from ``t - 1`` to ``t``):

1. **Moves.** Each agent moves one cell through an open edge; agents may share cells and never
   block each other. A move into an interior wall or the outer brick leaves the agent in place and
   adds one to its ``wall_bumps``. A move out through the exit doorway also leaves it in place (the
   game never removes an agent) and is counted in ``doorway_moves``, not as a wall bump. An edge is
   *used* by an agent once it has crossed it in either direction.
2. **Notebooks.** Each agent's edit applies to its own notebook (see :mod:`.notebook`).
3. **Radio.** Messages that pass :func:`.radio.check_message` replace the previous turn's messages;
   they are shown to every other agent in the observations of turn ``t``.
4. **Exit.** An agent standing on the exit cell after moving has visited it (starts are never the
   exit). With ``reward_mode="exit_and_team"`` an agent's first visit earns ``exit_reward``; when
   every agent has visited, each agent gets ``team_bonus`` and the game terminates (success).
   With ``"team_sparse"`` only the team bonus is paid. Otherwise turn ``max_turns`` truncates.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, NamedTuple

import numpy as np
from numpy.typing import NDArray

from maze_envs.escape.actions import NotebookEdit, SpliceArgs
from maze_envs.escape.config import Config
from maze_envs.escape.generator import Layout
from maze_envs.escape.notebook import append_line_sized, splice_sized
from maze_envs.escape.radio import check_message, cooldown_left
from maze_envs.escape.types import State
from maze_envs.escape.vocab import (
    LANDMARK_NAMES,
    NO_LANDMARK,
    EdgeKind,
    Move,
    MoveResult,
    NotebookResult,
    RadioResult,
)
from maze_envs.grid import DELTAS, EAST, NORTH, OPPOSITE, SOUTH, WEST, tenths_table

__all__ = [
    "MOVE_BITS",
    "STAY",
    "Board",
    "NotebookEdit",
    "SpliceArgs",
    "StateDigest",
    "TurnOutcome",
    "initial_state",
    "resolve_turn",
]

#: Direction bits of :mod:`maze_envs.grid`, indexed by move code N, E, S, W.
MOVE_BITS: Final = (NORTH, EAST, SOUTH, WEST)
STAY: Final = int(Move.STAY)
# Plain-int codes on the turn path (an IntEnum member costs an attribute lookup each time).
_MOVED: Final = int(MoveResult.MOVED)
_STAYED: Final = int(MoveResult.STAYED)
_BUMP_INTERIOR: Final = int(MoveResult.BUMPED_INTERIOR_WALL)
_BUMP_OUTER: Final = int(MoveResult.BUMPED_OUTER_BRICK)
_DOORWAY: Final = int(MoveResult.DOORWAY)
_NB_NONE, _NB_APPLIED, _NB_REJECTED = map(int, NotebookResult)
_RADIO_NONE, _RADIO_SENT, _RADIO_REFUSED = map(int, RadioResult)

_DIGEST_VERSION: Final = b"maze_escape_v0/state/2"
_NO_OFFSETS: Final[NDArray[np.int64]] = np.zeros((0, 1), dtype=np.int64)  # before the first state


@dataclass(frozen=True, eq=False)  # identity: holds arrays
class Board:
    """Lookup tables precomputed from a layout once per game, so a turn does no searching."""

    layout: Layout
    width: int
    height: int
    exit_cell: int
    # [cell][move] -> new cell, or minus the MoveResult of a move that stays (bump, doorway)
    step_to: tuple[tuple[int, ...], ...]
    edge_kinds: NDArray[np.int64]  # [cell] -> EdgeKind codes of the edges N, E, S, W
    exit_path: tuple[int, ...]  # [cell] -> moves to the exit
    exit_tenths: tuple[int, ...]  # [cell] -> straight-line tenths to the exit
    landmark: tuple[int, ...]  # [cell] -> NO_LANDMARK or 1 + index into LANDMARK_NAMES
    xy: tuple[tuple[int, int], ...]  # [cell] -> absolute (x east, y north) from the SW corner
    cells: tuple[tuple[int, int], ...]  # [cell] -> (row, column), row 0 north
    starts: tuple[int, ...]
    digest: bytes  # SHA-256 of the layout, part of every state digest

    @classmethod
    def from_layout(cls, layout: Layout) -> Board:
        h, w = layout.height, layout.width
        grid = _grid_tables(w, h)
        flat = layout.maze.ravel()
        exit_r, exit_c = layout.exit_cell
        exit_cell = exit_r * w + exit_c
        step_to = np.empty((h * w, 4), dtype=np.int64)
        kinds = np.empty((h * w, 4), dtype=np.int64)
        for k, bit in enumerate(MOVE_BITS):
            is_open = (flat & bit) != 0
            step_to[:, k] = np.where(is_open, grid.targets[k], grid.blocked[k])
            kinds[:, k] = np.where(is_open, EdgeKind.OPEN, grid.closed_kinds[k])
        k = MOVE_BITS.index(layout.doorway)
        step_to[exit_cell, k] = -_DOORWAY
        kinds[exit_cell, k] = EdgeKind.OPEN  # the doorway reads as an open edge
        ex, ey = grid.xy[exit_cell]
        exit_tenths = grid.tenths[np.abs(grid.xs - ex), np.abs(grid.ys - ey)]
        landmark = [NO_LANDMARK] * (h * w)
        for (r, c), name in layout.landmarks:
            landmark[r * w + c] = 1 + LANDMARK_NAMES.index(name)
        return cls(
            layout=layout,
            width=w,
            height=h,
            exit_cell=exit_cell,
            step_to=tuple(map(tuple, step_to.tolist())),
            edge_kinds=kinds,
            exit_path=tuple(layout.exit_distances.ravel().tolist()),
            exit_tenths=tuple(exit_tenths.tolist()),
            landmark=tuple(landmark),
            xy=grid.xy,
            cells=grid.cells,
            starts=tuple(r * w + c for r, c in layout.starts),
            digest=hashlib.sha256(
                layout.maze.tobytes()
                + repr((layout.exit_cell, layout.doorway, layout.landmarks, layout.starts)).encode()
            ).digest(),
        )


class _GridTables(NamedTuple):
    """What every board of one size shares (flat cell indices, moves N, E, S, W)."""

    targets: tuple[NDArray[np.int64], ...]  # [move][cell] -> neighbour cell
    blocked: tuple[NDArray[np.int64], ...]  # [move][cell] -> -MoveResult of a closed edge
    closed_kinds: tuple[NDArray[np.int64], ...]  # [move][cell] -> EdgeKind of a closed edge
    xy: tuple[tuple[int, int], ...]  # [cell] -> (x east, y north) from the south-west corner
    cells: tuple[tuple[int, int], ...]  # [cell] -> (row, column)
    xs: NDArray[np.int64]
    ys: NDArray[np.int64]
    tenths: NDArray[np.int64]  # [abs(dx), abs(dy)] -> straight-line tenths


@lru_cache(maxsize=16)
def _grid_tables(width: int, height: int) -> _GridTables:
    rows, cols = np.divmod(np.arange(height * width, dtype=np.int64), width)
    targets, blocked, closed = [], [], []
    for bit in MOVE_BITS:
        dr, dc = DELTAS[bit]
        nr, nc = rows + dr, cols + dc
        inside = (nr >= 0) & (nr < height) & (nc >= 0) & (nc < width)
        targets.append(nr * width + nc)
        blocked.append(np.where(inside, -_BUMP_INTERIOR, -_BUMP_OUTER))
        closed.append(np.where(inside, EdgeKind.INTERIOR_WALL, EdgeKind.OUTER_BRICK))
    xs, ys = cols, height - 1 - rows
    tables = _GridTables(
        targets=tuple(targets),
        blocked=tuple(blocked),
        closed_kinds=tuple(closed),
        xy=tuple(zip(xs.tolist(), ys.tolist(), strict=True)),
        cells=tuple(zip(rows.tolist(), cols.tolist(), strict=True)),
        xs=xs,
        ys=ys,
        tenths=np.array(tenths_table(max(width, height)), dtype=np.int64),
    )
    for array in (*tables.targets, *tables.blocked, *tables.closed_kinds, xs, ys, tables.tenths):
        array.flags.writeable = False  # shared by every board of this size
    return tables


def initial_state(board: Board, config: Config) -> State:
    """The state at turn 0: agents on their starts, empty notebooks, nothing sent."""
    n = config.num_agents
    cells = board.width * board.height
    offsets = tuple(i * (cells + 1) for i in range(n))
    return State(
        turn=0,
        positions=list(board.starts),
        visited_exit=[False] * n,
        first_visit_turn=[-1] * n,
        notebooks=[""] * n,
        notebook_bytes=[0] * n,
        radio_outbox=[""] * n,
        radio_ready_turn=[1] * n,
        trail_ring=np.repeat(
            np.array(offsets, dtype=np.int64) + cells, 2 * config.trail_length
        ).reshape(n, 2 * config.trail_length),
        trail_offsets=offsets,
        used_exits=[bytearray(board.width * board.height) for _ in range(n)],
        wall_bumps=[0] * n,
        doorway_moves=[0] * n,
        moves=[0] * n,
        move_result=[int(MoveResult.NONE)] * n,
        notebook_result=[_NB_NONE] * n,
        notebook_reason=[""] * n,
        radio_result=[_RADIO_NONE] * n,
        radio_reason=[""] * n,
        radio_symbols=[0] * n,
    )


class TurnOutcome(NamedTuple):
    """What a resolved turn means for the game (the rest is in the state)."""

    rewards: list[float]
    first_visits: list[bool]
    success: bool
    truncated: bool


def resolve_turn(
    state: State,
    board: Board,
    config: Config,
    moves: list[int],
    edits: list[NotebookEdit],
    radios: list[str],
    symbols: list[int] | None = None,
) -> TurnOutcome:
    """Apply one turn of already-validated actions to ``state`` in place (``symbols``: each
    agent's radio symbol, in a game with ``radio_symbols``; it goes out with the message)."""
    # Locals for every list read per agent: this runs every turn.
    turn = state.turn + 1
    n = len(moves)
    positions = state.positions
    step_to = board.step_to
    if config.trail_length:
        state.push_trail(positions)
    move_result, used_exits = state.move_result, state.used_exits
    for i in range(n):
        here = positions[i]
        move = moves[i]
        if move == STAY:
            move_result[i] = _STAYED
            continue
        there = step_to[here][move]
        if there >= 0:
            bit = MOVE_BITS[move]
            used = used_exits[i]
            used[here] |= bit
            used[there] |= OPPOSITE[bit]
            positions[i] = there
            state.moves[i] += 1
            move_result[i] = _MOVED
        else:
            move_result[i] = -there
            if there == -_DOORWAY:
                state.doorway_moves[i] += 1
            else:
                state.wall_bumps[i] += 1

    notebooks, notebook_bytes = state.notebooks, state.notebook_bytes
    notebook_result, notebook_reason = state.notebook_result, state.notebook_reason
    for i in range(n):
        edit = edits[i]
        if edit is None:
            notebook_result[i] = _NB_NONE
            notebook_reason[i] = ""
            continue
        if isinstance(edit, tuple):
            start, end, text = edit
            new, size, reason = splice_sized(
                notebooks[i],
                notebook_bytes[i],
                start,
                end,
                text,
                max_bytes=config.notebook_max_bytes,
                turn_bytes=config.notebook_turn_bytes,
            )
        else:
            new, size, reason = append_line_sized(
                notebooks[i],
                notebook_bytes[i],
                edit,
                max_bytes=config.notebook_max_bytes,
                turn_bytes=config.notebook_turn_bytes,
            )
        if new is None:
            notebook_result[i] = _NB_REJECTED
        else:
            notebooks[i] = new
            notebook_bytes[i] = size
            notebook_result[i] = _NB_APPLIED
        notebook_reason[i] = reason

    outbox, radio_result, radio_reason = state.radio_outbox, state.radio_result, state.radio_reason
    sent_symbols = state.radio_symbols
    for i in range(n):
        text = radios[i]
        outbox[i] = ""
        symbol = 0
        if symbols is not None:
            symbol, sent_symbols[i] = symbols[i], 0
        if not text and not symbol:
            radio_result[i] = _RADIO_NONE
            radio_reason[i] = ""
            continue
        reason = check_message(
            text,
            enabled=config.radio,
            max_bytes=config.radio_max_bytes,
            cooldown_left=cooldown_left(state.radio_ready_turn[i], turn - 1),
        )
        if reason:
            radio_result[i] = _RADIO_REFUSED
        else:
            outbox[i] = text
            if symbol:
                sent_symbols[i] = symbol
            radio_result[i] = _RADIO_SENT
            state.radio_ready_turn[i] = turn + config.radio_cooldown + 1
        radio_reason[i] = reason

    state.turn = turn
    rewards = [0.0] * n
    first_visits = [False] * n
    exit_cell = board.exit_cell
    visited = state.visited_exit
    if exit_cell in positions:
        pay_visits = config.reward_mode == "exit_and_team"
        for i in range(n):
            if positions[i] == exit_cell and not visited[i]:
                visited[i] = True
                state.first_visit_turn[i] = turn
                first_visits[i] = True
                if pay_visits:
                    rewards[i] += config.exit_reward
    success = all(visited)
    if success:
        state.success = True
        for i in range(n):
            rewards[i] += config.team_bonus
    # tuple.__new__ skips the NamedTuple's Python-level __new__ (this runs every turn)
    return tuple.__new__(
        TurnOutcome, (rewards, first_visits, success, not success and turn >= config.max_turns)
    )


class StateDigest:
    """SHA-256 of a canonical serialization of a game's state and board (one per game).

    Covers everything that affects future turns or observations: turn, positions, exit visits,
    notebooks, radio messages and cooldowns, trails, used edges, counters and last results.
    The hashed bytes are: a version tag and the board digest; the integers as little-endian
    64-bit (turn, success, then each per-agent field for every agent: position, exit visited,
    first visit turn, radio ready turn, wall bumps, doorway moves, moves, move result, notebook
    result, radio result); every agent's used-edge masks (one byte per cell); every agent's
    notebook, radio message, notebook reason and radio reason, each as ``0x00`` + 8-byte length
    + UTF-8 when shorter than 128 bytes, else ``0x01`` + the SHA-256 of its UTF-8; and last the
    trail cells as little-endian 64-bit integers; in a game with radio symbols, then each
    agent's symbol sent last turn as a little-endian 64-bit integer.

    A text's part is computed once and reused while the state holds the same string object
    (strings are immutable, so an unchanged notebook costs nothing to hash again).
    """

    def __init__(self, board: Board, num_agents: int, symbols: bool = False) -> None:
        self._prefix = _DIGEST_VERSION + board.digest
        self._symbols = struct.Struct(f"<{num_agents}q") if symbols else None
        self._ints = struct.Struct(f"<{2 + 10 * num_agents}q")
        self._texts: list[tuple[str, bytes]] = [("", _text_part(""))] * (4 * num_agents)
        # the trail's offsets as a column (State.trail without building it every turn)
        self._offsets: tuple[tuple[int, ...] | None, NDArray[np.int64]] = (None, _NO_OFFSETS)

    def __call__(self, state: State) -> bytes:
        ints = self._ints.pack(
            state.turn,
            state.success,
            *state.positions,
            *state.visited_exit,
            *state.first_visit_turn,
            *state.radio_ready_turn,
            *state.wall_bumps,
            *state.doorway_moves,
            *state.moves,
            *state.move_result,
            *state.notebook_result,
            *state.radio_result,
        )
        parts: list[bytes | bytearray] = [self._prefix, ints, *state.used_exits]
        cache = self._texts
        texts = (
            *state.notebooks,
            *state.radio_outbox,
            *state.notebook_reason,
            *state.radio_reason,
        )
        for slot, text in enumerate(texts):
            cached = cache[slot]
            if cached[0] is not text:
                cached = cache[slot] = (text, _text_part(text))
            parts.append(cached[1])
        offsets = self._offsets
        if offsets[0] is not state.trail_offsets:
            column = np.array(state.trail_offsets, dtype="<i8").reshape(-1, 1)
            offsets = self._offsets = (state.trail_offsets, column)
        # == state.trail as little-endian 64-bit integers, one subtraction instead of three steps
        parts.append(np.subtract(state.trail_keys, offsets[1], dtype="<i8").tobytes())
        if self._symbols is not None:
            parts.append(self._symbols.pack(*state.radio_symbols))
        return hashlib.sha256(b"".join(parts)).digest()


def _text_part(text: str) -> bytes:
    data = text.encode()
    if len(data) < 128:
        return b"\0" + len(data).to_bytes(8, "little") + data
    return b"\1" + hashlib.sha256(data).digest()
