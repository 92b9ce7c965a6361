"""What one agent sees: the observation dict, built once per turn straight from the engine state.

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

Optional, one switch each (``Config``), declared in :mod:`maze_envs.escape.features`, whose
keys follow in this order:

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

Every returned observation is independent: each turn's arrays are new, writeable, and no two
observations (of two agents or two turns) share memory. The same arrays are what
:meth:`Observer.arrays` hands to the numeric wrappers right after a step, so they need not be
derived again from the dicts; the environment itself never reads them again, so changing an
observation changes nothing the environment does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from maze_envs.escape.config import Config, EnvVersion
from maze_envs.escape.engine import Board
from maze_envs.escape.features import Computation, FeatureContext, Templates, enabled_features
from maze_envs.escape.types import State
from maze_envs.escape.vocab import MoveResult, NotebookResult

__all__ = ["BASE_COLUMNS", "ObservationArrays", "Observer"]

_MOVED: Final = int(MoveResult.MOVED)
_APPLIED: Final = int(NotebookResult.APPLIED)

#: The keys every observation has, in order (the features' keys follow).
_BASE_KEYS: Final = (
    "edges",
    "on_exit",
    "landmark",
    "turn",
    "turns_left",
    "notebook",
    "radio",
    "teammate_notebooks",
    "last_action",
)

#: The columns of :attr:`ObservationArrays.base`, then one ``radio_heard`` and one
#: ``notebook_shown`` flag per agent slot.
BASE_COLUMNS: Final = (
    "on_exit",
    "landmark",
    "turn",
    "turns_left",
    "trail_length",
    "last_action.move",
    "last_action.notebook",
    "last_action.radio",
    "last_action.radio_cooldown",
)


class ObservationArrays:
    """Every agent's observation of one turn as arrays, for the numeric wrappers.

    ``arrays[key]`` is the list of the agents' arrays (agents in name order) of an array field
    of the observation dicts (``edges`` and the features' array keys): the very arrays the dicts
    hold, not copies, so read them before the observations are handed on. :attr:`base` holds the
    integer fields as an ``(agents, columns)`` matrix computed from the engine state on first
    use: the :data:`BASE_COLUMNS`, then one ``radio_heard`` flag per agent slot (a message came
    from that agent last turn) and one ``notebook_shown`` flag per agent slot (its notebook is
    shown). Its ``trail_length`` is 0 without a trail.
    """

    def __init__(self, observer: Observer, state: State, observations: list[dict[str, Any]]):
        self._observer, self._state, self.observations = observer, state, observations
        self._base: list[list[int]] | None = None
        self.turn = state.turn

    def __getitem__(self, key: str) -> list[NDArray[Any]]:
        if key not in self.observations[0]:
            raise KeyError(f"no observation field {key!r}; known: {list(self.observations[0])}")
        return [obs[key] for obs in self.observations]

    @property
    def base_rows(self) -> list[list[int]]:
        """:attr:`base` as one list of ints per agent (what the numeric wrappers gather from)."""
        if self._base is None:
            if self._state.turn != self.turn:
                raise ValueError(f"these are the arrays of turn {self.turn}; read them then")
            self._base = self._observer.base_rows(self._state)
        return self._base

    @property
    def base(self) -> NDArray[np.int64]:
        return np.array(self.base_rows, dtype=np.int64)


class Observer:
    """Builds the observations of one game; frames and lookup tables are fixed at construction.

    Small array fields that take few values (edges, position, meeting alert, used exits) are
    built from read-only templates cached by value and handed out as copies (a copy costs less
    than building the array); distances and the trails of all agents are computed once per turn
    into a new array whose rows go to the agents. So nothing handed out is shared with another
    observation or with the environment. The optional fields are the computations of
    :mod:`maze_envs.escape.features`.
    """

    def __init__(self, board: Board, config: Config, version: EnvVersion = 0) -> None:
        self.board = board
        self.config = config
        self.version = version
        self.context = context = FeatureContext(board, config, version)
        self.names = context.names
        self.slot_indices, self.slot_names = context.slot_indices, context.slot_names
        self._computations: list[Computation] = [
            feature.observer(context) for feature in enabled_features(config)
        ]
        self._edges = Templates(lambda cell: board.edge_kinds[cell])
        # Every key of an observation, in order, values None: each observation starts as a copy
        # (a copy of a dict is one block copy; building it key by key grows it past its size
        # once the features add theirs)
        features = enabled_features(config)
        keys = [*_BASE_KEYS, *(key for f in features for key in f.keys)]
        self._blank: dict[str, Any] = dict.fromkeys(keys)
        self._last: tuple[State, int, list[dict[str, Any]]] | None = None
        self._hints = _ChangeHints(features, config.num_agents)

    def changes(self, state: State) -> dict[str, frozenset[str]]:
        """The change hint of this turn's observations for the journal (:mod:`maze_envs.journal.
        delta`): for each agent, the keys whose values may differ from the previous turn's
        (the keys left out are exactly as they were). Call it once per turn, after the turn."""
        return self._hints(state, self.names)

    def observe_all(self, state: State) -> list[dict[str, Any]]:
        """Observation dicts of every agent, in agent order (all of them new objects)."""
        # Written for speed (it runs every turn): locals instead of attribute lookups, plain
        # loops instead of comprehensions (each costs a function call in Python 3.11).
        board = self.board
        positions, notebooks, outbox = state.positions, state.notebooks, state.radio_outbox
        turn = state.turn
        n = len(positions)
        uniform = self.version == 1
        slot_indices, slot_names = self.slot_indices, self.slot_names
        apart = len(set(positions)) == n  # the common case: nobody shares a cell
        edges_cache = self._edges
        exit_cell, landmark = board.exit_cell, board.landmark
        turns_left = self.config.max_turns - turn
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
        names, blank = self.names, self._blank
        # each agent's radio is a copy of this (zip without strict=: one message per agent, and
        # a keyword argument makes the call slower)
        sent = dict(zip(names, outbox))  # noqa: B905
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
            else:
                for j, name in zip(slot_indices[i], slot_names[i]):  # noqa: B905 (same length)
                    if positions[j] == here and j != i:
                        seen[name] = {"shown": 1, "text": notebooks[j]}
                    else:
                        seen[name] = {"shown": 0, "text": ""}
            ready = ready_turns[i] - turn - 1
            obs = blank.copy()
            obs["edges"] = edges_cache[here].copy()
            obs["on_exit"] = 1 if here == exit_cell else 0
            obs["landmark"] = landmark[here]
            obs["turn"] = turn
            obs["turns_left"] = turns_left
            obs["notebook"] = notebooks[i]
            obs["radio"] = radio
            obs["teammate_notebooks"] = seen
            obs["last_action"] = {
                "move": move_result[i],
                "notebook": notebook_result[i],
                "notebook_reason": notebook_reason[i],
                "radio": radio_result[i],
                "radio_reason": radio_reason[i],
                "radio_cooldown": ready if ready > 0 else 0,
            }
            result.append(obs)
        for compute in self._computations:  # the optional features' keys, in order
            compute(state, result)
        self._last = (state, turn, result)
        return result

    def arrays(self, state: State) -> ObservationArrays:
        """The arrays of the observations the last :meth:`observe_all` returned
        (``ValueError`` when that was not of ``state`` as it is now)."""
        last = self._last
        if last is None or last[0] is not state or last[1] != state.turn:
            raise ValueError("the observation arrays are those of the last observations only")
        return ObservationArrays(self, state, last[2])

    def base_rows(self, state: State) -> list[list[int]]:
        """:attr:`ObservationArrays.base_rows` of ``state``."""
        board = self.board
        positions, turn, outbox = state.positions, state.turn, state.radio_outbox
        exit_cell, landmark = board.exit_cell, board.landmark
        turns_left, k = self.config.max_turns - turn, self.config.trail_length
        trail_length = turn if turn < k else k
        moves, notebooks, radios = state.move_result, state.notebook_result, state.radio_result
        ready_turns = state.radio_ready_turn
        sent = [1 if text else 0 for text in outbox]
        rows = []
        for i, here in enumerate(positions):
            ready = ready_turns[i] - turn - 1
            row = [
                1 if here == exit_cell else 0,
                landmark[here],
                turn,
                turns_left,
                trail_length,
                moves[i],
                notebooks[i],
                radios[i],
                ready if ready > 0 else 0,
            ]
            append = row.append
            slots = self.slot_indices[i]
            for j in slots:  # the agent itself never counts (its own slot is blank)
                append(sent[j] if j != i else 0)
            for j in slots:
                append(1 if positions[j] == here and j != i else 0)
            rows.append(row)
        return rows


class _ChangeHints:
    """Works out which keys of each agent's observation a turn may have changed, from what the
    engine did (moves, notebook edits, messages, who shares a cell), not from the values."""

    def __init__(self, features: Sequence[Any], agents: int) -> None:
        by_kind: dict[str, set[str]] = {"own_move": set(), "any_move": set(), "turn": set()}
        for feature in features:
            by_kind[feature.changes].update(feature.keys)
        self._always = frozenset({"turn", "turns_left", "last_action", *by_kind["turn"]})
        self._own_move = frozenset({"edges", "on_exit", "landmark", *by_kind["own_move"]})
        self._any_move = frozenset(by_kind["any_move"])
        self._sets: dict[tuple[bool, ...], frozenset[str]] = {}
        self._outbox: tuple[str, ...] = ("",) * agents
        self._shown: list[tuple[Any, ...]] = [()] * agents  # (teammate, notebook) each was shown

    def _keys(self, flags: tuple[bool, ...]) -> frozenset[str]:
        keys = self._sets.get(flags)
        if keys is None:
            own, anyone, notebook, radio, shown = flags
            parts = [self._always]
            if own:
                parts.append(self._own_move)
            if anyone:
                parts.append(self._any_move)
            names = [("notebook", notebook), ("radio", radio), ("teammate_notebooks", shown)]
            keys = self._sets[flags] = frozenset().union(*parts, {k for k, on in names if on})
        return keys

    def __call__(self, state: State, names: tuple[str, ...]) -> dict[str, frozenset[str]]:
        positions, notebooks = state.positions, state.notebooks
        moved = [result == _MOVED for result in state.move_result]
        anyone = any(moved)
        outbox = tuple(state.radio_outbox)
        radio = outbox != self._outbox
        self._outbox = outbox
        n = len(positions)
        if len(set(positions)) == n:  # nobody shares a cell: nobody is shown a notebook
            shown_now: list[tuple[Any, ...]] = [()] * n
        else:
            shown_now = [  # who shares the cell, and the notebook each shows
                tuple(
                    (j, notebooks[j]) for j in range(n) if j != i and positions[j] == positions[i]
                )
                for i in range(n)
            ]
        shown_before, self._shown = self._shown, shown_now
        applied = state.notebook_result
        return {
            name: self._keys(
                (
                    moved[i],
                    anyone,
                    applied[i] == _APPLIED,
                    radio,
                    shown_now[i] != shown_before[i],
                )
            )
            for i, name in enumerate(names)
        }
