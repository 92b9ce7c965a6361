"""Maze Escape: a cooperative maze for several agents that see only their own cell.

Description:
    Agents A, B, C, ... start on distinct cells of a perfect maze (every cell reachable, no loops)
    generated from the seed. One boundary cell is the exit, with a doorway in the outer wall.
    Named landmarks (tree, picture, piano, ...) sit on distinct cells. Every agent must visit the
    exit at least once; visiting does not remove an agent, so one that has found the exit can go
    back and help. Each agent keeps a notebook, its only memory, and may radio its teammates;
    agents on the same cell read each other's notebooks. All agents act at the same time and may
    share cells. A move into an interior wall or the outer brick leaves the agent where it is,
    tells it so next turn and is counted; a move out through the doorway keeps it on the exit.
    The full rules are in :mod:`maze_envs.escape.engine`.

Action Space:
    A ``Dict`` per agent: ``move`` in ``Discrete(5)`` (0..4 = N, E, S, W, STAY), a ``notebook``
    edit (``splice`` or ``rolling_log`` form, see :mod:`maze_envs.escape.spaces`) and a ``radio``
    message (``""`` sends nothing). Typed :class:`~maze_envs.escape.types.Action` models are
    accepted too. Anything outside the space raises ``ValueError`` before the state changes;
    edits and messages that break a rule are rejected with a reason shown next turn.

Observation Space:
    A ``Dict`` per agent, documented field by field in :mod:`maze_envs.escape.observe`: the four
    edges of the agent's cell, ``on_exit``, the landmark, turn and turns left, its notebook, last
    turn's radio messages, notebooks of teammates on its cell and the result of its last action;
    plus, when switched on in the config, distance sensors, coordinates (``own``/``shared``/
    ``absolute`` frame, x east, y north), a trail, a meeting alert and used exits. Typed
    :class:`~maze_envs.escape.types.Observation` models, their JSON form and the rebuilding of a
    journaled observation come from :mod:`maze_envs.escape.convert`.

Rewards:
    ``reward_mode="exit_and_team"`` (default): ``exit_reward`` (1.0) to an agent on its first exit
    visit, and ``team_bonus`` (1.0) to every agent when the last agent makes its first visit.
    ``"team_sparse"``: only the team bonus.

Starting State:
    Turn 0; agents on distinct non-exit cells at least ``min_start_distance`` moves from the exit;
    notebooks empty; nothing on the radio.

Episode End:
    Termination for every agent when all have visited the exit (team success). Truncation for
    every agent at turn ``max_turns``.

Arguments:
    ``config`` (a :class:`~maze_envs.escape.types.Config`), or keyword overrides of the defaults
    (see ``maze_escape_v0.parallel_env(preset=..., **overrides)``); ``render_mode`` one of
    ``human``, ``ansi``, ``rgb_array``; ``generator`` an injected layout generator; ``journal``
    a :class:`maze_envs.journal.Journal` or a path to record every turn to SQLite (a journaled
    game's generator must be one a replay can rebuild: the config's ``maze_algorithm``, a
    ``PerfectMazeGenerator`` or a ``FixedGenerator``; others raise ``ValueError``).
    ``infos`` carry per-agent events and analysis fields (true position, path distance to the
    exit, wall bumps); :meth:`MazeEscapeEnv.ground_truth` gives shortest paths from the starts.

Version History:
    * v0: initial version.

Example:
    >>> from maze_envs import maze_escape_v0
    >>> env = maze_escape_v0.parallel_env(preset="navigator", width=9, height=9, max_turns=50)
    >>> observations, infos = env.reset(seed=7)
    >>> sorted(observations)
    ['A', 'B', 'C']
    >>> observations["A"]["position"].tolist(), observations["A"]["trail_length"]
    ([0, 0], 0)
    >>> step = {"move": 0, "notebook": {"append": "start"}, "radio": "hello"}
    >>> observations, rewards, terms, truncs, infos = env.step({a: step for a in env.agents})
    >>> observations["A"]["notebook"], observations["B"]["radio"]["A"]
    ('start\\n', 'hello')
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar, Final

import numpy as np
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from maze_envs.escape import viewer
from maze_envs.escape.convert import action_from_model
from maze_envs.escape.engine import (
    Board,
    StateDigest,
    TurnOutcome,
    initial_state,
    resolve_turn,
)
from maze_envs.escape.generator import Generator, Layout, describe_generator, make_generator
from maze_envs.escape.observe import Observer
from maze_envs.escape.spaces import action_space, observation_space, parse_action
from maze_envs.escape.types import (
    MOVE_RESULTS,
    NOTEBOOK_RESULTS,
    RADIO_RESULTS,
    Action,
    Config,
    State,
)

ENV_ID: Final = "maze_envs/MazeEscape-v0"


class MazeEscapeEnv(ParallelEnv[str, dict[str, Any], dict[str, Any]]):
    """The Maze Escape ``ParallelEnv``; see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "maze_escape_v0",
        "render_modes": ["human", "ansi", "rgb_array"],
        "render_fps": 4,
        "is_parallelizable": True,
    }

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
        self._obs_spaces = {a: observation_space(self.config, a) for a in self.possible_agents}
        # Each agent gets its own action space object so seeding one does not seed the others.
        self._act_spaces = {a: action_space(self.config) for a in self.possible_agents}
        self._splice = self.config.notebook_mode == "splice"
        self.np_random: np.random.Generator | None = None
        self.game_seed: int | None = None
        self._recorder = (
            _Recorder(journal, self.config, generator_spec) if journal is not None else None
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
        self._observer = Observer(board, self.config)
        self._digest = StateDigest(board, self.config.num_agents)
        self._shortest = tuple(board.exit_path[cell] for cell in board.starts)
        self.agents = list(self.possible_agents)
        self._live = frozenset(self.agents)
        observations = self._observations()
        infos = self._infos(None)
        for name, shortest in zip(self.possible_agents, self._shortest, strict=True):
            infos[name]["start_path_to_exit"] = shortest
            infos[name]["fastest_possible_finish"] = max(self._shortest)
        if self._recorder is not None:
            self._recorder.start(seed, observations, self.state_digest())
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
        if not isinstance(actions, dict) or actions.keys() != self._live:
            got = sorted(actions) if isinstance(actions, dict) else type(actions).__name__
            raise ValueError(f"step needs one action for each of {self.agents}, got {got}")
        moves, edits, radios = [], [], []
        config, splice_mode = self.config, self._splice
        for agent in self.agents:
            raw = actions[agent]
            if isinstance(raw, Action):
                raw = action_from_model(raw, config)
            move, edit, radio = parse_action(agent, raw, splice_mode)
            moves.append(move)
            edits.append(edit)
            radios.append(radio)
        outcome = resolve_turn(state, board, self.config, moves, edits, radios)
        names = self.agents
        observations = self._observations()
        rewards = dict(zip(names, outcome.rewards, strict=True))
        terminations = dict.fromkeys(names, outcome.success)
        truncations = dict.fromkeys(names, outcome.truncated)
        infos = self._infos(outcome)
        if self._recorder is not None:
            events = {name: info["events"] for name, info in infos.items()}
            self._recorder.turn(state.turn, observations, actions, events, self.state_digest())
            if outcome.success or outcome.truncated:
                self._recorder.finish(self.outcome())
        if outcome.success or outcome.truncated:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos

    def _observations(self) -> dict[str, dict[str, Any]]:
        assert self._observer is not None and self._state is not None
        return dict(zip(self.possible_agents, self._observer.observe_all(self._state), strict=True))

    def _infos(self, outcome: TurnOutcome | None) -> dict[str, dict[str, Any]]:
        """Per-agent analysis fields and events (never part of any observation)."""
        state, board = self._state, self._board
        assert state is not None and board is not None
        first_visits = outcome.first_visits if outcome else [False] * len(state.positions)
        success = bool(outcome and outcome.success)
        infos = {}
        for i, name in enumerate(self.possible_agents):
            pos = state.positions[i]
            infos[name] = {
                "position": board.xy[pos],
                "cell": board.cells[pos],
                "path_distance_to_exit": board.exit_path[pos],
                "visited_exit": state.visited_exit[i],
                "wall_bumps": state.wall_bumps[i],
                "doorway_moves": state.doorway_moves[i],
                "events": {
                    "move": MOVE_RESULTS[state.move_result[i]],
                    "notebook": NOTEBOOK_RESULTS[state.notebook_result[i]],
                    "notebook_reason": state.notebook_reason[i],
                    "radio": RADIO_RESULTS[state.radio_result[i]],
                    "radio_reason": state.radio_reason[i],
                    "first_exit_visit": first_visits[i],
                    "team_success": success,
                },
            }
        return infos

    # --- analysis ----------------------------------------------------------------------------
    def ground_truth(self) -> dict[str, Any]:
        """Facts the agents never see: shortest path of each start and the fastest finish."""
        board = self._require_board()
        return {
            "seed": self.game_seed,
            "exit_cell": divmod(board.exit_cell, board.width),
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
            return viewer.render_rgb(self._board, self._state)
        text = viewer.render_ansi(self._board, self._state)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _abort_unfinished_game(self) -> None:
        if self._recorder is not None and self._recorder.game_id is not None:
            self._recorder.finish({**self.outcome(), "aborted": True})

    def close(self) -> None:
        if self._recorder is not None:
            self._abort_unfinished_game()
            self._recorder.close()
            self._recorder = None


class _Recorder:
    """Writes games to a :class:`maze_envs.journal.Journal` (opened here when given a path).

    Observations are recorded exactly as delivered (the journal writes arrays as JSON lists;
    :func:`maze_envs.escape.convert.observation_from_stored` rebuilds them).
    """

    def __init__(self, journal: Any, config: Config, generator: dict[str, Any] | None) -> None:
        from maze_envs import __version__
        from maze_envs.journal import Journal

        self.owned = isinstance(journal, str | os.PathLike)
        self.journal: Journal = Journal(journal) if self.owned else journal
        self.config_json = config.model_dump(mode="json")
        self.generator = generator
        self.version = __version__
        self.game_id: int | None = None

    def start(
        self,
        seed: int,
        observations: Mapping[str, dict[str, Any]],
        digest: bytes,
    ) -> None:
        self.game_id = self.journal.start_game(
            env_id=ENV_ID,
            config=self.config_json,
            seed=seed,
            library_version=self.version,
            generator=self.generator,
        )
        self.journal.record_turn(
            self.game_id,
            0,
            observations=observations,
            actions={},
            events={},
            state_digest=digest,
        )

    def turn(
        self,
        turn: int,
        observations: Mapping[str, dict[str, Any]],
        actions: Mapping[str, Any],
        events: Mapping[str, Any],
        digest: bytes,
    ) -> None:
        assert self.game_id is not None
        self.journal.record_turn(
            self.game_id,
            turn,
            observations=observations,
            actions=actions,
            events=events,
            state_digest=digest,
        )

    def finish(self, outcome: dict[str, Any]) -> None:
        if self.game_id is not None:
            self.journal.finish_game(self.game_id, outcome)
            self.game_id = None

    def close(self) -> None:
        if self.owned:
            self.journal.close()
