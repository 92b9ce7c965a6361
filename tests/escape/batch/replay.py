"""Replaying the batched engine's games in the scalar env, turn by turn (the differential test's
machinery): each game of a vector env is exported when it starts and played in a scalar env with
the same moves and symbols, and every row's observation, reward, termination and truncation is
compared with the scalar agent's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from maze_envs import maze_escape_v1
from maze_envs.escape.batch.vector import AutoresetMode, MazeEscapeVectorEnv
from maze_envs.escape.env import MazeEscapeV1Env
from maze_envs.escape.numeric_encoder import NumericEncoder
from maze_envs.escape.vocab import Move

NO_EDIT = {"splice": {"edit": 0, "start": 0, "end": 0, "text": ""}, "rolling_log": {"append": ""}}


class Mismatch(AssertionError):
    """The batched and the scalar engine disagree (the message says where)."""


@dataclass
class Replay:
    """A vector env and, per game, a scalar env playing the same game."""

    vec: MazeEscapeVectorEnv
    encoder: NumericEncoder
    scalar: list[MazeEscapeV1Env] = field(default_factory=list)
    compared: int = 0  # agent-steps compared (one row, one turn)
    games: int = 0  # scalar games started
    endings: dict[str, int] = field(default_factory=lambda: {"success": 0, "truncated": 0})
    #: the vector env's latest observations (a copy)
    observations: NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 0), np.float32))

    @classmethod
    def start(cls, vec: MazeEscapeVectorEnv, seed: int) -> Replay:
        replay = cls(vec, NumericEncoder(vec.config, flatten=True))
        observations, _ = vec.reset(seed=seed)
        replay.observations = np.array(observations)
        for game in range(vec.num_games):
            env = maze_escape_v1.parallel_env(config=vec.config)
            replay.scalar.append(env)
            replay.new_game(game, 0)
        return replay

    def rows(self, game: int) -> slice:
        n = self.vec.num_agents
        return slice(game * n, (game + 1) * n)

    def new_game(self, game: int, step: int) -> None:
        """Start, in the scalar env of ``game``, the game that just started there in the vector
        env, and compare their first observations."""
        exported = self.vec.export(game)
        if exported.turn != 0:
            raise Mismatch(f"game {game} exported at turn {exported.turn}, not at its start")
        env = self.scalar[game]
        env.generator = exported.generator  # the same env object, a new board
        env.reset(seed=game)
        scalar = self.encoder.encode_rows(env.observation_arrays())
        self.compare(
            f"game {game} (started at step {step})", scalar, self.observations[self.rows(game)]
        )
        self.games += 1

    def compare(self, where: str, scalar: NDArray[Any], batched: NDArray[Any]) -> None:
        if scalar.shape != batched.shape or not np.array_equal(scalar, batched):
            names = self.encoder.layout.names
            differ = np.flatnonzero((scalar != batched).any(axis=0))
            raise Mismatch(
                f"{where}: observations differ in {[names[i] for i in differ]}\n"
                f"scalar:  {scalar[:, differ].tolist()}\nbatched: {batched[:, differ].tolist()}"
            )

    def step(self, moves: NDArray[np.int64], symbols: NDArray[np.int64] | None, step: int) -> None:
        """One step of the vector env and of every scalar game, compared row by row."""
        vec, n = self.vec, self.vec.num_agents
        actions = moves if symbols is None else np.stack([moves, symbols], axis=1)
        observations, rewards, terminations, truncations, infos = vec.step(actions)
        self.observations = np.array(observations)
        same_step = vec.autoreset_mode is AutoresetMode.SAME_STEP
        names = vec.config.agents
        no_edit = NO_EDIT[vec.config.notebook_mode]
        # the scalar side's rows: observations (the final ones where a game ended), rewards,
        # endings; games that restart this step (NEXT_STEP) are compared by new_game instead
        batched = self.observations.copy()
        if same_step and "final_obs" in infos:
            ended_rows = np.flatnonzero(infos["_final_obs"])
            batched[ended_rows] = np.stack(infos["final_obs"][ended_rows])
        scalar = batched.copy()
        outcomes = np.stack([rewards, terminations, truncations]).astype(np.float64)
        scalar_outcomes = outcomes.copy()
        restarting, ended = [], []
        for game, env in enumerate(self.scalar):
            if not env.agents:  # NEXT_STEP: this step started the game's next one
                restarting.append(game)
                continue
            scalar_actions = {}
            for i, agent in enumerate(names):
                action = {"move": int(moves[game * n + i]), "notebook": dict(no_edit), "radio": ""}
                if symbols is not None:
                    action["radio_symbol"] = int(symbols[game * n + i])
                scalar_actions[agent] = action
            _, scalar_rewards, terminated, truncated, _ = env.step(scalar_actions)
            rows = self.rows(game)
            scalar[rows] = self.encoder.encode_rows(env.observation_arrays())
            scalar_outcomes[:, rows] = [
                [scalar_rewards[a] for a in names],
                [terminated[a] for a in names],
                [truncated[a] for a in names],
            ]
            self.compared += n
            if terminated["A"] or truncated["A"]:
                ended.append(game)
                self.endings["success" if terminated["A"] else "truncated"] += 1
        for game in restarting:  # nothing happened to a restarting game's rows
            rows = self.rows(game)
            if outcomes[:, rows].any():
                raise Mismatch(f"game {game} step {step}: a restarting game scored or ended")
            scalar_outcomes[:, rows] = 0.0
            self.compared += n  # its rows are compared with the scalar env's new game
        if not np.array_equal(scalar_outcomes, outcomes):
            row = int(np.flatnonzero((scalar_outcomes != outcomes).any(axis=0))[0])
            raise Mismatch(
                f"row {row} (game {row // n}) step {step}: [reward, terminated, truncated] "
                f"scalar {scalar_outcomes[:, row].tolist()}, batched {outcomes[:, row].tolist()}"
            )
        if not np.array_equal(scalar, batched):
            row = int(np.flatnonzero((scalar != batched).any(axis=1))[0])
            rows = self.rows(row // n)
            self.compare(f"game {row // n} step {step}", scalar[rows], batched[rows])
        if same_step:
            marked = infos.get("_final_obs", np.zeros(vec.num_envs, np.bool_))
            expected = np.zeros(vec.num_envs, np.bool_)
            for game in ended:
                expected[self.rows(game)] = True
            if not np.array_equal(marked, expected):
                raise Mismatch(f"step {step}: _final_obs marks the wrong rows")
            restarting = ended
        for game in restarting:
            self.new_game(game, step)


def wall_follower(
    observations: NDArray[np.float32], heading: NDArray[np.int64]
) -> NDArray[np.int64]:
    """Scripted moves read off the batched observations: each row follows the wall on its left
    (try left of its heading, then straight, right, back; the first open edge), which walks
    every corridor of a perfect maze and so reaches the exit. ``heading`` is updated."""
    edges = np.asarray(observations)[:, :12].reshape(-1, 4, 3)  # one-hot kinds, N E S W
    is_open = edges[:, :, 0] == 1.0
    rows = np.arange(len(heading))
    moves = np.full(len(heading), int(Move.STAY), np.int64)
    chosen = np.zeros(len(heading), np.bool_)
    for turn in (3, 0, 1, 2):  # left, straight, right, back (directions N E S W are clockwise)
        direction = (heading + turn) % 4
        take = ~chosen & is_open[rows, direction]
        moves[take] = direction[take]
        chosen |= take
    heading[chosen] = moves[chosen]
    return moves
