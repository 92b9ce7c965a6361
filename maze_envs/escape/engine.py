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
from typing import Final, NamedTuple

import numpy as np
from numpy.typing import NDArray

from maze_envs.escape.generator import Layout, tenths_table
from maze_envs.escape.notebook import append_line, splice
from maze_envs.escape.radio import check_message, cooldown_left
from maze_envs.escape.types import LANDMARK_NAMES, Config, State
from maze_envs.grid import DELTAS, OPPOSITE, bfs_distances

#: Direction bits in move-code order N, E, S, W.
MOVE_BITS = (1, 2, 4, 8)
STAY = 4
# Negative ``Board.step_to`` entries: why a move does not leave the cell (= MOVE_RESULTS index).
BUMP_INTERIOR, BUMP_OUTER, DOORWAY = 3, 4, 5

_DIGEST_VERSION: Final = b"maze_escape_v0/state/2"

SpliceArgs = tuple[int, int, str]
NotebookEdit = SpliceArgs | str | None  # splice args, rolling-log line, or no edit


@dataclass(frozen=True, eq=False)  # identity: holds arrays
class Board:
    """Lookup tables precomputed from a layout once per game, so a turn does no searching."""

    layout: Layout
    width: int
    height: int
    exit_cell: int
    step_to: tuple[tuple[int, ...], ...]  # [cell][move] -> new cell, or -result code
    edge_kinds: NDArray[np.int64]  # [cell] -> kinds N, E, S, W (0 open, 1 interior, 2 brick)
    exit_path: tuple[int, ...]  # [cell] -> moves to the exit
    exit_tenths: tuple[int, ...]  # [cell] -> straight-line tenths to the exit
    landmark: tuple[int, ...]  # [cell] -> 0 or 1 + index into LANDMARK_NAMES
    xy: tuple[tuple[int, int], ...]  # [cell] -> absolute (x east, y north) from the SW corner
    cells: tuple[tuple[int, int], ...]  # [cell] -> (row, column)
    starts: tuple[int, ...]
    digest: bytes  # SHA-256 of the layout, part of every state digest

    @classmethod
    def from_layout(cls, layout: Layout) -> Board:
        h, w = layout.height, layout.width
        maze = layout.maze.astype(np.int64)
        exit_r, exit_c = layout.exit_cell
        rows, cols = np.divmod(np.arange(h * w), w)
        step_to = np.empty((h * w, 4), dtype=np.int64)
        kinds = np.zeros((h * w, 4), dtype=np.int64)
        for k, bit in enumerate(MOVE_BITS):
            dr, dc = DELTAS[bit]
            nr, nc = rows + dr, cols + dc
            is_open = (maze.ravel() & bit) != 0
            inside = (nr >= 0) & (nr < h) & (nc >= 0) & (nc < w)
            step_to[:, k] = np.where(
                is_open, nr * w + nc, np.where(inside, -BUMP_INTERIOR, -BUMP_OUTER)
            )
            kinds[:, k] = np.where(is_open, 0, np.where(inside, 1, 2))
        k = MOVE_BITS.index(layout.doorway)
        step_to[exit_r * w + exit_c, k] = -DOORWAY  # the doorway reads as an open edge
        kinds[exit_r * w + exit_c, k] = 0
        xy = tuple((c, h - 1 - r) for r in range(h) for c in range(w))
        tenths = tenths_table(max(w, h))
        ex, ey = xy[exit_r * w + exit_c]
        landmark = [0] * (h * w)
        for (r, c), name in layout.landmarks:
            landmark[r * w + c] = 1 + LANDMARK_NAMES.index(name)
        return cls(
            layout=layout,
            width=w,
            height=h,
            exit_cell=exit_r * w + exit_c,
            step_to=tuple(map(tuple, step_to.tolist())),
            edge_kinds=kinds,
            exit_path=tuple(bfs_distances(layout.maze, layout.exit_cell).ravel().tolist()),
            exit_tenths=tuple(tenths[abs(x - ex)][abs(y - ey)] for x, y in xy),
            landmark=tuple(landmark),
            xy=xy,
            cells=tuple((r, c) for r in range(h) for c in range(w)),
            starts=tuple(r * w + c for r, c in layout.starts),
            digest=hashlib.sha256(
                layout.maze.tobytes()
                + repr((layout.exit_cell, layout.doorway, layout.landmarks, layout.starts)).encode()
            ).digest(),
        )


def initial_state(board: Board, config: Config) -> State:
    """The state at turn 0: agents on their starts, empty notebooks, nothing sent."""
    n = config.num_agents
    return State(
        turn=0,
        positions=list(board.starts),
        visited_exit=[False] * n,
        first_visit_turn=[-1] * n,
        notebooks=[""] * n,
        radio_outbox=[""] * n,
        radio_ready_turn=[1] * n,
        trail=np.full((n, config.trail_length), board.width * board.height, dtype=np.int64),
        used_exits=[bytearray(board.width * board.height) for _ in range(n)],
        wall_bumps=[0] * n,
        doorway_moves=[0] * n,
        moves=[0] * n,
        move_result=[0] * n,
        notebook_result=[0] * n,
        notebook_reason=[""] * n,
        radio_result=[0] * n,
        radio_reason=[""] * n,
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
) -> TurnOutcome:
    """Apply one turn of already-validated actions to ``state`` in place."""
    turn = state.turn + 1
    n = len(moves)
    positions = state.positions
    step_to = board.step_to
    if config.trail_length:
        trail = state.trail
        trail[:, :-1] = trail[:, 1:]
        trail[:, -1] = positions
    for i in range(n):
        here = positions[i]
        move = moves[i]
        if move == STAY:
            state.move_result[i] = 2
            continue
        there = step_to[here][move]
        if there >= 0:
            bit = MOVE_BITS[move]
            used = state.used_exits[i]
            used[here] |= bit
            used[there] |= OPPOSITE[bit]
            positions[i] = there
            state.moves[i] += 1
            state.move_result[i] = 1
        else:
            state.move_result[i] = -there
            if there == -DOORWAY:
                state.doorway_moves[i] += 1
            else:
                state.wall_bumps[i] += 1

    for i in range(n):
        edit = edits[i]
        if edit is None:
            state.notebook_result[i] = 0
            state.notebook_reason[i] = ""
            continue
        if isinstance(edit, tuple):
            start, end, text = edit
            new, reason = splice(
                state.notebooks[i],
                start,
                end,
                text,
                max_bytes=config.notebook_max_bytes,
                turn_bytes=config.notebook_turn_bytes,
            )
        else:
            new, reason = append_line(
                state.notebooks[i],
                edit,
                max_bytes=config.notebook_max_bytes,
                turn_bytes=config.notebook_turn_bytes,
            )
        if new is None:
            state.notebook_result[i] = 2
        else:
            state.notebooks[i] = new
            state.notebook_result[i] = 1
        state.notebook_reason[i] = reason

    outbox = state.radio_outbox
    for i in range(n):
        text = radios[i]
        outbox[i] = ""
        if not text:
            state.radio_result[i] = 0
            state.radio_reason[i] = ""
            continue
        reason = check_message(
            text,
            enabled=config.radio,
            max_bytes=config.radio_max_bytes,
            cooldown_left=cooldown_left(state.radio_ready_turn[i], turn - 1),
        )
        if reason:
            state.radio_result[i] = 2
        else:
            outbox[i] = text
            state.radio_result[i] = 1
            state.radio_ready_turn[i] = turn + config.radio_cooldown + 1
        state.radio_reason[i] = reason

    state.turn = turn
    rewards = [0.0] * n
    first_visits = [False] * n
    exit_cell = board.exit_cell
    pay_visits = config.reward_mode == "exit_and_team"
    for i in range(n):
        if positions[i] == exit_cell and not state.visited_exit[i]:
            state.visited_exit[i] = True
            state.first_visit_turn[i] = turn
            first_visits[i] = True
            if pay_visits:
                rewards[i] += config.exit_reward
    success = all(state.visited_exit)
    if success:
        state.success = True
        for i in range(n):
            rewards[i] += config.team_bonus
    return TurnOutcome(rewards, first_visits, success, not success and turn >= config.max_turns)


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
    trail cells as little-endian 64-bit integers.

    A text's part is computed once and reused while the state holds the same string object
    (strings are immutable, so an unchanged notebook costs nothing to hash again).
    """

    def __init__(self, board: Board, num_agents: int) -> None:
        self._prefix = _DIGEST_VERSION + board.digest
        self._ints = struct.Struct(f"<{2 + 10 * num_agents}q")
        self._texts: list[tuple[str, bytes]] = [("", _text_part(""))] * (4 * num_agents)

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
        parts.append(state.trail.astype("<i8", copy=False).tobytes())
        return hashlib.sha256(b"".join(parts)).digest()


def _text_part(text: str) -> bytes:
    data = text.encode()
    if len(data) < 128:
        return b"\0" + len(data).to_bytes(8, "little") + data
    return b"\1" + hashlib.sha256(data).digest()
