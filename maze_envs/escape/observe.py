"""What one agent sees: the observation dict, built straight from the state.

Always present:

* ``edges``: :class:`~maze_envs.escape.vocab.EdgeKind` codes of the N, E, S, W edges of the
  agent's cell: 0 ``open``, 1 ``interior_wall``, 2 ``outer_brick``. The exit doorway reads
  ``open``.
* ``on_exit`` (0/1), ``landmark`` (0 none, else 1 + index into ``LANDMARK_NAMES``), ``turn``,
  ``turns_left``, the agent's own ``notebook``.
* ``radio``: agent -> the message it sent last turn (``""`` when it sent none).
* ``teammate_notebooks``: agent -> ``{"shown": 1, "text": notebook}`` for teammates on the
  agent's cell, ``{"shown": 0, "text": ""}`` for the others.
* ``last_action``: results of the previous action (:class:`~maze_envs.escape.vocab.MoveResult`,
  :class:`~maze_envs.escape.vocab.NotebookResult`, :class:`~maze_envs.escape.vocab.RadioResult`
  codes), the reasons for a rejection, refusal or line drop (a splice whose positions lie past
  the notebook's text is rejected here with its reason), and ``radio_cooldown``, the turns left
  before the radio may send again.

Optional, one switch each (``Config``):

* ``distances`` (``distance_sensor``): straight-line distance between cell centres ignoring walls,
  in whole tenths of a cell: ``[exit, then one entry per agent slot]``.
* ``position`` (``coordinates``): ``[x, y]`` (x east, y north) in the frame ``absolute`` (origin
  ``(0, 0)`` at the maze's south-west corner cell), ``own`` (origin at the agent's own start
  cell) or ``shared`` (origin at agent A's start cell).
* ``trail`` and ``trail_length`` (``trail_length > 0``): the cells where the agent ended each of the
  last K turns, oldest first, in the same frame. The *last* row is last turn's cell; it never holds
  the current turn, and after a bump or a STAY it equals the current cell (the agent did not
  leave it). Only the last ``trail_length`` rows are real; earlier rows are zero padding.
* ``colocated_with`` (``meeting_alert``): 1 for each agent slot whose agent is on this cell.
* ``used_exits`` (``used_exits``): 1 for each edge of the current cell (N, E, S, W) that this agent
  has crossed in either direction, leaving or entering the cell.

Agent slots (the keys of ``radio`` and ``teammate_notebooks``, the order of ``distances[1:]`` and
``colocated_with``) depend on the layout version of the environment:

* **version 0** (``maze_escape_v0``): the *other* agents in name order, so each agent's
  observation space differs (B's radio has keys A, C; A's has B, C).
* **version 1** (``maze_escape_v1``): *every* agent in name order, the agent itself included,
  its own entry blank: ``radio[self] == ""``, ``teammate_notebooks[self] == {"shown": 0,
  "text": ""}``, ``distances[1 + self] == 0``, ``colocated_with[self] == 0``. Every agent has the
  same observation space (what vectorising libraries such as SuperSuit need).

Every returned observation is independent: its arrays are new each turn, writeable, and shared
with no other agent's observation and nothing inside the environment, so changing one changes
nothing else.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from maze_envs.escape.config import Config, EnvVersion
from maze_envs.escape.engine import Board
from maze_envs.escape.types import State
from maze_envs.escape.vocab import DIRECTIONS
from maze_envs.grid import tenths_table


def _template(values: Any, dtype: Any) -> NDArray[Any]:
    """A read-only array kept inside the Observer; observations get copies of it."""
    array = np.array(values, dtype=dtype)
    array.flags.writeable = False
    return array


#: used-edge bit mask (0..15) -> flags N, E, S, W (templates).
_EDGE_FLAGS = tuple(
    _template([(m >> k) & 1 for k in range(len(DIRECTIONS))], np.int8) for m in range(16)
)


class _Templates(dict[Any, NDArray[Any]]):
    """Read-only template arrays by key, built by ``make(key)`` on first use."""

    def __init__(self, make: Any, dtype: Any) -> None:
        super().__init__()
        self._make, self._dtype = make, dtype

    def __missing__(self, key: Any) -> NDArray[Any]:
        array = self[key] = _template(self._make(key), self._dtype)
        return array


class Observer:
    """Builds the observations of one game; frames and lookup tables are fixed at construction.

    Small array fields that take few values (edges, position, meeting alert, used exits) are
    built from read-only templates cached by value and handed out as copies (a copy costs less
    than building the array); distances and the trails of all agents are computed once per turn
    into a new array whose rows go to the agents. So nothing handed out is shared with another
    observation or with the environment.
    """

    def __init__(self, board: Board, config: Config, version: EnvVersion = 0) -> None:
        self.board = board
        self.config = config
        self.version = version
        n = config.num_agents
        self.names = config.agents
        # Per agent, the indices and names of the slots of its per-agent fields, in name order.
        self.slot_indices = [tuple(j for j in range(n) if version == 1 or j != i) for i in range(n)]
        self.slot_names = [tuple(self.names[j] for j in idx) for idx in self.slot_indices]
        xy = np.array(board.xy, dtype=np.int64)
        if config.coordinates == "own":
            origins = xy[list(board.starts)]
        elif config.coordinates == "shared":
            origins = np.repeat(xy[board.starts[0]][None, :], n, axis=0)
        else:
            origins = np.zeros((n, 2), dtype=np.int64)
        # frames[i, cell] = agent i's coordinates of cell; one extra zero row pads the trail.
        frames = xy[None, :, :] - origins[:, None, :]
        frames = np.concatenate([frames, np.zeros((n, 1, 2), dtype=np.int64)], axis=1)
        # The same table flat: row agent * (cells + 1) + cell, which is the trail key of
        # State.trail_ring, so one ``take`` per turn gathers every trail.
        self._flat_frames = frames.reshape(-1, 2)
        self._frames = frames
        self.tenths = tenths_table(max(board.width, board.height))
        # Templates by value, filled on first use (a dict's __missing__ keeps hits in C).
        self._edges = _Templates(lambda cell: board.edge_kinds[cell], np.int64)
        self._positions = [
            _Templates(lambda cell, i=i: frames[i, cell], np.int64) for i in range(n)
        ]
        self._colocated = _Templates(lambda key: key, np.int8)
        # Per agent, the meeting-alert key when nobody shares its cell.
        self._nobody = [tuple(False for _ in idx) for idx in self.slot_indices]

    def observe_all(self, state: State) -> list[dict[str, Any]]:
        """Observation dicts of every agent, in agent order (all of them new objects)."""
        # Written for speed (it runs every turn): locals instead of attribute lookups, plain
        # loops instead of comprehensions (each costs a function call in Python 3.11), and
        # cached read-only templates copied instead of arrays built from Python lists.
        board, config = self.board, self.config
        positions, notebooks, outbox = state.positions, state.notebooks, state.radio_outbox
        turn = state.turn
        n = len(positions)
        uniform = self.version == 1
        slot_indices, slot_names = self.slot_indices, self.slot_names
        apart = len(set(positions)) == n  # the common case: nobody shares a cell
        trail_on = config.trail_length > 0
        if trail_on:  # one new (agents, K, 2) array; each agent gets its own row
            # trail keys index this table directly (see State.trail_ring)
            trails = self._flat_frames.take(state.trail_keys, axis=0)
            trail_length = turn if turn < config.trail_length else config.trail_length
        sensor = config.distance_sensor
        if sensor:  # one new (agents, 1 + slots) array, a row per agent
            tenths, exit_tenths, xy = self.tenths, board.exit_tenths, board.xy
            flat = []
            for i, here in enumerate(positions):
                x, y = xy[here]
                flat.append(exit_tenths[here])
                for j in slot_indices[i]:  # 0 for the agent itself (version 1)
                    ox, oy = xy[positions[j]]
                    flat.append(tenths[abs(ox - x)][abs(oy - y)])
            # fromiter on a flat list is much cheaper than np.array on nested lists
            distances = np.fromiter(flat, np.int64, len(flat)).reshape(n, -1)
        frame = config.coordinates is not None
        meeting, used_exits = config.meeting_alert, config.used_exits
        edges_cache, colocated_cache, position_caches = (
            self._edges,
            self._colocated,
            self._positions,
        )
        exit_cell, landmark, turns_left = board.exit_cell, board.landmark, config.max_turns - turn
        move_result, notebook_result, radio_result = (
            state.move_result,
            state.notebook_result,
            state.radio_result,
        )
        notebook_reason, radio_reason, ready_turns = (
            state.notebook_reason,
            state.radio_reason,
            state.radio_ready_turn,
        )
        names = self.names
        sent = dict(zip(names, outbox, strict=True))  # each agent's radio: a copy of this
        result = []
        for i in range(n):
            here = positions[i]
            radio = sent.copy()
            if uniform:  # the agent's own slot is blank
                radio[names[i]] = ""
            else:  # version 0: teammates only
                del radio[names[i]]
            seen = {}
            if apart:
                for name in slot_names[i]:
                    seen[name] = {"shown": 0, "text": ""}
                together = self._nobody[i]
            else:
                flags = []
                for j, name in zip(slot_indices[i], slot_names[i]):  # noqa: B905 (same length)
                    if positions[j] == here and j != i:
                        seen[name] = {"shown": 1, "text": notebooks[j]}
                        flags.append(True)
                    else:
                        seen[name] = {"shown": 0, "text": ""}
                        flags.append(False)
                together = tuple(flags)
            ready = ready_turns[i] - turn - 1
            obs: dict[str, Any] = {
                "edges": edges_cache[here].copy(),
                "on_exit": int(here == exit_cell),
                "landmark": landmark[here],
                "turn": turn,
                "turns_left": turns_left,
                "notebook": notebooks[i],
                "radio": radio,
                "teammate_notebooks": seen,
                "last_action": {
                    "move": move_result[i],
                    "notebook": notebook_result[i],
                    "notebook_reason": notebook_reason[i],
                    "radio": radio_result[i],
                    "radio_reason": radio_reason[i],
                    "radio_cooldown": ready if ready > 0 else 0,
                },
            }
            if sensor:
                obs["distances"] = distances[i]
            if frame:
                obs["position"] = position_caches[i][here].copy()
            if trail_on:
                obs["trail"] = trails[i]
                obs["trail_length"] = trail_length
            if meeting:
                obs["colocated_with"] = colocated_cache[together].copy()
            if used_exits:
                obs["used_exits"] = _EDGE_FLAGS[state.used_exits[i][here]].copy()
            result.append(obs)
        return result
