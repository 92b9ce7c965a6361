"""Trained networks as files: the numpy weight format, its forward pass against torch's, the SB3
model-file loader (``sb3:``), and the clear errors of bad files, bad names and a missing extra."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from maze_envs import maze_escape_v1
from maze_envs.escape.config import Config
from maze_envs.escape.convert import observation_to_model
from maze_envs.escape.numeric import NumericLayout
from maze_envs.escape.numeric_encoder import NumericEncoder
from maze_envs.escape.vocab import MOVES
from maze_envs.policies import escape_episode, make_policy
from maze_envs.policies.learned import (
    LearnedPolicyError,
    MlpNetwork,
    TrainedSettings,
    UnsupportedSetup,
    WeightFileError,
    make_learned_policy,
    read_weights,
    save_weights,
)
from maze_envs.policies.learned.policy import OBSERVATION_FIELDS
from maze_envs.policies.learned.sb3 import SETTINGS_MEMBER, read_sb3_settings, save_sb3_settings

SMALL = Config.from_preset("full", width=6, height=6, max_turns=40)


def _settings(config: Config = SMALL, **changes: Any) -> TrainedSettings:
    data: dict[str, Any] = {
        "config": config.model_dump(mode="json"),
        "required": tuple(f for f in OBSERVATION_FIELDS if f in Config.model_fields),
        "feature_names": tuple(NumericLayout(config).names),
        "training": {"preset": "full", "algorithm": "test"},
    }
    data.update(changes)
    return TrainedSettings(**data)


def _network(width: int, heads: tuple[int, ...] = (5,), seed: int = 0) -> MlpNetwork:
    rng = np.random.default_rng(seed)
    return MlpNetwork(
        [
            (rng.normal(size=(16, width)) * 3 / np.sqrt(width), rng.normal(size=16) * 0.1),
            (rng.normal(size=(sum(heads), 16)) * 2, rng.normal(size=sum(heads)) * 0.1),
        ],
        "tanh",
        heads,
    )


def _play(specs: dict[str, str], config: Config, seed: int) -> tuple[dict[str, Any], list[Any]]:
    """One game with a policy per agent; the outcome and every turn's actions."""
    env = maze_escape_v1.parallel_env(config=config)
    observations, _ = env.reset(seed=seed)
    policies = {agent: make_policy(spec) for agent, spec in specs.items()}
    for agent, policy in policies.items():
        policy.reset(agent, seed, escape_episode(env, agent))
    turns = []
    while env.agents:
        actions = {
            a: policies[a].act(observation_to_model(observations[a], config, a)).action
            for a in env.agents
        }
        turns.append(actions)
        observations, *_ = env.step(actions)
    return env.outcome(), turns


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    settings = _settings()
    return save_weights(tmp_path / "team.npz", _network(settings.width), settings)


def test_a_weight_file_round_trips_and_plays_a_game(weights: Path) -> None:
    loaded = read_weights(weights.read_bytes(), str(weights))
    original = _network(loaded.settings.width)
    x = np.random.default_rng(1).normal(size=(4, loaded.network.width)).astype(np.float32)
    # stored as float32: the same logits to float32 precision
    np.testing.assert_allclose(loaded.network.logits(x), original.logits(x), rtol=1e-5, atol=1e-5)
    assert loaded.settings == _settings()
    outcome, turns = _play(dict.fromkeys("ABC", f"learned:{weights}"), SMALL, seed=3)
    assert turns and outcome["turns"] == len(turns)
    again, replay = _play(dict.fromkeys("ABC", f"learned:{weights}"), SMALL, seed=3)
    assert (again, replay) == (outcome, turns)  # deterministic: same seed, same game


def test_sampling_draws_from_the_policy_seed(weights: Path) -> None:
    spec = f"learned:{weights}:deterministic=false"
    policy = make_learned_policy(f"learned:{weights}", deterministic=False)
    assert policy.deterministic is False
    env = maze_escape_v1.parallel_env(config=SMALL)
    observations, _ = env.reset(seed=0)
    model = observation_to_model(observations["A"], SMALL, "A")
    moves = set()
    for seed in range(40):
        policy.reset("A", seed, escape_episode(env, "A"))
        moves.add(policy.act(model).action.move)
    assert len(moves) > 1, spec  # the random network's distribution is not one-hot
    policy.reset("A", 7, escape_episode(env, "A"))
    first = policy.act(model).action
    policy.reset("A", 7, escape_episode(env, "A"))
    assert policy.act(model).action == first


def test_the_decision_records_the_probability_and_harness_names_the_file(weights: Path) -> None:
    policy = make_learned_policy(f"learned:{weights}")
    env = maze_escape_v1.parallel_env(config=SMALL)
    observations, _ = env.reset(seed=0)
    policy.reset("B", 0, escape_episode(env, "B"))
    decision = policy.act(observation_to_model(observations["B"], SMALL, "B"))
    assert 0.2 < decision.record["p_move"] <= 1.0  # the argmax of 5 moves has p >= 1/5
    harness = policy.harness()
    assert harness["weights"] == str(weights) and len(harness["sha256"]) == 64
    assert harness["deterministic"] is True


def test_a_setup_it_was_not_trained_on_is_one_clear_error(weights: Path) -> None:
    policy = make_learned_policy(f"learned:{weights}")
    with pytest.raises(UnsupportedSetup) as caught:
        policy.check_config(Config.from_preset("sparse", width=6, height=6))
    message = str(caught.value)
    assert "trained with --preset full" in message
    assert "trail_length=30 (this game: 0)" in message and "--set trail_length=30" in message
    with pytest.raises(UnsupportedSetup, match=r"num_agents=3 \(this game: 4\)"):
        policy.check_config(SMALL.model_copy(update={"num_agents": 4}))
    # the maze size and the turn limit are free
    policy.check_config(Config.from_preset("full", width=11, height=9, max_turns=300))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda path: path.write_bytes(b"not a zip"), "is not a weight file"),
        (
            lambda path: np.savez(path, meta=np.array('{"format": "other/9"}')),
            "has format 'other/9'",
        ),
    ],
)
def test_a_bad_weight_file_is_a_clear_error(tmp_path: Path, damage: Any, message: str) -> None:
    path = tmp_path / "bad.npz"
    damage(path)
    with pytest.raises(LearnedPolicyError, match=message):
        make_policy(f"learned:{path}")


def test_layers_that_do_not_fit_are_refused(tmp_path: Path) -> None:
    settings = _settings()
    with pytest.raises(ValueError, match="reads 10 inputs"):
        save_weights(tmp_path / "x.npz", _network(10), settings)
    with pytest.raises(WeightFileError, match="the action heads"):
        MlpNetwork([(np.zeros((4, 3)), np.zeros(4))], "tanh", (5,))
    with pytest.raises(WeightFileError, match="unknown activation"):
        MlpNetwork([(np.zeros((5, 3)), np.zeros(5))], "gelu", (5,))


def test_unknown_names_and_missing_files_say_what_exists(tmp_path: Path) -> None:
    with pytest.raises(LearnedPolicyError, match=r"did you mean 'escape-ppo'\?"):
        make_policy("learned:escape-pop")
    with pytest.raises(LearnedPolicyError, match="no weight file at"):
        make_policy(f"learned:{tmp_path / 'none.npz'}")
    with pytest.raises(LearnedPolicyError, match="no Stable-Baselines3 model file at"):
        make_policy(f"sb3:{tmp_path / 'none.zip'}")
    with pytest.raises(LearnedPolicyError, match="Maze Escape only"):
        make_policy("learned:escape-ppo", "agimaze")


def test_sb3_without_torch_is_one_line_naming_the_extra(tmp_path: Path) -> None:
    """In a fresh interpreter where torch cannot be imported: ``sb3:`` fails with one line
    naming the ``rl`` extra, and a weight file still plays (numpy only)."""
    settings = _settings()
    weights = save_weights(tmp_path / "w.npz", _network(settings.width), settings)
    model = tmp_path / "model.zip"
    with zipfile.ZipFile(model, "w") as archive:
        archive.writestr("data", "{}")
    script = f"""
import sys
sys.modules["torch"] = None  # import torch raises ImportError
from maze_envs.policies import make_policy
policy = make_policy("learned:{weights}")
assert "torch" not in [m for m in sys.modules if sys.modules[m] is not None]
try:
    make_policy("sb3:{model}")
except Exception as exc:
    print(type(exc).__name__, exc)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    line = done.stdout.strip()
    assert "\n" not in line
    assert line.startswith("MissingExtra sb3: policies need torch and Stable-Baselines3")
    assert line.endswith("pip install 'maze-envs[rl]'")


# --- with the rl extra ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sb3_model(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A PPO model trained for one short update on the numeric observation (seconds)."""
    pytest.importorskip("stable_baselines3", reason="needs pip install 'maze-envs[rl]'")
    torch = pytest.importorskip("torch", reason="needs pip install 'maze-envs[rl]'")
    from stable_baselines3 import PPO

    from wrappers.escape_numeric import EscapeNumericObservation
    from wrappers.move_only import MoveOnlyActions
    from wrappers.single_agent import SingleAgentEscape

    torch.set_num_threads(1)
    env = SingleAgentEscape(
        config=SMALL,
        teammates="random",
        wrappers=[lambda e: EscapeNumericObservation(e, flatten=True), MoveOnlyActions],
    )
    model = PPO(
        "MlpPolicy", env, n_steps=64, batch_size=32, seed=0, device="cpu",
        policy_kwargs={"net_arch": [32, 32]},
    )  # fmt: skip
    model.learn(64)
    path = tmp_path_factory.mktemp("sb3") / "model.zip"
    model.save(path)
    return model, path


def test_numpy_gives_torchs_probabilities(sb3_model: Any) -> None:
    import torch

    from maze_envs.policies.learned import network_from_sb3

    model, _ = sb3_model
    network = network_from_sb3(model.policy)
    x = np.random.default_rng(0).uniform(-1, 1, size=(64, network.width)).astype(np.float32)
    with torch.no_grad():
        distribution = model.policy.get_distribution(torch.as_tensor(x))
        expected = distribution.distribution.probs.numpy()
    probabilities, _ = network.probabilities(x, None, True)
    np.testing.assert_allclose(probabilities[0], expected, rtol=1e-5, atol=1e-6)


def test_an_sb3_file_plays_as_its_model_predicts(sb3_model: Any) -> None:
    model, path = sb3_model
    config = SMALL
    encoder = NumericEncoder(config, flatten=True)
    env = maze_escape_v1.parallel_env(config=config)
    observations, _ = env.reset(seed=5)
    policies = {a: make_policy(f"sb3:{path}") for a in env.agents}
    for agent, policy in policies.items():
        policy.reset(agent, 0, escape_episode(env, agent))
    while env.agents:
        actions = {}
        for agent in env.agents:
            vector = encoder.encode([observations[agent]])[0]
            predicted, _ = model.predict(vector, deterministic=True)
            chosen = policies[agent].act(observation_to_model(observations[agent], config, agent))
            assert chosen.action.move == MOVES[int(predicted)]
            actions[agent] = chosen.action
        observations, *_ = env.step(actions)


def test_an_sb3_file_without_settings_is_read_against_the_game(sb3_model: Any) -> None:
    _, path = sb3_model
    policy = make_policy(f"sb3:{path}")
    assert policy.settings is None
    policy.check_config(SMALL.model_copy(update={"width": 9, "height": 9}))
    with pytest.raises(UnsupportedSetup, match="reads observations of 163 numbers"):
        policy.check_config(Config.from_preset("sparse", width=6, height=6))


def test_settings_travel_inside_the_sb3_file(sb3_model: Any, tmp_path: Path) -> None:
    _, path = sb3_model
    copy = tmp_path / "with-settings.zip"
    copy.write_bytes(path.read_bytes())
    save_sb3_settings(copy, _settings())
    assert read_sb3_settings(copy) == _settings()
    with zipfile.ZipFile(copy) as archive:
        assert SETTINGS_MEMBER in archive.namelist()
    policy = make_policy(f"sb3:{copy}")
    with pytest.raises(UnsupportedSetup, match="--set used_exits=true"):
        policy.check_config(SMALL.model_copy(update={"used_exits": False}))


LONG_TRAIL = Config.from_preset(
    "full", width=6, height=6, max_turns=40, coordinates="absolute", trail_length=40
)
NO_RAW_TRAIL = tuple(n for n in NumericLayout(LONG_TRAIL).names if not n.startswith("trail"))


@pytest.mark.parametrize(
    ("config", "features", "additions", "frame_stack"),
    [
        (SMALL, None, (), 1),
        (SMALL, None, ("previous_move",), 1),
        (SMALL, None, ("previous_move",), 3),
        (LONG_TRAIL, NO_RAW_TRAIL, ("previous_move", "trail_neighbours"), 2),
    ],
    ids=["observation", "previous-move", "three-frames", "trail-neighbours"],
)
def test_the_policy_reads_the_scalar_game_as_training_read_the_batched_one(
    tmp_path: Path,
    config: Config,
    features: tuple[str, ...] | None,
    additions: tuple[str, ...],
    frame_stack: int,
) -> None:
    """Games of the batched engine, exported and played in the scalar env by the learned policy,
    go move for move as the same network plays them in the batched engine through the
    training's inputs (EscapeLearnedInputs, frames stacked oldest first, zeros before the
    first)."""
    from wrappers.escape_learned_inputs import EscapeLearnedInputs

    names = features if features is not None else tuple(NumericLayout(config).names)
    settings = _settings(config, feature_names=names, additions=additions, frame_stack=frame_stack)
    network = _network(settings.width, seed=7)  # a seed whose network plays varied moves
    weights = save_weights(tmp_path / "w.npz", network, settings)
    games = 6
    vec = EscapeLearnedInputs(
        maze_escape_v1.vector_env(num_games=games, config=config, copy=True), features, additions
    )
    observations, _ = vec.reset(seed=11)
    exported = [vec.unwrapped.export(g) for g in range(games)]
    stack = np.zeros((vec.num_envs, frame_stack, observations.shape[1]), np.float32)
    batched: list[list[int]] = []
    running = np.ones(games, np.bool_)
    while running.any():
        stack[:, :-1] = stack[:, 1:]
        stack[:, -1] = observations
        probabilities, _ = network.probabilities(stack.reshape(vec.num_envs, -1), None, False)
        moves = probabilities[0].argmax(axis=1)
        batched.append(moves.tolist())
        observations, _, terminations, truncations, _ = vec.step(moves)
        running &= ~(terminations | truncations).reshape(games, -1)[:, 0]
    assert len({move for turn in batched for move in turn}) >= 3  # varied moves, not one
    for game, board in enumerate(exported):
        env = maze_escape_v1.parallel_env(config=board.config, generator=board.generator)
        observations, _ = env.reset(seed=0)
        team = {a: make_policy(f"learned:{weights}") for a in env.agents}
        for agent, policy in team.items():
            policy.reset(agent, 0, escape_episode(env, agent))
        turn = 0
        while env.agents:
            actions = {
                a: team[a].act(observation_to_model(observations[a], config, a)).action
                for a in env.agents
            }
            rows = batched[turn][game * 3 : game * 3 + 3]
            assert [MOVES.index(actions[a].move) for a in env.agents] == rows, (game, turn)
            observations, *_ = env.step(actions)
            turn += 1
