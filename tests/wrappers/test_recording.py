"""Recording wrappers: ours replayable and verified, foreign games stored for reading."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.utils.env import ParallelEnv

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs import maze_escape_v0, maze_escape_v1
from maze_envs.agimaze.env import AgiMazeEnv
from maze_envs.journal import Journal
from maze_envs.verify import main as verify_main
from maze_envs.verify import verify_journal
from wrappers.recording import RecordJournal, RecordJournalParallel, plain
from wrappers.text import TextObservation

TUTORIAL = "TUTORIAL/STAGE-01/0000.json"


class OddObservations(gym.Env[dict[str, Any], np.int64]):
    """A toy env whose observations and infos hold values JSON has no form for."""

    def __init__(self) -> None:
        self.observation_space = spaces.Dict(
            {"grid": spaces.Box(0.0, 1.0, (2, 2), np.float32), "flag": spaces.MultiBinary(3)}
        )
        self.action_space = spaces.Discrete(2)
        self.t = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {"tags": {"a", "b"}, "raw": b"\x00\xff", "nan": float("nan")}

    def step(self, action: np.int64) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        self.t += 1
        info = {"where": (self.t, np.int64(7)), "big": 2**70, "obj": object()}
        return self._obs(), float(np.float32(0.25)), self.t >= 3, False, info

    def _obs(self) -> dict[str, Any]:
        grid = np.full((2, 2), self.t / 4, dtype=np.float32)
        return {"grid": grid, "flag": np.array([1, 0, self.t % 2], dtype=np.int8)}


class Toy(ParallelEnv[str, np.ndarray, int]):
    """A PettingZoo toy: agents walk right on a line; each leaves when it reaches the end."""

    metadata: ClassVar[dict[str, Any]] = {"name": "toy_line_v0"}

    def __init__(self) -> None:
        self.possible_agents = ["left", "right"]
        self.agents: list[str] = []
        self.pos: dict[str, int] = {}

    @functools.cache  # noqa: B019  (one space object per agent)
    def observation_space(self, agent: str) -> spaces.Box:
        return spaces.Box(0, 9, (1,), np.int64)

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> spaces.Discrete:
        return spaces.Discrete(2)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, Any]]]:
        self.agents = list(self.possible_agents)
        self.pos = {"left": 0, "right": 5}
        return {a: np.array([p]) for a, p in self.pos.items()}, {a: {} for a in self.agents}

    def step(self, actions: dict[str, int]) -> Any:
        for agent, action in actions.items():
            self.pos[agent] += int(action)
        done = {a: self.pos[a] >= 6 for a in self.agents}
        obs = {a: np.array([self.pos[a]]) for a in self.agents}
        rewards = {a: 1.0 if done[a] else 0.0 for a in self.agents}
        infos = {a: {"pos": self.pos[a]} for a in self.agents}
        truncs = dict.fromkeys(self.agents, False)
        self.agents = [a for a in self.agents if not done[a]]
        return obs, rewards, done, truncs, infos


def _verify(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = verify_main([str(path)])
    return code, capsys.readouterr().out


def test_foreign_gym_games_are_recorded_under_their_own_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "games.sqlite"
    env = RecordJournal(gym.make("CartPole-v1"), path)
    obs, _ = env.reset(seed=3)
    first = obs.copy()
    total, steps = 0.0, 0
    while True:
        obs, reward, terminated, truncated, _ = env.step(steps % 2)
        total, steps = total + float(reward), steps + 1
        if terminated or truncated:
            break
    env.reset(seed=4)
    env.step(0)
    env.reset(seed=5)  # the second game was abandoned: stored as aborted
    env.close()
    with Journal(path, readonly=True) as journal:
        games = journal.games()
        assert [g.env_id for g in games] == ["CartPole-v1"] * 3
        assert [g.seed for g in games] == [3, 4, 5]
        assert games[0].outcome == {
            "return": total, "steps": steps, "terminated": True, "truncated": False, "turns": steps,
        }  # fmt: skip
        assert (games[1].outcome or {}).get("aborted") is True
        assert (games[1].outcome or {}).get("steps") == 1
        turns = list(journal.turns(games[0].id))
        assert turns[0].observations["agent"] == pytest.approx(first.tolist())
        assert [t.actions for t in turns[1:3]] == [{"agent": 0}, {"agent": 1}]
        assert turns[1].events["agent"]["reward"] == 1.0
        assert games[0].config["kwargs"] == {} and "Box" in games[0].config["observation_space"]
    code, out = _verify(path, capsys)
    assert "no replayer for this env" in out and code == 0  # rows only, and the report says so
    assert not all(r.replayed for r in verify_journal(path))


def test_values_json_cannot_hold_are_encoded_never_an_error(tmp_path: Path) -> None:
    path = tmp_path / "odd.sqlite"
    env = RecordJournal(OddObservations(), path)
    env.reset(seed=0)
    for _ in range(3):
        env.step(np.int64(1))
    with Journal(path, readonly=True) as journal:
        (game,) = journal.games()
        turns = list(journal.turns(game.id))
    assert game.env_id.endswith("OddObservations")
    assert turns[0].events["agent"]["info"] == {"tags": ["a", "b"], "raw": "00ff", "nan": "nan"}
    assert turns[1].observations["agent"] == {
        "grid": [[0.25, 0.25], [0.25, 0.25]],
        "flag": [1, 0, 1],
    }
    info = turns[1].events["agent"]["info"]
    assert (
        info["where"] == [1, 7] and info["big"] == str(2**70) and info["obj"].startswith("<object")
    )
    assert turns[1].actions == {"agent": 1} and (game.outcome or {}).get("return") == 0.75
    assert plain(np.array(3)) == 3 and plain(np.float64("inf")) == "inf"


def test_frozen_lake_episodes_and_decision_records(tmp_path: Path) -> None:
    path = tmp_path / "lake.sqlite"
    env = RecordJournal(gym.make("FrozenLake-v1", is_slippery=False), path)
    env.set_game_meta({"run_key": "lake/0"})
    env.reset(seed=0)
    env.note("agent", {"why": np.array([1, 2])})
    env.step(1)
    env.close()
    with Journal(path, readonly=True) as journal:
        (game,) = journal.games()
        turns = list(journal.turns(game.id))
    assert game.meta == {"run_key": "lake/0"} and game.config["kwargs"]["is_slippery"] is False
    assert turns[1].decisions == {"agent": {"why": [1, 2]}}
    assert (game.outcome or {}).get("aborted") is True  # closed mid-episode


def test_our_gym_envs_use_their_own_replayable_journal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agimaze.sqlite"
    env = RecordJournal(TextObservation(gym.make("maze_envs/AgiMaze-v0", path=TUTORIAL)), path)
    assert env.native
    text, _ = env.reset(seed=1)
    assert text.startswith("Step 0 of 150.")  # the wrappers inside still apply
    rng = np.random.default_rng(0)
    for _ in range(20):
        *_, terminated, truncated, _ = env.step(np.int64(rng.integers(4)))
        if terminated or truncated:
            break
    env.reset(seed=2)
    env.close()
    with Journal(path, readonly=True) as journal:
        assert [g.env_id for g in journal.games()] == ["maze_envs/AgiMaze-v0"] * 2
    reports = verify_journal(path)
    assert all(r.ok and r.replayed for r in reports) and reports[0].turns_verified >= 1
    code, out = _verify(path, capsys)
    assert code == 0 and "no replayer" not in out

    set_path = tmp_path / "set.sqlite"
    env = RecordJournal(gym.make("maze_envs/AgiMazeSet-v0", paths=[TUTORIAL]), set_path)
    env.reset(seed=0)
    for name in ["start", "up", "left", "start"]:
        env.step(np.int64(env.unwrapped.action_names.index(name)))  # type: ignore[attr-defined]
    env.close()
    (report,) = verify_journal(set_path)
    assert report.ok and report.replayed and report.turns_verified == 5


def test_passthrough_and_the_refusals(tmp_path: Path) -> None:
    own = tmp_path / "own.sqlite"
    inner = gym.make("maze_envs/AgiMaze-v0", path=TUTORIAL, journal=own)
    env = RecordJournal(inner)
    assert env.recorder is inner.unwrapped.recorder  # type: ignore[attr-defined]
    env.reset(seed=0)
    env.step(np.int64(0))
    env.close()
    assert all(r.ok and r.replayed for r in verify_journal(own))
    with pytest.raises(ValueError, match="already records to its own journal"):
        RecordJournal(gym.make("maze_envs/AgiMaze-v0", path=TUTORIAL, journal=own), own)
    with pytest.raises(ValueError, match="give journal="):
        RecordJournal(gym.make("maze_envs/AgiMaze-v0", path=TUTORIAL))
    with pytest.raises(ValueError, match="built directly records only through its own journal"):
        RecordJournal(AgiMazeEnv(path=TUTORIAL), tmp_path / "x.sqlite")
    with pytest.raises(ValueError, match="give journal="):
        RecordJournal(gym.make("CartPole-v1"))
    with pytest.raises(
        ValueError, match=r"records a PettingZoo ParallelEnv, got .*record its parallel"
    ):
        RecordJournalParallel(maze_escape_v1.env(), tmp_path / "aec.sqlite")
    assert not (tmp_path / "aec.sqlite").exists()


@pytest.mark.parametrize("module", [maze_escape_v0, maze_escape_v1])
def test_maze_escape_games_are_replayable(module: Any, tmp_path: Path) -> None:
    path = tmp_path / "escape.sqlite"
    env = RecordJournalParallel(module.parallel_env(preset="full", width=5, height=5), path)
    assert env.native
    env.reset(seed=9)
    for agent in env.possible_agents:
        env.action_space(agent).seed(1)
    for _ in range(15):
        if not env.agents:
            break
        env.step({a: env.action_space(a).sample() for a in env.agents})
    env.close()
    (report,) = verify_journal(path)
    assert report.ok and report.replayed and report.turns_verified >= 2
    with Journal(path, readonly=True) as journal:
        assert journal.games()[0].env_id == module.parallel_env().env_id


def test_foreign_parallel_env_is_recorded_until_no_agent_is_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "toy.sqlite"
    env = RecordJournalParallel(Toy(), path)
    assert not env.native
    env.reset(seed=11)
    turns = 0
    while env.agents:
        env.step(dict.fromkeys(env.agents, 1))
        turns += 1
    with Journal(path, readonly=True) as journal:
        (game,) = journal.games()
        stored = list(journal.turns(game.id))
    assert game.env_id == "toy_line_v0" and game.seed == 11 and len(stored) == turns + 1 == 7
    outcome = game.outcome or {}
    assert outcome["returns"] == {"left": 1.0, "right": 1.0} and outcome["steps"] == 6
    assert stored[0].observations == {"left": [0], "right": [5]}
    assert stored[1].events["right"] == {
        "reward": 1.0, "terminated": True, "truncated": False, "info": {"pos": 6},
    }  # fmt: skip
    assert list(stored[2].observations) == ["left"]
    assert game.config["agents"] == ["left", "right"]
    env.close()
    code, out = _verify(path, capsys)
    assert code == 0 and "no replayer" in out
