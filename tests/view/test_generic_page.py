"""The generic viewer page: games of foreign environments journaled by ``wrappers.recording``.

CartPole (Gymnasium) and a toy two-agent PettingZoo parallel env are played and recorded; the page
must hold exactly what the environment returned at a given turn, say the game is not verified by
replay, stay small for a 1,000-step game, and (when Chromium is installed) show the values after
scrubbing. The helpers here also feed ``tests/analysis/test_generic_metrics.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.utils.env import ParallelEnv

from maze_envs.journal import Journal
from maze_envs.view import game_data, main
from maze_envs.view.generic_data import MAX_ITEMS, NOT_REPLAYED
from maze_envs.view.page import read_payload
from tests.chromium import Chromium, file_url, find_chromium
from wrappers.recording import RecordJournal, RecordJournalParallel


@dataclass
class Played:
    """What the environment returned while it was recorded (the truth the page must show)."""

    path: Path
    obs: dict[str, list[Any]] = field(default_factory=dict)  # agent -> per turn (None: absent)
    actions: dict[str, list[Any]] = field(default_factory=dict)
    rewards: dict[str, list[float | None]] = field(default_factory=dict)
    terminated: dict[str, bool] = field(default_factory=dict)
    truncated: dict[str, bool] = field(default_factory=dict)

    @property
    def steps(self) -> int:
        return len(next(iter(self.obs.values()))) - 1


def play_cartpole(path: Path, *, seed: int = 4, max_steps: int = 500) -> Played:
    """CartPole recorded by RecordJournal, pushed by a simple balancing rule with some noise."""
    env = RecordJournal(gym.make("CartPole-v1", max_episode_steps=max_steps), path)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out = Played(path, {"agent": [obs.tolist()]}, {"agent": [None]}, {"agent": [None]})
    while True:
        action = int(obs[2] + 0.5 * obs[3] > 0) if rng.random() > 0.2 else int(rng.integers(2))
        obs, reward, terminated, truncated, _ = env.step(action)
        out.obs["agent"].append(obs.tolist())
        out.actions["agent"].append(action)
        out.rewards["agent"].append(float(reward))
        if terminated or truncated:
            out.terminated["agent"], out.truncated["agent"] = bool(terminated), bool(truncated)
            break
    env.close()
    return out


class ToyParallel(ParallelEnv[str, dict[str, Any], int]):
    """Two agents on a line: ``a`` plays until ``max_steps`` (truncated), ``b`` ends at step 3.

    Observations are a dict with a position, a 2x3 grid and, optionally, a long array (to check
    that the page shortens it); rewards depend on the actions.
    """

    metadata: ClassVar[dict[str, Any]] = {"name": "toy_parallel_v0"}

    def __init__(self, max_steps: int = 12, long_array: int = 0) -> None:
        self.possible_agents = ["a", "b"]
        self.agents: list[str] = []
        self.max_steps = max_steps
        self.long_array = long_array
        self.t = 0
        self.pos = {"a": 0, "b": 0}
        fields: dict[str, spaces.Space[Any]] = {
            "pos": spaces.Discrete(10_000, start=-5_000),
            "grid": spaces.Box(0, 9, (2, 3), np.int64),
        }
        if long_array:
            fields["long"] = spaces.Box(0, 1, (long_array,), np.float32)
        self._observation_space = spaces.Dict(fields)
        self._action_space = spaces.Discrete(3)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._action_space

    def _obs(self, agent: str) -> dict[str, Any]:
        grid = (np.arange(6).reshape(2, 3) + self.t + self.pos[agent]) % 10
        out: dict[str, Any] = {"pos": self.pos[agent], "grid": grid}
        if self.long_array:
            out["long"] = np.full(self.long_array, 0.5, np.float32)
        return out

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self.agents = list(self.possible_agents)
        self.t = 0
        self.pos = {"a": 0, "b": 0}
        return {a: self._obs(a) for a in self.agents}, {a: {"seed": seed} for a in self.agents}

    def step(self, actions: dict[str, int]) -> Any:
        self.t += 1
        rewards, term, trunc, infos = {}, {}, {}, {}
        for agent in self.agents:
            move = int(actions[agent]) - 1
            self.pos[agent] += move
            rewards[agent] = 1.0 if move > 0 else -0.5 if move < 0 else 0.25
            term[agent] = agent == "b" and self.t == 3
            trunc[agent] = self.t >= self.max_steps
            infos[agent] = {"t": self.t}
        observations = {a: self._obs(a) for a in self.agents}
        self.agents = [a for a in self.agents if not (term[a] or trunc[a])]
        return observations, rewards, term, trunc, infos


def play_toy(path: Path, *, max_steps: int = 12, long_array: int = 0) -> Played:
    """The toy parallel env recorded by RecordJournalParallel with seeded random actions."""
    env = RecordJournalParallel(ToyParallel(max_steps, long_array), path)
    observations, _ = env.reset(seed=7)
    agents = env.possible_agents
    out = Played(path, {a: [] for a in agents}, {a: [None] for a in agents})
    out.rewards = {a: [None] for a in agents}

    def keep(observations: dict[str, Any]) -> None:
        for a in agents:
            o = observations.get(a)
            out.obs[a].append(None if o is None else {"pos": o["pos"], "grid": o["grid"].tolist()})

    keep(observations)
    rng = np.random.default_rng(5)
    while env.agents:
        actions = {a: int(rng.integers(3)) for a in env.agents}
        observations, rewards, terminations, truncations, _ = env.step(actions)
        keep(observations)
        for a in agents:
            out.actions[a].append(actions.get(a))
            out.rewards[a].append(rewards.get(a))
            out.terminated[a] = out.terminated.get(a, False) or bool(terminations.get(a))
            out.truncated[a] = out.truncated.get(a, False) or bool(truncations.get(a))
    env.close()
    return out


def page_of(played: Played, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    page = tmp_path / "game.html"
    assert main([str(played.path), "--out", str(page)]) == 0
    return page, read_payload(page.read_text(encoding="utf-8"))


def test_cartpole_page_holds_the_recorded_turn(tmp_path: Path) -> None:
    played = play_cartpole(tmp_path / "games.sqlite")
    page, data = page_of(played, tmp_path)
    html = page.read_text(encoding="utf-8")
    assert data["kind"] == "generic" and data["env_id"] == "CartPole-v1"
    assert data["n"] == played.steps + 1 and data["agents"] == ["agent"]
    turn = played.steps // 2
    assert data["obs"]["agent"][turn] == played.obs["agent"][turn]
    assert data["actions"]["agent"][turn] == played.actions["agent"][turn]
    assert data["rewards"]["agent"][turn] == played.rewards["agent"][turn]
    assert data["terminated"]["agent"][-1] == int(played.terminated["agent"])
    assert data["truncated"]["agent"][-1] == int(played.truncated["agent"])
    assert data["seed"] == 4 and data["outcome"]["steps"] == played.steps
    # honest header: not verified by replay, only the stored rows were checked
    assert data["verified"] is False and data["rows_intact"] is True
    assert data["verification"].startswith(NOT_REPLAYED)
    assert "(recorded, not replayable)" in html and "https://" not in html
    assert "function viewer(D)" in html and "PALETTE" in html  # the generic script is inlined


def test_parallel_page_holds_both_agents_and_their_absence(tmp_path: Path) -> None:
    played = play_toy(tmp_path / "games.sqlite")
    _, data = page_of(played, tmp_path)
    assert data["agents"] == ["a", "b"] and data["env_id"] == "toy_parallel_v0"
    for turn in (0, 2, 3, 5):
        for agent in ("a", "b"):
            assert data["obs"][agent][turn] == played.obs[agent][turn], (turn, agent)
            assert data["actions"][agent][turn] == played.actions[agent][turn], (turn, agent)
            assert data["rewards"][agent][turn] == played.rewards[agent][turn], (turn, agent)
    assert data["obs"]["b"][5] is None and data["actions"]["b"][5] is None  # b left at turn 3
    assert data["terminated"]["b"][3] == 1 and data["truncated"]["a"][-1] == 1
    assert data["info"]["a"][2] == {"t": 2} and data["info"]["a"][0] == {"seed": 7}


def test_decision_records_reach_the_page(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    env = RecordJournal(gym.make("FrozenLake-v1", is_slippery=False), path)
    env.reset(seed=0)
    for k, action in enumerate([2, 2, 1, 1, 1, 2]):
        env.note("agent", {"why": f"step {k + 1}", "action": action})
        env.step(action)
    env.close()
    with Journal.open_readonly(path) as journal:
        data = game_data(journal, 1)
    assert data["decisions"]["agent"][0] is None
    assert data["decisions"]["agent"][3] == {"why": "step 3", "action": 1}
    assert data["obs"]["agent"][-1] == 15 and data["rewards"]["agent"][-1] == 1.0


def test_a_thousand_step_game_makes_a_small_page(tmp_path: Path) -> None:
    played = play_toy(tmp_path / "games.sqlite", max_steps=1000, long_array=5000)
    page, data = page_of(played, tmp_path)
    size = page.stat().st_size
    assert data["n"] == 1001
    long = data["obs"]["a"][500]["long"]  # 5,000 floats each turn, shortened on the page
    assert len(long) == 17 and long[0] == 0.5 and "4984 more (5000 items" in long[-1]
    assert len(long) <= MAX_ITEMS
    assert data["obs"]["a"][500]["grid"] == played.obs["a"][500]["grid"]
    assert size < 400 * 1024, f"{size / 1024:.0f} KiB"


def test_an_edited_row_is_drawn_only_up_to_it(tmp_path: Path) -> None:
    from tests.journal.tamper import edit_turn

    played = play_toy(tmp_path / "games.sqlite")
    edit_turn(played.path, 1, 2, "actions", lambda _: '{"a":9,"b":9}')
    with Journal.open_readonly(played.path) as journal:
        data = game_data(journal, 1)
    assert data["n"] == 2 and data["problem"].startswith("turn 2")
    assert not data["rows_intact"] and NOT_REPLAYED in data["verification"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    if find_chromium() is None:
        pytest.skip("Chromium is not installed (apt-get install chromium, or set $CHROMIUM)")
    with Chromium() as chromium:
        yield chromium


def panel_text(browser: Chromium) -> str:
    return str(browser.evaluate("document.getElementById('panel').innerText"))


def test_the_page_shows_the_turn_after_scrubbing(browser: Chromium, tmp_path: Path) -> None:
    played = play_toy(tmp_path / "games.sqlite")
    page, _ = page_of(played, tmp_path)
    browser.open(file_url(page, "turn=2&agent=b"))
    browser.wait_for("document.body.dataset.ready")
    assert browser.evaluate("document.getElementById('error')") is None
    assert browser.evaluate("document.body.dataset.turn") == "2"
    text = panel_text(browser)
    assert "Agent b" in text and f"reward\n{played.rewards['b'][2]:g}" in text
    assert f'"pos": {played.obs["b"][2]["pos"]}' in text
    assert "[" + ", ".join(map(str, played.obs["b"][2]["grid"][1])) + "]" in text
    meta = str(browser.evaluate("document.getElementById('meta').innerText"))
    assert "not verified by replay" in meta
    # scrub with the slider, then the keyboard: the panel and the link follow
    browser.evaluate(
        "(() => { const s = document.getElementById('turn'); s.value = 3;"
        " s.dispatchEvent(new Event('input')); })()"
    )
    assert browser.evaluate("location.hash") == "#turn=3&agent=b"
    text = panel_text(browser)
    assert f"action\n{played.actions['b'][3]}" in text and "terminated\nyes" in text
    browser.press("ArrowRight", 39)
    browser.press("1", 49)
    assert browser.evaluate("document.body.dataset.agent") == "a"
    text = panel_text(browser)
    assert "turn 4" in text.lower() and f'"pos": {played.obs["a"][4]["pos"]}' in text
    assert f"action\n{played.actions['a'][4]}" in text
    total = sum(r for r in played.rewards["a"][1:5] if r is not None)
    assert f"return so far\n{total:g}" in text


def test_cartpole_page_in_the_browser(browser: Chromium, tmp_path: Path) -> None:
    played = play_cartpole(tmp_path / "games.sqlite")
    page, data = page_of(played, tmp_path)
    browser.open(file_url(page, "turn=5"))
    browser.wait_for("document.body.dataset.ready")
    text = panel_text(browser)
    obs = browser.evaluate("JSON.stringify(window.GAME.obs.agent[5])")
    assert obs == str(played.obs["agent"][5]).replace(" ", "")
    assert f"action\n{played.actions['agent'][5]}" in text
    browser.press("End", 35)
    assert browser.evaluate("document.body.dataset.turn") == str(data["n"] - 1)
    flag = "yes" if played.terminated["agent"] else "no"
    assert f"terminated\n{flag}" in panel_text(browser)
