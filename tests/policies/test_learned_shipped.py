"""The shipped learned team (``learned:escape-ppo``): it loads, plays the scalar env, sits in a
``maze-envs bench`` table beside the baselines, is journaled and shown by ``maze-envs view``, and
refuses a setup it was not trained on with one clear error."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from maze_envs import maze_escape_v1
from maze_envs.cli import main as cli_main
from maze_envs.escape.config import Config
from maze_envs.escape.convert import observation_to_model
from maze_envs.policies import escape_episode, make_policy
from maze_envs.policies.learned import SHIPPED, UnsupportedSetup, shipped_weights
from maze_envs.verify import verify_journal
from maze_envs.view.page import read_payload

SPEC = "learned:escape-ppo"
#: The game settings the shipped policy was trained with (see its trained settings).
SETTINGS = ["--preset", "full", "--set", "coordinates=absolute", "--set", "trail_length=120"]


def test_the_shipped_weights_are_small_package_data_with_their_settings() -> None:
    assert set(SHIPPED) == {"escape-ppo"}
    data = shipped_weights("escape-ppo")
    assert len(data) < 300_000  # an MLP of a few hundred KB at most
    policy = make_policy(SPEC)
    settings = policy.settings
    assert settings is not None
    trained = Config.model_validate(settings.config)
    assert (trained.width, trained.height, trained.num_agents) == (7, 7, 3)
    assert settings.training["preset"] == "full" and settings.training["seed"] == 0
    assert settings.training["agent_steps"] <= 5_000_000
    assert policy.harness()["sha256"] and policy.deterministic


def test_it_plays_the_scalar_env_to_the_end_and_is_deterministic() -> None:
    config = Config.model_validate(make_policy(SPEC).settings.config)
    outcomes = []
    for _ in range(2):
        env = maze_escape_v1.parallel_env(config=config)
        observations, _ = env.reset(seed=123)
        team = {a: make_policy(SPEC) for a in env.agents}
        for agent, policy in team.items():
            policy.reset(agent, 0, escape_episode(env, agent))
        moves = []
        while env.agents:
            actions = {
                a: team[a].act(observation_to_model(observations[a], config, a)).action
                for a in env.agents
            }
            moves.append(actions)
            observations, *_ = env.step(actions)
        outcomes.append((env.outcome(), moves))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0]["turns"] == len(outcomes[0][1])


def test_it_refuses_a_setup_without_its_settings() -> None:
    with pytest.raises(UnsupportedSetup) as caught:
        make_policy(SPEC).check_config(Config.from_preset("full", width=7, height=7))
    message = str(caught.value)
    assert "coordinates='absolute' (this game: 'own')" in message
    assert "--set coordinates=absolute" in message and "--set trail_length=120" in message


def test_it_sits_in_the_bench_table_beside_the_baselines_journaled_and_viewable(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    code = cli_main(
        [
            "bench", "--env", "escape", *SETTINGS, "--size", "7", "--max-turns", "120",
            "--policy", "random", "--policy", "explorer", "--policy", SPEC,
            "--seeds", "20000-20002", "--out", str(out), "--no-plots", "--quiet",
        ]
    )  # fmt: skip
    assert code == 0
    games = orjson.loads((out / "results.json").read_bytes())["games"]
    assert sorted({g["policy"] for g in games}) == ["explorer", SPEC, "random"]
    assert all(g["status"] == "ok" for g in games)
    table = (out / "summary.md").read_text()
    assert f"| {SPEC} |" in table and "| explorer |" in table
    reports = verify_journal(out / "games.sqlite")
    assert len(reports) == 9 and all(report.ok for report in reports)
    learned = next(g for g in games if g["policy"] == SPEC)
    page = tmp_path / "game.html"
    code = cli_main(
        ["view", str(out / "games.sqlite"), "--game", str(learned["game_id"]), "--out", str(page)]
    )
    assert code == 0
    data = read_payload(page.read_text())
    assert data["meta"]["policies"] == dict.fromkeys("ABC", SPEC)  # the page names its policy
    assert data["meta"]["harness"]["A"]["weights"] == SPEC
    records = [r for r in data["decisions"]["A"] if r]
    assert records and all(0.2 <= r["p_move"] <= 1.0 for r in records)  # and shows its choices


def test_a_bench_setup_it_cannot_play_is_one_clear_error_before_any_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code = cli_main(
        [
            "bench", "--env", "escape", "--preset", "sparse", "--size", "7",
            "--policy", "explorer", "--policy", SPEC, "--seeds", "0-1", "--out", str(out),
        ]
    )  # fmt: skip
    assert code == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0
    assert f"policy {SPEC!r} cannot play 'v1 sparse, 7x7'" in error
    assert "--set coordinates=absolute" in error
    assert not (out / "games.sqlite").exists()
