"""The Gymnasium ``VectorEnv`` of N Maze Escape games: a row per agent of every game.

Built by ``maze_escape_v1.vector_env(num_games=N, **config)``. Its rows are the agents of every
game, game-major (``row = game * num_agents + agent``: PufferLib's layout, so one shared policy
acts for every agent), ``num_envs = N * num_agents``.

* **Observations**: each row is the vector ``EscapeNumericObservation(flatten=True)`` gives the
  scalar env's agent for the same configuration (``single_observation_space`` is that very
  ``Box``; :mod:`maze_envs.escape.numeric` defines it).
* **Actions**: ``Discrete(5)`` moves per row (0 N, 1 E, 2 S, 3 W, 4 STAY), or with
  ``radio_symbols=K`` a ``MultiDiscrete([5, K + 1])`` pair (move, symbol; 0 sends nothing).
  Anything else (a code out of range, a wrong shape, a non-integer dtype) raises one
  ``ValueError`` saying what is allowed, before anything changes; nothing is clipped.
* **Rewards, terminations, truncations** per row, as the scalar env gives them to each agent.
* **Automatic reset**: ``metadata["autoreset_mode"]`` is ``AutoresetMode.SAME_STEP`` (the
  default: the step that ends a game returns the first observation of the next, and the last one
  in ``infos["final_obs"]``, Gymnasium's form: an object array with the ended rows' observations
  and ``None`` elsewhere, the rows flagged in ``infos["_final_obs"]``) or ``NEXT_STEP`` (the step
  after the end starts the next game; its actions are ignored).
* **Buffers**: observations, rewards, terminations and truncations are written into arrays
  allocated once; ``reset`` and ``step`` return those same arrays (read or copy them before the
  next step), or copies with ``copy=True``.

No journal: the batched engine keeps no record of its games. :meth:`MazeEscapeVectorEnv.export`
gives any game as a board the scalar env plays (and journals).

Example:
    >>> import numpy as np
    >>> from maze_envs import maze_escape_v1
    >>> vec = maze_escape_v1.vector_env(num_games=512, width=7, height=7, num_agents=3)
    >>> vec.num_envs, vec.single_observation_space.shape, vec.single_action_space
    (1536, (64,), Discrete(5))
    >>> observations, infos = vec.reset(seed=0)
    >>> actions = np.random.default_rng(0).integers(0, 5, vec.num_envs)
    >>> observations, rewards, terminations, truncations, infos = vec.step(actions)
    >>> observations.shape, rewards.dtype, terminations.shape
    ((1536, 64), dtype('float32'), (1536,))
    >>> vec.step(np.full(vec.num_envs, 5))
    Traceback (most recent call last):
    ...
    ValueError: actions: every move must be 0..4 (0 N, 1 E, 2 S, 3 W, 4 STAY); got 5 (row 0)
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any, Final

import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space
from numpy.typing import NDArray

from maze_envs.escape.batch.engine import Outcome, Rules, start_games, step
from maze_envs.escape.batch.export import ExportedGame, export_game
from maze_envs.escape.batch.generator import BoardSource
from maze_envs.escape.batch.observe import Observer
from maze_envs.escape.batch.types import BatchState
from maze_envs.escape.config import Config
from maze_envs.escape.numeric import NumericLayout
from maze_envs.escape.vocab import Move

try:
    from gymnasium.vector import AutoresetMode
except ImportError:  # Gymnasium 1.0 (the lowest allowed) names the modes in its docs only

    class AutoresetMode(Enum):  # type: ignore[no-redef]
        """Gymnasium 1.1's ``gymnasium.vector.AutoresetMode``, for Gymnasium 1.0."""

        NEXT_STEP = "NextStep"
        SAME_STEP = "SameStep"
        DISABLED = "Disabled"


__all__ = ["TEXT_OPTIONS", "AutoresetMode", "MazeEscapeVectorEnv", "batch_config"]

_Flags = NDArray[np.bool_]
_MOVES: Final = len(Move)
_ALLOWED_MOVES: Final = ", ".join(f"{int(m)} {m.label}" for m in Move)
#: Config fields and options about free text (notebooks, radio messages), which do not batch.
TEXT_OPTIONS: Final = {
    "notebook_mode": "free-text notebooks",
    "notebook_max_bytes": "free-text notebooks",
    "notebook_turn_bytes": "free-text notebooks",
    "radio_max_bytes": "radio text",
    "text": "free text (notebooks, radio messages)",
    "hash_buckets": "hashed free text",
}
_MODES: Final = {mode.value: mode for mode in AutoresetMode} | {
    "same_step": AutoresetMode.SAME_STEP,
    "next_step": AutoresetMode.NEXT_STEP,
}


def batch_config(preset: str | None, config: Config | None, overrides: Mapping[str, Any]) -> Config:
    """The configuration of a batched game: ``config``, or ``preset`` with Config field
    ``overrides``. An override about free text raises one ``ValueError`` naming it."""
    for name in overrides:
        if name in TEXT_OPTIONS and not (name == "text" and overrides[name] == "drop"):
            raise ValueError(
                f"{name}={overrides[name]!r}: {TEXT_OPTIONS[name]} do not batch; the batched "
                "engine's agents have no notebook and send no radio text (their observation is "
                "that of EscapeNumericObservation(text='drop')). Play the scalar env "
                "(maze_escape_v1.parallel_env) for text, or use radio_symbols=K to communicate"
            )
    if config is not None:
        if preset is not None or overrides:
            raise ValueError("pass either config or preset/keyword overrides, not both")
        if not isinstance(config, Config):
            raise ValueError(
                f"config must be a maze_envs.escape.types.Config, got {type(config).__name__}"
            )
        return config
    return Config.from_preset(preset, **{k: v for k, v in overrides.items() if k != "text"})


class MazeEscapeVectorEnv(VectorEnv[NDArray[np.float32], NDArray[np.int64], NDArray[Any]]):
    """N Maze Escape games stepped at once (see the module docstring)."""

    metadata: dict[str, Any] = {  # noqa: RUF012 (Gymnasium's instance attribute)
        "name": "maze_escape_v1_vector",
        "render_modes": [],
        "autoreset_mode": AutoresetMode.SAME_STEP,
    }

    def __init__(
        self,
        num_games: int,
        config: Config,
        *,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        copy: bool = False,
        maze_slots: int | None = None,
    ) -> None:
        if isinstance(num_games, bool) or not isinstance(num_games, int | np.integer):
            raise ValueError(f"num_games must be an int >= 1, got {num_games!r}")
        if num_games < 1:
            raise ValueError(f"num_games must be an int >= 1, got {num_games}")
        mode = _MODES.get(autoreset_mode) if isinstance(autoreset_mode, str) else autoreset_mode
        if mode not in (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP):
            raise ValueError(
                f"autoreset_mode must be AutoresetMode.SAME_STEP or NEXT_STEP, got "
                f"{autoreset_mode!r}"
            )
        self.config = config
        self.num_games = int(num_games)
        self.num_agents = config.num_agents
        self.num_envs = self.num_games * self.num_agents
        self.copy = bool(copy)
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        self.autoreset_mode: AutoresetMode = mode
        # mazes are built many at once: as many as games, up to the stream's limit
        self.boards = BoardSource(config, slots=maze_slots or self.num_games)
        self.rules = Rules(config)
        self.layout = NumericLayout(config)
        self.observer = Observer(self.rules, self.layout)
        self.single_observation_space = self.layout.flat_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        symbols = self.rules.symbols
        self.single_action_space = (
            spaces.MultiDiscrete([_MOVES, symbols + 1]) if symbols else spaces.Discrete(_MOVES)
        )
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # the buffers, allocated once
        # observations are written feature-major (a row per entry, all agents along it: every
        # write is contiguous); reset and step hand out the transposed view, a row per agent
        width = self.layout.width
        self._features = self.observer.prepare(np.empty((width, self.num_envs), np.float32))
        self._observations = self._features.T
        self._rewards = np.zeros(self.num_envs, np.float32)
        self._terminations = np.zeros(self.num_envs, np.bool_)
        self._truncations = np.zeros(self.num_envs, np.bool_)
        self._ended = np.zeros(self.num_games, np.bool_)  # games to restart (NEXT_STEP)
        self._state: BatchState | None = None

    # --- the Gymnasium API ---------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Start every game anew (``seed``: the same seed gives the same games)."""
        if options:
            raise ValueError(f"reset takes no options, got {sorted(options)}")
        super().reset(seed=seed)
        if seed is not None:
            self.boards.clear()
        rng = self.np_random
        state = self._state = self.rules.empty_state(self.num_games)
        games = np.arange(self.num_games, dtype=np.intp)
        start_games(state, self.rules, games, self.boards.draw(self.num_games, rng))
        self.observer.write(state, self._features)
        self._rewards[:] = 0.0
        self._terminations[:] = False
        self._truncations[:] = False
        self._ended[:] = False
        return self._out(self._observations), {}

    def step(
        self, actions: Any
    ) -> tuple[NDArray[np.float32], NDArray[np.float32], _Flags, _Flags, dict[str, Any]]:
        """One turn of every game (``actions``: a move per row, or (move, symbol) pairs)."""
        state = self._state
        if state is None:
            raise RuntimeError("call reset() before step()")
        moves, symbols = self._check(actions)
        n = self.num_agents
        outcome = step(state, self.rules, moves, symbols, self._rewards)
        self._terminations.reshape(-1, n)[:] = outcome.success[:, None]
        self._truncations.reshape(-1, n)[:] = outcome.truncated[:, None]
        self.observer.write(state, self._features, one_turn_on=True)
        infos: dict[str, Any] = {}
        if self.autoreset_mode is AutoresetMode.NEXT_STEP:
            restarted = self._restart_ended(state)
            np.logical_or(outcome.success, outcome.truncated, out=self._ended)
            self._ended[restarted] = False
        else:
            self._same_step(state, outcome, infos)
        return (
            self._out(self._observations),
            self._out(self._rewards),
            self._out(self._terminations),
            self._out(self._truncations),
            infos,
        )

    def _same_step(self, state: BatchState, outcome: Outcome, infos: dict[str, Any]) -> None:
        """Restart the games that ended now; their last observations go to the infos."""
        ended = np.flatnonzero(outcome.success | outcome.truncated)
        if not ended.size:
            return
        rows = self._rows(ended)
        final = np.full(self.num_envs, None, dtype=object)
        final[rows] = list(np.array(self._features[:, rows].T, order="C"))  # a row each
        mask = np.zeros(self.num_envs, np.bool_)
        mask[rows] = True
        self._restart(state, ended, rows)
        infos["final_obs"] = final
        infos["_final_obs"] = mask
        infos["final_info"] = {}
        infos["_final_info"] = mask

    def _restart_ended(self, state: BatchState) -> NDArray[np.intp]:
        """NEXT_STEP: the games that ended last step start again (this step's turn of theirs,
        already resolved, is discarded: no reward, no ending). Returns them."""
        ended = np.flatnonzero(self._ended)
        if not ended.size:
            return ended
        rows = self._rows(ended)
        self._restart(state, ended, rows)
        self._rewards[rows] = 0.0
        self._terminations[rows] = False
        self._truncations[rows] = False
        return ended

    def _restart(self, state: BatchState, games: NDArray[np.intp], rows: NDArray[np.intp]) -> None:
        start_games(state, self.rules, games, self.boards.draw(len(games), self.np_random))
        fresh = self.observer.prepare(np.empty((self.layout.width, len(rows)), np.float32))
        self.observer.write(state, fresh, games)
        self._features[:, rows] = fresh

    def _rows(self, games: NDArray[np.intp]) -> NDArray[np.intp]:
        return self.rules.rows_of(games)

    def _out(self, array: NDArray[Any]) -> NDArray[Any]:
        return np.array(array, order="C") if self.copy else array

    def _check(self, actions: Any) -> tuple[NDArray[np.intp], NDArray[np.intp] | None]:
        """(moves, symbols) of a batch of actions, checked (``ValueError`` otherwise)."""
        symbols = self.rules.symbols
        array = actions if isinstance(actions, np.ndarray) else np.asarray(actions)
        shape = (self.num_envs, 2) if symbols else (self.num_envs,)
        what = "(move, symbol) pairs" if symbols else "one move per row"
        what = f"{what}, shape {shape}"
        if array.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be integers ({what}), got dtype {array.dtype}: "
                "convert them explicitly (a float is never rounded here)"
            )
        if array.shape != shape:
            raise ValueError(f"actions must be {what}, got shape {array.shape}")
        moves = (array[:, 0] if symbols else array).astype(np.intp, copy=False)
        _in_range(moves, _MOVES - 1, f"every move must be 0..{_MOVES - 1} ({_ALLOWED_MOVES})")
        if not symbols:
            return moves, None
        sent = array[:, 1].astype(np.intp)
        _in_range(sent, symbols, f"every radio symbol must be 0..{symbols} (0: nothing sent)")
        return moves, sent

    # --- games ---------------------------------------------------------------------------------
    def export(self, game: int) -> ExportedGame:
        """Game ``game`` (0..num_games - 1) as the scalar env plays it (see
        :mod:`maze_envs.escape.batch.export`): export it when it starts to replay it."""
        if self._state is None:
            raise RuntimeError("call reset() before export()")
        return export_game(self._state, self.config, int(game))

    def game_of(self, row: int) -> tuple[int, str]:
        """The game and the agent name of row ``row``."""
        game, agent = divmod(int(row), self.num_agents)
        return game, self.config.agents[agent]

    @property
    def state(self) -> BatchState:
        """The games' state (arrays with a leading game axis; read it, do not change it)."""
        if self._state is None:
            raise RuntimeError("call reset() first")
        return self._state

    def __repr__(self) -> str:
        c = self.config
        return (
            f"MazeEscapeVectorEnv(num_games={self.num_games}, {c.width}x{c.height}, "
            f"num_agents={c.num_agents}, num_envs={self.num_envs})"
        )


def _in_range(values: NDArray[np.intp], top: int, allowed: str) -> None:
    low, high = int(values.min()), int(values.max())
    if low < 0 or high > top:
        bad = int(np.flatnonzero((values < 0) | (values > top))[0])
        raise ValueError(f"actions: {allowed}; got {int(values[bad])} (row {bad})")
