"""The verifiers environments' datasets and options, checked before any model is called."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip(
    "verifiers.v1",
    reason="the verifiers environments need the verifiers extra, installed in an environment of "
    "its own (scripts/test.sh runs these tests in .venv-verifiers)",
)

import verifiers.v1 as vf

from llm_policies.apps.evaluation import (
    TRAINING_SEED_START,
    all_evaluation_bundles,
    all_evaluation_seeds,
)
from llm_policies.apps.verifiers import agimaze, escape
from llm_policies.apps.verifiers.harness import MazeChatHarness
from llm_policies.apps.verifiers.policy import split_policy_options
from maze_envs.agimaze.packs import list_bundles
from maze_envs.bench.spec import GameTask


def _games(env: vf.Env) -> list[GameTask]:
    return [GameTask.model_validate(task.data.game) for task in env.taskset]


def test_the_packages_resolve_as_verifiers_resolves_an_environment_by_name() -> None:
    for module, env_cls in (
        ("maze_envs_escape", escape.EscapeEnv),
        ("maze_envs_agimaze", agimaze.AgiMazeEnv),
    ):
        assert vf.environment_class(module) is env_cls
        assert vf.load_harness(vf.default_agent_harness(module)).__class__ is MazeChatHarness


def test_the_escape_dataset_is_clear_of_every_evaluation_seed() -> None:
    env = escape.load_environment()
    games = _games(env)
    assert len(games) == 100 and {g.case.size for g in games} == {"9x9"}
    assert min(g.seed for g in games) == TRAINING_SEED_START
    assert not {g.seed for g in games} & all_evaluation_seeds()
    keys = [task.key for task in env.taskset]
    assert len(set(keys)) == len(keys)  # one key per game, stable across runs (the run key)


@pytest.mark.parametrize("seeds", ["0-3", "5", "19,1000000"])
def test_escape_seeds_the_project_evaluates_on_are_refused_unless_allowed(seeds: str) -> None:
    with pytest.raises(ValueError, match=r"evaluation seeds of the project.*allow_evaluation"):
        _games(escape.load_environment(seeds=seeds))
    allowed = _games(escape.load_environment(seeds=seeds, allow_evaluation=True))
    assert allowed


def test_the_agimaze_dataset_is_the_training_labyrinths() -> None:
    games = _games(agimaze.load_environment())
    packs = {g.case.pack for g in games}  # type: ignore[union-attr]
    assert packs == set(list_bundles("TRAINING/"))
    assert not packs & all_evaluation_bundles()


@pytest.mark.parametrize(
    "options",
    [
        {"packs": ["CLASSIC/EASY"]},
        {"packs": ["TUTORIAL/STAGE-01/0000.json"]},
        {"targets": ["CLASSIC/MEDIUM/keys/6x6/0005.json"]},
        {"paths": ["TRAINING/S0-keys/STAGE-01/0000.json", "an EXTENDED bundle"]},
    ],
)
def test_agimaze_evaluation_labyrinths_are_refused_unless_allowed(options: dict[str, Any]) -> None:
    if "paths" in options:  # a set whose target is an evaluation labyrinth
        options = {"paths": [options["paths"][0], list_bundles("EXTENDED/")[0]]}
    with pytest.raises(ValueError, match=r"evaluation labyrinths.*allow_evaluation"):
        _games(agimaze.load_environment(**options))
    assert _games(agimaze.load_environment(**options, allow_evaluation=True))


def test_a_set_counts_by_its_target_so_the_tutorials_may_open_it() -> None:
    (game,) = _games(agimaze.load_environment(targets=["TRAINING/S0-keys/STAGE-01/0000.json"]))
    assert game.case.paths[0].startswith("TUTORIAL/")  # type: ignore[union-attr]
    assert game.case.target == "TRAINING/S0-keys/STAGE-01/0000.json"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ({"prompt_version": "v99"}, "unknown AGI Maze prompt version 'v99'"),
        ({"history": "dreams"}, "history"),
        ({"output_mode": "auto"}, "'auto' probes the server"),
        ({"temperature": 0.5}, "verifiers' here: use vf-eval --sampling.temperature"),
        ({"base_url": "http://x"}, "vf-eval --client.base-url"),
        ({"cache": "replies.sqlite"}, "would never reach verifiers' trace"),
        ({"chek": "required"}, "did you mean 'check'"),
    ],
)
def test_bad_policy_options_fail_when_the_dataset_loads(
    policy: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        _games(agimaze.load_environment(packs=["TRAINING/S0-keys/STAGE-01"], policy=policy))


def test_the_harness_options_reach_the_game_task() -> None:
    policy = {"history": "planning", "window": 8, "check": "optional", "mode": "tool"}
    (game, *_) = _games(
        agimaze.load_environment(packs=["TRAINING/S0-keys/STAGE-01"], policy=policy)
    )
    assert game.policy.policy is not None
    assert game.policy.policy.options == policy
    model, harness, other = split_policy_options(policy)
    assert harness == {
        "history": "planning",
        "window": 8,
        "check": "optional",
        "output_mode": "tool",
    }
    assert model == other == {}


def test_this_environment_has_no_pydantic_ai_and_the_policies_play_without_it() -> None:
    """The verifiers extra installs without the llm extra: the model calls are verifiers'."""
    import importlib.util

    assert importlib.util.find_spec("pydantic_ai") is None
    assert importlib.util.find_spec("genai_prices") is None
