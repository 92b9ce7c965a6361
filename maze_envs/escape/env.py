"""Maze Escape: a cooperative maze for several agents that see only their own cell.

The environment reference (description, spaces, rewards, episode end, arguments, version history)
is the docstring of :class:`MazeEscapeEnv`, in the sections MiniGrid's environments use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

import numpy as np
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from maze_envs.escape.actions import NotebookEdit, accept, describe_keys, take_symbol
from maze_envs.escape.convert import action_from_json, action_from_model
from maze_envs.escape.engine import (
    Board,
    StateDigest,
    TurnOutcome,
    initial_state,
    resolve_turn,
)
from maze_envs.escape.generator import Generator, Layout, describe_generator, make_generator
from maze_envs.escape.observe import ObservationArrays, Observer
from maze_envs.escape.spaces import action_space, observation_space
from maze_envs.escape.types import (
    ENV_IDS,
    MOVE_RESULTS,
    NOTEBOOK_RESULTS,
    RADIO_RESULTS,
    Action,
    Config,
    EnvVersion,
    State,
)
from maze_envs.escape.viewer import render_ansi, render_rgb
from maze_envs.journal.recorder import Recorder

ENV_ID: Final = ENV_IDS[0]


class MazeEscapeEnv(ParallelEnv[str, dict[str, Any], dict[str, Any]]):
    """Maze Escape: a cooperative maze for several agents that see only their own cell
    (the ``ParallelEnv``, version 0; see also :class:`MazeEscapeV1Env`).

    ## Description

    Agents A, B, C, ... start on distinct cells of a perfect maze (every cell reachable, no loops)
    generated from the seed. One boundary cell is the exit, with a doorway in the outer wall.
    Named landmarks (tree, picture, piano, ...) sit on distinct cells. Every agent must visit the
    exit at least once; visiting does not remove an agent, so one that has found the exit can go
    back and help. Each agent keeps a notebook, its only memory, and may radio its teammates;
    agents on the same cell read each other's notebooks. All agents act at the same time and may
    share cells. A move into an interior wall or the outer brick leaves the agent where it is,
    tells it so next turn and is counted; a move out through the doorway keeps it on the exit.
    The full rules are in :mod:`maze_envs.escape.engine`.

    ## Action Space

    The same ``Dict`` for every agent (:mod:`maze_envs.escape.spaces`):

    ============  =============================================================================
    key           value
    ============  =============================================================================
    move          ``Discrete(5)``: 0 N, 1 E, 2 S, 3 W, 4 STAY (:class:`~.vocab.Move`)
    notebook      ``splice`` mode: ``{"edit": 0|1, "start": 0..65536, "end": 0..65536, "text"}``
                  replaces characters ``start:end`` (``edit=0``: no edit); ``rolling_log``
                  mode: ``{"append": text}`` (``""``: nothing)
    radio         text to every teammate (``""`` sends nothing)
    radio_symbol  only with ``radio_symbols=K``: ``Discrete(K + 1)``, a symbol sent with the
                  radio (0: none), heard next turn as ``radio_symbols``, under its cooldown
    ============  =============================================================================

    Typed :class:`~maze_envs.escape.types.Action` models, any ``Mapping`` and numpy integers are
    accepted too; every accepted action is normalised to plain data before it is applied and
    journaled. Anything outside the space (a negative or > 65536 splice position, a move of 5,
    a key other than these three, text over 65536 UTF-8 bytes...) raises ``ValueError`` naming
    the agent before the state changes. Inside the space, edits and messages that break a rule
    are rejected with a reason shown next turn: in particular a splice position past the end of
    the notebook's text (or ``start > end``) leaves the notebook unchanged and
    ``last_action.notebook_reason`` says why.

    ## Observation Space

    A ``Dict`` per agent, documented field by field in :mod:`maze_envs.escape.observe`: the four
    edges of the agent's cell, ``on_exit``, the landmark, turn and turns left, its notebook, last
    turn's radio messages, notebooks of teammates on its cell and the result of its last action;
    plus, when switched on in the config, distance sensors, coordinates (``[x, y]``, x east, y
    north, in the ``own``/``shared``/``absolute`` frame; ``absolute`` has its origin at the
    south-west corner cell), a trail (its last entry is last turn's cell, which equals the current
    cell after a bump or STAY), a meeting alert and used exits. In **v1** the per-teammate
    fields (``radio``, ``teammate_notebooks``, ``distances[1:]``, ``colocated_with``) have one
    entry per agent in name order, the agent's own entry blank, so every agent has the same
    space; in **v0** they list only the other agents. Observations are new objects every turn,
    shared with nothing. Typed :class:`~maze_envs.escape.types.Observation` models (the same for
    both versions), their JSON form and the rebuilding of a journaled observation come from
    :mod:`maze_envs.escape.convert`.

    ## Rewards

    ``reward_mode="exit_and_team"`` (default): ``exit_reward`` (1.0) to an agent on its first exit
    visit, and ``team_bonus`` (1.0) to every agent when the last agent makes its first visit.
    ``"team_sparse"``: only the team bonus.

    ## Starting State

    Turn 0; agents on distinct non-exit cells at least ``min_start_distance`` moves from the exit;
    notebooks empty; nothing on the radio.

    ## Episode End

    Termination for every agent when all have visited the exit (team success). Truncation for
    every agent at turn ``max_turns``.

    ## Arguments

    ``config`` (a :class:`~maze_envs.escape.types.Config`), or keyword overrides of the defaults
    (see ``maze_escape_v1.parallel_env(preset=..., **overrides)``); ``render_mode`` one of
    ``human``, ``ansi``, ``rgb_array``; ``generator`` an injected layout generator; ``journal``
    a :class:`maze_envs.journal.Journal` or a path to record every turn to SQLite (a journaled
    game's generator must be one a replay can rebuild: the config's ``maze_algorithm``, a
    ``PerfectMazeGenerator`` or a ``FixedGenerator``; others raise ``ValueError``; ``env.recorder``
    is its :class:`~maze_envs.journal.recorder.Recorder`; a write that fails raises
    ``JournalError`` and the game takes no more steps until ``reset()``).
    ``infos`` carry per-agent events and analysis fields the agents never see: ``xy`` (the true
    position, absolute ``(x, y)``, x east, y north from the south-west corner), ``row_col``
    (the same cell as ``(row, column)``, row 0 north, as the viewer and
    :meth:`MazeEscapeEnv.ground_truth` use), ``path_distance_to_exit``, wall bumps and doorway
    moves.

    ## Version History

    * v1: every agent has the same observation space (per-teammate fields keyed by all agent
      names, the agent's own entry blank); rules and trajectories unchanged.
    * v0: initial version (per-teammate fields keyed by the other agents).

    ## Example

    >>> from maze_envs import maze_escape_v1
    >>> env = maze_escape_v1.parallel_env(preset="navigator", width=9, height=9, max_turns=50)
    >>> observations, infos = env.reset(seed=7)
    >>> sorted(observations)
    ['A', 'B', 'C']
    >>> observations["A"]["position"].tolist(), observations["A"]["trail_length"]
    ([0, 0], 0)
    >>> step = {"move": 0, "notebook": {"append": "start"}, "radio": "hello"}
    >>> observations, rewards, terms, truncs, infos = env.step({a: step for a in env.agents})
    >>> observations["A"]["notebook"], observations["B"]["radio"]["A"]
    ('start\\n', 'hello')
    >>> observations["A"]["radio"]["A"]  # v1: the agent's own slot is blank
    ''
    >>> env.observation_space("A") == env.observation_space("B")
    True
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "maze_escape_v0",
        "render_modes": ["human", "ansi", "rgb_array"],
        "render_fps": 4,
        "is_parallelizable": True,
    }
    #: The id games of this environment are journaled under (the replayer builds it from it).
    env_id: ClassVar[str] = ENV_ID
    #: Layout version of the observations (see :mod:`maze_envs.escape.observe`).
    version: ClassVar[EnvVersion] = 0

    def __init__(
        self,
        config: Config | None = None,
        *,
        render_mode: str | None = None,
        generator: Generator | None = None,
        journal: Any = None,
    ) -> None:
        self.config = config if config is not None else Config()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode {render_mode!r} is not supported; use one of "
                f"{self.metadata['render_modes']} or None"
            )
        self.render_mode = render_mode
        self.generator = (
            generator if generator is not None else make_generator(self.config.maze_algorithm)
        )
        # Refuse, before anything is written, a journal whose games a replay could not rebuild.
        generator_spec = (
            describe_generator(generator, self.config)
            if journal is not None and generator is not None
            else None
        )
        self.possible_agents = list(self.config.agents)
        self.agents: list[str] = []
        self._obs_spaces = {
            a: observation_space(self.config, a, self.version) for a in self.possible_agents
        }
        # Each agent gets its own action space object so seeding one does not seed the others.
        self._act_spaces = {a: action_space(self.config) for a in self.possible_agents}
        self._splice = self.config.notebook_mode == "splice"
        self._symbols = self.config.radio_symbols  # 0: actions carry no radio symbol
        self.np_random: np.random.Generator | None = None
        self.game_seed: int | None = None
        #: Writes every game to the journal (None without ``journal=``).
        self.recorder = (
            Recorder(
                journal,
                env_id=self.env_id,
                config=self.config.model_dump(mode="json"),
                generator=generator_spec,
            )
            if journal is not None
            else None
        )
        self._board: Board | None = None
        self._state: State | None = None
        self._observer: Observer | None = None
        self._digest: StateDigest | None = None
        self._shortest: tuple[int, ...] = ()
        self._live: frozenset[str] = frozenset()

    # --- spaces ------------------------------------------------------------------------------
    def observation_space(self, agent: str) -> Any:
        return self._obs_spaces[agent]

    def action_space(self, agent: str) -> Any:
        return self._act_spaces[agent]

    # --- the game ----------------------------------------------------------------------------
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
        """Start a new game. ``seed=None`` draws the game's seed from the previous generator
        (or from entropy the first time), so every game has a seed that reproduces it."""
        if seed is None:
            seed = (
                int(self.np_random.integers(2**63))
                if self.np_random is not None
                else int(np.random.SeedSequence().generate_state(2, np.uint64)[0] >> np.uint64(1))
            )
        self._abort_unfinished_game()
        self.np_random, _ = seeding.np_random(seed)
        self.game_seed = seed
        layout = self.generator.generate(self.config, self.np_random)
        self._board = board = Board.from_layout(layout)
        self._state = initial_state(board, self.config)
        self._observer = Observer(board, self.config, self.version)
        self._digest = StateDigest(board, self.config.num_agents, symbols=bool(self._symbols))
        self._shortest = tuple(board.exit_path[cell] for cell in board.starts)
        self.agents = list(self.possible_agents)
        self._live = frozenset(self.agents)
        observations = self._observations()
        infos = self._infos(None)
        for name, shortest in zip(self.possible_agents, self._shortest, strict=True):
            infos[name]["start_path_to_exit"] = shortest
            infos[name]["fastest_possible_finish"] = max(self._shortest)
        if self.recorder is not None:
            self.recorder.start(seed, observations, self.state_digest())
        return observations, infos

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[
        dict[str, dict[str, Any]],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        """Resolve one turn of simultaneous actions (one per live agent)."""
        state, board = self._state, self._board
        if state is None or board is None or not self.agents:
            raise RuntimeError("the game is over or was never started: call reset() first")
        if self.recorder is not None:
            self.recorder.check()  # a game the journal stopped recording takes no more steps
        if not (type(actions) is dict or isinstance(actions, Mapping)) or (
            len(actions) != len(self.agents)
        ):
            raise self._not_one_action_each(actions)
        moves, edits, radios = [], [], []
        received: dict[str, Any] = {}  # every action as plain data: what the journal records
        config, splice_mode = self.config, self._splice
        symbols: list[int] | None = [] if self._symbols else None
        for agent in self.agents:
            try:  # as many actions as agents, and one for each agent: exactly the agents
                raw = actions[agent]
            except KeyError:
                raise self._not_one_action_each(actions) from None
            if symbols is not None:
                move, edit, radio, received[agent], symbol = self._accept_with_symbol(agent, raw)
                symbols.append(symbol)
            elif type(raw) is not dict and isinstance(raw, Action):
                typed = received[agent] = raw.model_dump(mode="json")  # recorded as JSON
                # == action_from_model(raw, config), from the one dump
                move, edit, radio, _ = accept(agent, action_from_json(typed, config), splice_mode)
            else:
                move, edit, radio, received[agent] = accept(agent, raw, splice_mode)
            moves.append(move)
            edits.append(edit)
            radios.append(radio)
        actions = received
        outcome = resolve_turn(state, board, self.config, moves, edits, radios, symbols)
        names = self.agents
        observations = self._observations()
        # zip without strict= (a keyword argument costs a slower call): one reward per agent
        rewards = dict(zip(names, outcome.rewards))  # noqa: B905
        terminations = dict.fromkeys(names, outcome.success)
        truncations = dict.fromkeys(names, outcome.truncated)
        infos = self._infos(outcome)
        if self.recorder is not None:
            events = {name: info["events"] for name, info in infos.items()}
            digest = self.state_digest()
            observer = self._observer
            assert observer is not None
            changed = observer.changes(state)
            self.recorder.turn(state.turn, observations, actions, events, digest, changed)
            if outcome.success or outcome.truncated:
                self.recorder.finish(self.outcome())
        if outcome.success or outcome.truncated:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos

    def _not_one_action_each(self, actions: Any) -> ValueError:
        got = describe_keys(actions) if isinstance(actions, Mapping) else type(actions)
        return ValueError(f"step needs one action for each of {self.agents}, got {got}")

    def _accept_with_symbol(
        self, agent: str, raw: Any
    ) -> tuple[int, NotebookEdit, str, dict[str, Any], int]:
        """An action of a game with radio symbols checked: move, notebook edit, radio text,
        what the journal records (the typed form as JSON, or the plain action with its
        ``radio_symbol``) and the symbol."""
        if isinstance(raw, Action):
            typed = raw.model_dump(mode="json")  # == action_from_model(raw, config), one dump
            symbol, rest = take_symbol(agent, action_from_json(typed, self.config), self._symbols)
            move, edit, radio, _ = accept(agent, rest, self._splice)
            return move, edit, radio, typed, symbol
        symbol, rest = take_symbol(agent, raw, self._symbols)
        move, edit, radio, plain = accept(agent, rest, self._splice)
        return move, edit, radio, {**plain, "radio_symbol": symbol}, symbol

    def accept(self, agent: str, action: Any) -> Any:
        """``action`` checked against ``agent``'s action space, in the form :meth:`step` takes
        and records: plain data for an action dict (``Mapping`` parts become ``dict``, numpy
        integers ``int``), the model itself for a typed :class:`Action` (it is immutable).
        Raises ``ValueError`` saying what is wrong; nothing changes. The AEC form calls it on
        each action as it arrives."""
        if agent not in self._live:
            raise ValueError(f"{agent!r} is not a live agent; live agents: {self.agents}")
        if self._symbols:
            plain = self._accept_with_symbol(agent, action)[3]
        elif isinstance(action, Action):
            accept(agent, action_from_model(action, self.config), self._splice)
        else:
            plain = accept(agent, action, self._splice)[3]
        if isinstance(action, Action):
            return action
        # a new object even when the action was plain already: the caller may change its own
        return {**plain, "notebook": dict(plain["notebook"])}

    def observation_arrays(self) -> ObservationArrays:
        """The latest observations of every agent as integer arrays, a row per agent (what the
        numeric wrappers read instead of the dicts; see
        :class:`~maze_envs.escape.observe.ObservationArrays`). Read them before the next step.
        """
        observer, state = self._observer, self._state
        if observer is None or state is None:
            raise RuntimeError("no game yet: call reset() first")
        return observer.arrays(state)

    def _observations(self) -> dict[str, dict[str, Any]]:
        assert self._observer is not None and self._state is not None
        observations = self._observer.observe_all(self._state)  # one per agent, in order
        return dict(zip(self.possible_agents, observations))  # noqa: B905 (no keyword: faster)

    def _infos(self, outcome: TurnOutcome | None) -> dict[str, dict[str, Any]]:
        """Per-agent analysis fields and events (never part of any observation)."""
        state, board = self._state, self._board
        assert state is not None and board is not None
        first_visits = outcome.first_visits if outcome else [False] * len(state.positions)
        success = bool(outcome and outcome.success)
        # Locals for everything read per agent: this runs every turn.
        xy, cells, exit_path = board.xy, board.cells, board.exit_path
        positions, visited, bumps, doorway = (
            state.positions,
            state.visited_exit,
            state.wall_bumps,
            state.doorway_moves,
        )
        moves, notebooks, radios = state.move_result, state.notebook_result, state.radio_result
        notebook_reasons, radio_reasons = state.notebook_reason, state.radio_reason
        infos = {}
        for i, name in enumerate(self.possible_agents):
            pos = positions[i]
            infos[name] = {
                "xy": xy[pos],
                "row_col": cells[pos],
                "path_distance_to_exit": exit_path[pos],
                "visited_exit": visited[i],
                "wall_bumps": bumps[i],
                "doorway_moves": doorway[i],
                "events": {
                    "move": MOVE_RESULTS[moves[i]],
                    "notebook": NOTEBOOK_RESULTS[notebooks[i]],
                    "notebook_reason": notebook_reasons[i],
                    "radio": RADIO_RESULTS[radios[i]],
                    "radio_reason": radio_reasons[i],
                    "first_exit_visit": first_visits[i],
                    "team_success": success,
                },
            }
        return infos

    # --- analysis ----------------------------------------------------------------------------
    def ground_truth(self) -> dict[str, Any]:
        """Facts the agents never see: shortest path of each start and the fastest finish.

        The exit is given as ``exit_row_col`` ``(row, column)``, row 0 north (also under its
        older name ``exit_cell``), and as ``exit_xy`` ``(x, y)``, x east, y north from the
        south-west corner; starts likewise as ``start_row_col`` and ``start_xy``.
        """
        board = self._require_board()
        names = self.possible_agents
        return {
            "seed": self.game_seed,
            "exit_row_col": board.cells[board.exit_cell],
            "exit_xy": board.xy[board.exit_cell],
            "exit_cell": board.cells[board.exit_cell],
            "start_row_col": {a: board.cells[s] for a, s in zip(names, board.starts, strict=True)},
            "start_xy": {a: board.xy[s] for a, s in zip(names, board.starts, strict=True)},
            "shortest_path_to_exit": dict(zip(self.possible_agents, self._shortest, strict=True)),
            "fastest_possible_finish": max(self._shortest),
        }

    @property
    def layout(self) -> Layout:
        """The current game's board: maze, exit, doorway, landmarks, starts (for analysis)."""
        return self._require_board().layout

    def outcome(self) -> dict[str, Any]:
        """Summary of the game so far (used as the journal's outcome)."""
        state = self._require_state()
        names = self.possible_agents
        visit_turns = [t if t >= 0 else None for t in state.first_visit_turn]
        return {
            "success": state.success,
            "turns": state.turn,
            "first_visit_turn": dict(zip(names, visit_turns, strict=True)),
            "wall_bumps": dict(zip(names, state.wall_bumps, strict=True)),
            "moves": dict(zip(names, state.moves, strict=True)),
            "fastest_possible_finish": max(self._shortest),
            "shortest_path_to_exit": dict(zip(names, self._shortest, strict=True)),
        }

    def state_digest(self) -> bytes:
        """SHA-256 of a canonical serialization of everything that affects future turns
        (same seed and actions, same digests; see :class:`maze_envs.escape.engine.StateDigest`)."""
        state = self._require_state()
        assert self._digest is not None
        return self._digest(state)

    def _require_state(self) -> State:
        if self._state is None:
            raise RuntimeError("no game yet: call reset() first")
        return self._state

    def _require_board(self) -> Board:
        if self._board is None:
            raise RuntimeError("no game yet: call reset() first")
        return self._board

    # --- rendering and clean-up --------------------------------------------------------------
    def render(self) -> Any:
        if self.render_mode is None or self._state is None or self._board is None:
            return None
        if self.render_mode == "rgb_array":
            title = f"{self.metadata['name']} · seed {self.game_seed}"
            return render_rgb(
                self._board, self._state, max_turns=self.config.max_turns, title=title
            )
        text = render_ansi(self._board, self._state)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _abort_unfinished_game(self) -> None:
        if self.recorder is not None and self.recorder.game_id is not None:
            self.recorder.abort(self.outcome())

    def close(self) -> None:
        if self.recorder is not None:
            try:
                self._abort_unfinished_game()
            finally:
                self.recorder.close()
                self.recorder = None


class MazeEscapeV1Env(MazeEscapeEnv):
    """The Maze Escape ``ParallelEnv``, version 1: the rules of v0, and one observation space
    for every agent (per-teammate fields keyed by all agent names, the agent's own entry blank).
    """

    metadata: ClassVar[dict[str, Any]] = {**MazeEscapeEnv.metadata, "name": "maze_escape_v1"}
    env_id: ClassVar[str] = ENV_IDS[1]
    version: ClassVar[EnvVersion] = 1


# v1 has v0's reference (its sections, after the first paragraph) under its own summary.
MazeEscapeV1Env.__doc__ = "\n\n".join(
    [MazeEscapeV1Env.__doc__ or "", (MazeEscapeEnv.__doc__ or "").partition("\n\n")[2]]
)
