"""Exact analysis of an AGI Maze labyrinth over the engine's player states.

Every quantity here comes from the engine's own :func:`~maze_envs.agimaze.engine.transition`, so
the planner can never disagree with the rules: a :class:`~maze_envs.agimaze.engine.PlayerState`
holds everything that affects the future (position, inventory, taken grenade packs, blown walls),
and a breadth-first search over those states is an exact shortest-plan search.

* :func:`solve` -- a shortest action list that wins, or ``None`` when no action list wins.
* :func:`optimal_length` -- its length.
* :func:`random_agent_success` -- the exact probability that a uniform random agent (each action
  of the labyrinth's list with equal probability) has won within each of several step budgets,
  computed on the absorbing Markov chain of reachable states (the win absorbs);
  :func:`random_agent_win_curve` the whole curve, step by step.
* :func:`dead_states` -- the dead-state analysis: every reachable state, whether a win is still
  reachable from it (*live*) or not (*dead*), and the moves that enter a dead state from a live
  one; :func:`lost_at` -- the step at which a played action list entered a dead state.

A *dead state* is a reachable player state from which no action sequence wins: the player has
not lost yet by the rules (the game goes on until its budget runs out), but nothing it can do
will win. An episode that enters one is unwinnable from then on, which a researcher wants to tell
apart from an episode that was merely slow.

Example:
    >>> from maze_envs.agimaze.types import ExitGap, Labyrinth
    >>> lab = Labyrinth(rows=1, cols=3, open_edges=[[2, 10, 8]],
    ...                 exit=ExitGap(cell=(0, 0), side="left"), start=(0, 0),
    ...                 key=(0, 2), chest=(0, 1))
    >>> solve(lab)
    ['right', 'right', 'left', 'left', 'left']
    >>> optimal_length(lab)
    5
    >>> analysis = dead_states(lab)
    >>> len(analysis.graph.states), analysis.dead, lost_at(analysis, ["right", "right"])
    (6, (), None)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
from numpy.typing import NDArray

from maze_envs.agimaze.engine import (
    CompiledLabyrinth,
    PlayerState,
    compile_labyrinth,
    initial_state,
    transition,
)
from maze_envs.agimaze.types import Labyrinth

#: Search bound: far above any shipped labyrinth (a 10x10 board with every item has < 10^4).
DEFAULT_MAX_STATES: Final = 200_000
#: Successor index that stands for "the action won the game" in :class:`StateGraph`.
WIN: Final = -1


class PlanningError(ValueError):
    """The labyrinth's state space is larger than the search bound allows."""


def _compiled(lab: Labyrinth | CompiledLabyrinth) -> CompiledLabyrinth:
    return lab if isinstance(lab, CompiledLabyrinth) else compile_labyrinth(lab)


def _too_many(max_states: int) -> PlanningError:
    return PlanningError(
        f"more than {max_states} reachable player states; raise max_states if this labyrinth "
        "is meant to be this large"
    )


def solve(
    lab: Labyrinth | CompiledLabyrinth, *, max_states: int = DEFAULT_MAX_STATES
) -> list[str] | None:
    """A shortest winning action list for ``lab``, or ``None`` when the labyrinth cannot be won.

    Breadth-first over player states; actions are tried in the labyrinth's action order, so the
    plan returned is always the same one.
    """
    c = _compiled(lab)
    start = initial_state(c)
    parent: dict[PlayerState, tuple[PlayerState, str] | None] = {start: None}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        for action in c.actions:
            result = transition(c, state, action)
            if result.won:
                plan = [action]
                node = state
                while (link := parent[node]) is not None:
                    node, taken = link
                    plan.append(taken)
                plan.reverse()
                return plan
            nxt = result.state
            if nxt not in parent:
                if len(parent) >= max_states:
                    raise _too_many(max_states)
                parent[nxt] = (state, action)
                queue.append(nxt)
    return None


def optimal_length(
    lab: Labyrinth | CompiledLabyrinth, *, max_states: int = DEFAULT_MAX_STATES
) -> int | None:
    """Number of steps of the shortest win (``None`` when the labyrinth cannot be won)."""
    plan = solve(lab, max_states=max_states)
    return None if plan is None else len(plan)


@dataclass(frozen=True)
class StateGraph:
    """Every player state reachable from the start, with the successor of each action.

    ``successors[i, a]`` is the index of the state that action ``actions[a]`` leads to from
    ``states[i]``, or :data:`WIN` when that action wins. ``states[0]`` is the start.
    """

    actions: tuple[str, ...]
    states: tuple[PlayerState, ...]
    successors: NDArray[np.int64]
    labyrinth: Labyrinth


def state_graph(
    lab: Labyrinth | CompiledLabyrinth, *, max_states: int = DEFAULT_MAX_STATES
) -> StateGraph:
    """Enumerate the reachable states of ``lab`` (breadth-first from the start)."""
    c = _compiled(lab)
    start = initial_state(c)
    index: dict[PlayerState, int] = {start: 0}
    states = [start]
    rows: list[list[int]] = []
    i = 0
    while i < len(states):
        row: list[int] = []
        for action in c.actions:
            result = transition(c, states[i], action)
            if result.won:
                row.append(WIN)
                continue
            nxt = result.state
            j = index.get(nxt)
            if j is None:
                if len(states) >= max_states:
                    raise _too_many(max_states)
                j = index[nxt] = len(states)
                states.append(nxt)
            row.append(j)
        rows.append(row)
        i += 1
    successors = np.array(rows, dtype=np.int64).reshape(len(states), len(c.actions))
    return StateGraph(c.actions, tuple(states), successors, c.labyrinth)


def random_agent_win_curve(
    lab: Labyrinth | CompiledLabyrinth | StateGraph, horizon: int
) -> NDArray[np.float64]:
    """``curve[t]``: the exact probability that a uniform random agent has won within ``t`` steps.

    For ``t = 0 .. horizon``. The agent picks every action of the labyrinth's list with equal
    probability at every step (the random baseline of the real benchmark); a win ends the
    episode. The reachable states and a win form an absorbing Markov chain; the start's
    probability mass is pushed through it one step at a time.
    """
    if horizon < 0:
        raise ValueError(f"a horizon is >= 0, got {horizon}")
    graph = lab if isinstance(lab, StateGraph) else state_graph(lab)
    n, n_actions = graph.successors.shape
    share = 1.0 / n_actions
    won_from = (graph.successors == WIN).sum(axis=1) * share  # win probability of one step
    # Sparse push of the probability mass: mass[j] += share * mass[i] for each (i, a) -> j.
    src = np.repeat(np.arange(n), n_actions)
    dst = graph.successors.reshape(-1)
    keep = dst != WIN
    src, dst = src[keep], dst[keep]
    mass: NDArray[np.float64] = np.zeros(n)
    mass[0] = 1.0
    curve = np.zeros(horizon + 1)
    won = 0.0
    for step in range(1, horizon + 1):
        won += float(mass @ won_from)
        mass = np.bincount(dst, weights=mass[src] * share, minlength=n).astype(np.float64)
        curve[step] = won
    return curve


def random_agent_success(
    lab: Labyrinth | CompiledLabyrinth | StateGraph, horizons: Sequence[int]
) -> list[float]:
    """Exact probability that a uniform random agent has won within each budget of ``horizons``.

    See :func:`random_agent_win_curve`.
    """
    if not horizons:
        return []
    if any(h < 0 for h in horizons):
        raise ValueError(f"horizons must be >= 0, got {list(horizons)}")
    curve = random_agent_win_curve(lab, max(horizons))
    return [float(curve[h]) for h in horizons]


def win_length(graph: StateGraph) -> int | None:
    """The length of the shortest win of ``graph`` (``None`` when no state can win).

    ``state_graph`` numbers the states breadth-first from the start, so this equals
    :func:`optimal_length` without a second search.
    """
    succ = graph.successors
    depth = np.full(len(succ), -1, dtype=np.int64)
    depth[0] = 0
    frontier = np.array([0])
    step = 0
    while frontier.size:
        if (succ[frontier] == WIN).any():
            return step + 1
        nxt = succ[frontier].ravel()
        nxt = np.unique(nxt[nxt >= 0])
        nxt = nxt[depth[nxt] < 0]
        step += 1
        depth[nxt] = step
        frontier = nxt
    return None


def live_mask(graph: StateGraph) -> NDArray[np.bool_]:
    """``live[i]``: some action sequence still wins from ``graph.states[i]``.

    Backward reachability from the winning moves over the reversed state graph.
    """
    succ = graph.successors
    n, n_actions = succ.shape
    live: NDArray[np.bool_] = (succ == WIN).any(axis=1)
    src = np.repeat(np.arange(n), n_actions)
    dst = succ.reshape(-1)
    keep = dst >= 0
    src, dst = src[keep], dst[keep]
    order = np.argsort(dst, kind="stable")
    preds = src[order].tolist()
    offsets = np.searchsorted(dst[order], np.arange(n + 1)).tolist()
    stack = np.flatnonzero(live).tolist()
    flags = live.tolist()
    while stack:
        j = stack.pop()
        for i in preds[offsets[j] : offsets[j + 1]]:
            if not flags[i]:
                flags[i] = True
                stack.append(i)
    return np.array(flags, dtype=bool)


@dataclass(frozen=True)
class DeadEntry:
    """A move from a live state into a dead one: after it, the labyrinth cannot be won."""

    state: PlayerState
    action: str
    result: PlayerState
    events: tuple[str, ...]


@dataclass(frozen=True)
class DeadStates:
    """The dead-state analysis of a labyrinth (see :func:`dead_states`).

    ``graph`` holds every state reachable from the start and ``live[i]`` says whether a win is
    still reachable from ``graph.states[i]``.
    """

    graph: StateGraph
    live: NDArray[np.bool_]
    _index: dict[PlayerState, int] = field(repr=False, compare=False)

    @property
    def winnable(self) -> bool:
        """Whether the start can win at all."""
        return bool(self.live[0])

    @property
    def dead(self) -> tuple[PlayerState, ...]:
        """Every reachable state from which no action sequence wins, in search order."""
        return tuple(self.graph.states[i] for i in np.flatnonzero(~self.live))

    def is_live(self, state: PlayerState) -> bool:
        """Whether a win is still reachable from ``state`` (a state reachable from the start).

        Raises KeyError for a state that cannot be reached from the start.
        """
        index = self._index.get(state)
        if index is None:
            raise KeyError(f"{state} is not reachable from the start of this labyrinth")
        return bool(self.live[index])

    def entries(self) -> list[DeadEntry]:
        """Every move from a live state into a dead one (each once, in search order)."""
        graph, live = self.graph, self.live
        succ = graph.successors
        target = np.where(succ >= 0, succ, 0)
        enters = live[:, None] & (succ >= 0) & ~live[target]
        compiled: CompiledLabyrinth | None = None
        out: list[DeadEntry] = []
        for i, a in zip(*np.nonzero(enters), strict=True):
            state, action = graph.states[int(i)], graph.actions[int(a)]
            if compiled is None:
                compiled = compile_labyrinth(graph.labyrinth)
            result = transition(compiled, state, action)
            out.append(DeadEntry(state, action, result.state, tuple(result.events)))
        return out


def dead_states(
    lab: Labyrinth | CompiledLabyrinth, *, max_states: int = DEFAULT_MAX_STATES
) -> DeadStates:
    """Reachable states of ``lab``, which of them are live or dead, and the moves into the dead.

    Exhaustive over the engine's own transition (position, inventory, taken grenade packs and
    blown walls), so it never disagrees with the rules.
    """
    graph = state_graph(lab, max_states=max_states)
    index = {state: i for i, state in enumerate(graph.states)}
    return DeadStates(graph, live_mask(graph), index)


def lost_at(lab: Labyrinth | CompiledLabyrinth | DeadStates, actions: Iterable[str]) -> int | None:
    """The step at which playing ``actions`` from the start entered a dead state.

    ``None`` when every state on the way can still win (a win ends the count); ``0`` when the
    start itself cannot win; otherwise the 1-based number of the action that entered the first
    dead state (the episode was unwinnable from then on).
    """
    analysis = lab if isinstance(lab, DeadStates) else dead_states(lab)
    if not analysis.winnable:
        return 0
    compiled = compile_labyrinth(analysis.graph.labyrinth)
    state = initial_state(compiled)
    for step, action in enumerate(actions, start=1):
        result = transition(compiled, state, action)
        if result.won:
            return None
        state = result.state
        if not analysis.is_live(state):
            return step
    return None


__all__ = [
    "DEFAULT_MAX_STATES",
    "WIN",
    "DeadEntry",
    "DeadStates",
    "PlanningError",
    "StateGraph",
    "dead_states",
    "live_mask",
    "lost_at",
    "optimal_length",
    "random_agent_success",
    "random_agent_win_curve",
    "solve",
    "state_graph",
    "win_length",
]
