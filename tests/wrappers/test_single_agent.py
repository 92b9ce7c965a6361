"""SingleAgentEscape: one agent as a Gymnasium env, teammates played by policies."""

from __future__ import annotations

import pytest
from gymnasium.utils.env_checker import check_env

from maze_envs import maze_escape_v0, maze_escape_v1
from maze_envs.escape.types import MOVES, Observation
from maze_envs.policies import escape_episode, make_policy
from wrappers.escape_numeric import EscapeNumericObservation
from wrappers.masks import EscapeActionMasks
from wrappers.move_only import MoveOnlyActions
from wrappers.single_agent import SingleAgentEscape

SIZE = {"width": 6, "height": 6, "max_turns": 120}
STACKS = {
    "raw": [],
    "move_only": [MoveOnlyActions],
    "numeric_move_masks": [EscapeNumericObservation, MoveOnlyActions, EscapeActionMasks],
    "flat_move_masks": [
        lambda env: EscapeNumericObservation(env, flatten=True, text="hash"),
        MoveOnlyActions,
        EscapeActionMasks,
    ],
}


@pytest.mark.parametrize("stack", list(STACKS))
def test_passes_gymnasium_env_checker(stack: str) -> None:
    env = SingleAgentEscape(preset="full", teammates="random", wrappers=STACKS[stack], **SIZE)
    check_env(env, skip_render_check=True)
    observation, _ = env.reset(seed=4)
    for _ in range(30):
        assert env.observation_space.contains(observation)
        observation, *_ = env.step(env.action_space.sample())


def test_learner_following_an_explorer_reaches_team_success() -> None:
    env = SingleAgentEscape(
        preset="full", agent="B", teammates="explorer", wrappers=[MoveOnlyActions], **SIZE
    )
    _, _ = env.reset(seed=8)
    guide = make_policy("explorer")
    guide.reset("B", 0, escape_episode(env.base_env, "B"))
    total, terminated, truncated, info = 0.0, False, False, {}
    while not (terminated or truncated):
        typed = Observation.from_space(env.raw_observations["B"], env.config, "B")
        code = MOVES.index(guide.act(typed).move)
        _, reward, terminated, truncated, info = env.step(code)
        total += reward
    assert terminated and not truncated
    assert info["events"]["team_success"]
    assert total == env.config.exit_reward + env.config.team_bonus
    assert env.base_env.outcome()["success"]


def test_same_game_as_the_parallel_env() -> None:
    """Deterministic teammates: the single-agent game equals a parallel game of the same team."""
    single = SingleAgentEscape(preset="sparse", teammates="wall-follower-left", **SIZE)
    single.reset(seed=13)
    learner = make_policy("wall-follower-right")
    learner.reset("A", 0, escape_episode(single.base_env, "A"))
    parallel = maze_escape_v1.parallel_env(preset="sparse", **SIZE)
    raw, _ = parallel.reset(seed=13)
    team = {"A": make_policy("wall-follower-right")} | {
        name: make_policy("wall-follower-left") for name in ("B", "C")
    }
    for name, policy in team.items():
        policy.reset(name, 0, escape_episode(parallel, name))
    done = False
    while not done:
        typed = Observation.from_space(single.raw_observations["A"], single.config, "A")
        _, reward, terminated, truncated, info = single.step(
            learner.act(typed).to_space(single.config)
        )
        actions = {
            a: p.act(Observation.from_space(raw[a], parallel.config, a)) for a, p in team.items()
        }
        raw, rewards, terms, truncs, infos = parallel.step(actions)
        assert info["xy"] == infos["A"]["xy"] and reward == rewards["A"]
        assert info["team_rewards"] == rewards
        assert single.base_env.state_digest() == parallel.state_digest()
        done = terminated or truncated
        assert (terminated, truncated) == (terms["A"], truncs["A"])


def test_teammates_given_as_objects_and_validated() -> None:
    policies = {"A": make_policy("random"), "C": make_policy("cooperative")}
    env = SingleAgentEscape(preset="full", agent="B", teammates=policies, **SIZE)
    assert env.policies["A"] is policies["A"] and env.policies["C"] is policies["C"]
    env.reset(seed=1)
    assert policies["C"].agent == "C"
    with pytest.raises(ValueError, match=r"one policy for each of \['A', 'C'\]"):
        SingleAgentEscape(agent="B", teammates={"A": make_policy("random")}, **SIZE)
    with pytest.raises(ValueError, match="not a policy"):
        SingleAgentEscape(agent="B", teammates={"A": 3, "C": "random"}, **SIZE)
    with pytest.raises(ValueError, match="unknown agent 'Z'"):
        SingleAgentEscape(agent="Z", **SIZE)
    with pytest.raises(ValueError, match="not both"):
        SingleAgentEscape(maze_escape_v1.parallel_env(), width=6)


def test_v0_works_and_reset_is_reproducible() -> None:
    env = SingleAgentEscape(maze_escape_v0.parallel_env(**SIZE), teammates="random")
    first, _ = env.reset(seed=3)
    steps = [
        env.step(
            {"move": 1, "notebook": {"edit": 0, "start": 0, "end": 0, "text": ""}, "radio": ""}
        )[4]["xy"]
        for _ in range(10)
    ]
    again, _ = env.reset(seed=3)
    assert Observation.from_space(first, env.config, "A") == Observation.from_space(
        again, env.config, "A"
    )
    replay = [
        env.step(
            {"move": 1, "notebook": {"edit": 0, "start": 0, "end": 0, "text": ""}, "radio": ""}
        )[4]["xy"]
        for _ in range(10)
    ]
    assert steps == replay


def test_action_masks_with_and_without_the_mask_wrapper() -> None:
    with_masks = SingleAgentEscape(
        teammates="random", wrappers=[MoveOnlyActions, EscapeActionMasks], **SIZE
    )
    without = SingleAgentEscape(teammates="random", wrappers=[MoveOnlyActions], **SIZE)
    obs_m, _ = with_masks.reset(seed=5)
    without.reset(seed=5)
    for code in [0, 1, 2, 3, 4, 1, 1, 2, 0, 3]:
        assert with_masks.action_masks().tolist() == obs_m["action_mask"].astype(bool).tolist()
        assert with_masks.action_masks().tolist() == without.action_masks().tolist()
        obs_m, *_ = with_masks.step(code)
        without.step(code)


def test_maskable_ppo_learns_on_the_numeric_single_agent_env() -> None:
    sb3_contrib = pytest.importorskip("sb3_contrib", reason="needs pip install 'maze-envs[rl]'")
    env = SingleAgentEscape(
        preset="full",
        teammates="explorer",
        wrappers=[EscapeNumericObservation, MoveOnlyActions, EscapeActionMasks],
        width=5,
        height=5,
        max_turns=40,
    )
    model = sb3_contrib.MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=32, seed=0)
    model.learn(total_timesteps=128)
    observation, _ = env.reset(seed=2)
    for _ in range(20):
        mask = env.action_masks()
        action, _ = model.predict(observation, action_masks=mask)
        assert mask[int(action)]
        observation, _, terminated, truncated, _ = env.step(int(action))
        if terminated or truncated:
            break


def test_the_same_seed_gives_the_same_teammates_as_the_runner() -> None:
    """The runner's game of seed 7 with random agents, replayed through the wrapper (the
    learner A repeating the runner's A): the random teammates play the same moves, because both
    seed them by :func:`maze_envs.policies.seeds.policy_seeds` (issue 17)."""
    from maze_envs.bench.envs import EscapeAdapter
    from maze_envs.bench.spec import Experiment
    from maze_envs.policies import as_decision

    experiment = Experiment.model_validate(
        {"seeds": [7], "escape": {"preset": "full", "sizes": [6], "max_turns": 40,
                                  "policies": ["random"]}}
    )  # fmt: skip
    (task,) = experiment.tasks()
    adapter = EscapeAdapter(task, None)
    adapter.reset()
    learner_moves, digests = [], [adapter.env.state_digest()]
    while adapter.running:
        observations = adapter.observations()
        actions = {
            a: as_decision(adapter.policies[a].act(o)).action for a, o in observations.items()
        }
        learner_moves.append(actions["A"])
        adapter.step(actions)
        digests.append(adapter.env.state_digest())
    env = SingleAgentEscape(preset="full", width=6, height=6, max_turns=40, teammates="random")
    env.reset(seed=7)
    seeds = adapter.policy_seeds
    assert env.teammate_seeds() == {"B": seeds["B"], "C": seeds["C"]}
    replayed = [env.base_env.state_digest()]
    for move in learner_moves:
        env.step(move)
        replayed.append(env.base_env.state_digest())
    assert len(digests) > 10 and replayed == digests
