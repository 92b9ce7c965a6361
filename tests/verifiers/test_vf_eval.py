"""Both environments end to end through verifiers' own command, ``vf-eval``, against the
loopback OpenAI-compatible server scripted with the project's players (the stand-in wall
follower for Maze Escape, the oracle's plans for AGI Maze).

Every test fails when a reward, a metric, a trace or a journal is missing. The rewards are
compared with the project's own scoring of the same games, read back from the journal (every
game), and the journals pass ``maze-envs verify`` and ``maze-envs view``.
"""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "verifiers.v1",
    reason="the verifiers environments need the verifiers extra, installed in an environment of "
    "its own (scripts/test.sh runs these tests in .venv-verifiers)",
)

from llm_policies.apps.verifiers.rubric import AGIMAZE_REWARDS, ESCAPE_REWARDS, finish_speed
from maze_envs.agimaze.set_env import TUTORIAL_PATHS
from maze_envs.bench.metrics import agimaze_scores, agimaze_set_scores
from maze_envs.journal import GameInfo, Journal
from maze_envs.metrics import finish_ratio
from tests.llm.servers import LoopbackServer
from tests.verifiers.support import Player, Run, vf_eval

BUNDLES = ("TRAINING/S0-keys/STAGE-01/0000.json", "TRAINING/S1-rivers/STAGE-02/0004.json")
SET_TARGET = "TRAINING/S0-keys/STAGE-02/0003.json"


@dataclass
class Played:
    """One vf-eval run of an environment, the model's requests, and the journal."""

    kind: str
    run: Run
    player: Player
    journal: Path


def _play(tmp: Path, env_id: str, kind: str, player: Player, *args: str) -> Played:
    journal = tmp / "games.sqlite"
    with LoopbackServer() as server:
        server.respond_with(player)
        run = vf_eval(env_id, server.openai_base_url, tmp, "--env.journal", str(journal), *args)
    assert run.status == 0, run.output[-4000:]
    return Played(kind, run, player, journal)


@pytest.fixture(scope="module")
def escape(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return _play(
        tmp_path_factory.mktemp("escape"),
        "maze_envs_escape",
        "escape",
        Player(),
        *("--env.taskset.sizes", '["5"]', "--env.taskset.max-turns", "40"),
        *("--env.taskset.seeds", "1000000-1000002"),
    )


@pytest.fixture(scope="module")
def agimaze(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return _play(
        tmp_path_factory.mktemp("agimaze"),
        "maze_envs_agimaze",
        "agimaze",
        Player(packs=BUNDLES),
        "--env.taskset.packs",
        f'["{BUNDLES[0]}", "{BUNDLES[1]}"]',
    )


@pytest.fixture(scope="module")
def agimaze_set(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return _play(
        tmp_path_factory.mktemp("set"),
        "maze_envs_agimaze",
        "set",
        Player(packs=(*TUTORIAL_PATHS, SET_TARGET)),
        *("--env.taskset.targets", f'["{SET_TARGET}"]', "--env.taskset.policy"),
        '{"history": "planning"}',
    )


@pytest.fixture(params=["escape", "agimaze", "agimaze_set"])
def played(request: pytest.FixtureRequest) -> Iterator[Played]:
    yield request.getfixturevalue(request.param)


def _games(journal: Path) -> dict[int, GameInfo]:
    with Journal(journal, readonly=True) as opened:
        return {info.id: info for info in opened.games()}


def test_every_game_is_played_with_every_reward_and_metric(played: Played) -> None:
    rubric = ESCAPE_REWARDS if played.kind == "escape" else AGIMAZE_REWARDS
    episodes = played.run.episodes
    expected = {"escape": 3, "agimaze": len(BUNDLES), "set": 1}[played.kind]
    assert len(episodes) == expected
    for episode in episodes:
        assert episode["ok"], episode["errors"]
        seats = {trace["task"]["data"]["seat"] for trace in episode["traces"]}
        assert seats == ({"A", "B", "C"} if played.kind == "escape" else {"player"})
        for trace in episode["traces"]:
            assert trace["ok"], trace["errors"]
            rewards = trace["rewards"]
            assert {name: r["weight"] for name, r in rewards.items()} == {
                part.name: part.weight for part in rubric
            }
            assert all(r["score"] is not None for r in rewards.values())
            assert trace["metrics"]["decisions"] > 0
            info = trace["info"]["maze_envs"]
            assert info["row"]["status"] == "ok"
            assert Path(info["journal"]) == played.journal.resolve()


def test_every_model_call_went_through_verifiers_into_the_trace(played: Played) -> None:
    """Each decision of the journal is one call the server answered and the trace recorded."""
    calls = 0
    for trace in played.run.traces:
        row = trace["info"]["maze_envs"]["row"]
        seat = trace["task"]["data"]["seat"]
        requests = row["usage_by_agent"][seat]["requests"]
        assert len(trace["calls"]) == requests > 0
        calls += requests
    assert calls == len(played.player.requests)


def test_the_journal_verifies_and_every_game_has_a_viewer_page(
    played: Played, tmp_path: Path
) -> None:
    games = _games(played.journal)
    ids = {trace["info"]["maze_envs"]["game_id"] for trace in played.run.traces}
    assert ids == set(games)
    done = subprocess.run(
        [sys.executable, "-m", "maze_envs", "verify", str(played.journal)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(games)} of {len(games)} game(s) verified" in done.stdout
    for game_id in games:
        page = tmp_path / f"game{game_id}.html"
        command = ["view", str(played.journal), "--game", str(game_id), "--out", str(page)]
        viewed = subprocess.run(
            [sys.executable, "-m", "maze_envs", *command],
            capture_output=True,
            text=True,
            check=False,
        )
        assert viewed.returncode == 0, viewed.stdout + viewed.stderr
        assert page.stat().st_size > 10_000


def _project_scores(kind: str, info: GameInfo) -> dict[str, float]:
    """The project's own scoring of a journaled game, from its stored outcome alone."""
    outcome: dict[str, Any] = dict(info.outcome or {})
    case = info.meta["task"]["case"]
    if kind == "escape":
        success = bool(outcome["success"])
        ratio = finish_ratio(
            outcome["turns"] if success else None, outcome["fastest_possible_finish"]
        )
        return {"team_success": float(success), "finish_speed": finish_speed(ratio)}
    if kind == "agimaze":
        scores = agimaze_scores(
            steps=int(outcome["steps"]),
            solved=bool(outcome["solved"]),
            max_steps=int(outcome["max_steps"]),
            soft_good_steps=case.get("soft_good_steps"),
            budget=int(outcome["budget"]),
        )
    else:
        results = outcome["results"]
        scores = agimaze_set_scores(results, len(case["paths"]), case.get("soft_good_steps"))
    return {
        "solved": float(scores["solved"]),
        "success": float(scores["success"]),
        "good": float(scores["good"]),
        "rhae70": float(scores["rhae70"]),
    }


def test_rewards_equal_the_projects_scoring_of_every_game(played: Played) -> None:
    games = _games(played.journal)
    compared = set()
    for trace in played.run.traces:
        game_id = trace["info"]["maze_envs"]["game_id"]
        expected = _project_scores(played.kind, games[game_id])
        got = {name: r["score"] for name, r in trace["rewards"].items()}
        assert got.keys() == expected.keys()
        for name, value in expected.items():
            assert math.isclose(got[name], value, abs_tol=1e-9), (game_id, name, got, expected)
        compared.add(game_id)
    assert compared == set(games)  # every game, none left out


def test_the_scripted_players_win_so_the_rewards_are_not_all_zero(
    escape: Played, agimaze: Played, agimaze_set: Played
) -> None:
    """A guard on the comparison above: both outcomes occur, not only zeros."""
    team = [t["rewards"]["team_success"]["score"] for t in escape.run.traces]
    assert 1.0 in team
    speeds = {t["rewards"]["finish_speed"]["score"] for t in escape.run.traces}
    assert any(0 < s <= 1 for s in speeds)
    for played in (agimaze, agimaze_set):
        assert all(t["rewards"]["solved"]["score"] == 1.0 for t in played.run.traces)
