"""Built-in movers: they follow the policy interface and really solve mazes."""

from __future__ import annotations

from typing import Any

import pytest

from maze_envs import maze_escape_v0
from maze_envs.escape.convert import observation_to_model
from maze_envs.escape.types import LastActionResult, Observation
from maze_envs.policies import DepthFirstExplorer, Policy, RandomWalker
from maze_envs.policies.movers import EXIT_MESSAGE


def play(policy: type[DepthFirstExplorer] | type[RandomWalker], seed: int, **config: Any) -> Any:
    env = maze_escape_v0.parallel_env(**config)
    observations, _ = env.reset(seed=seed)
    team = {agent: policy() for agent in env.possible_agents}
    for number, (agent, member) in enumerate(team.items()):
        member.reset(agent, seed + number)
    radio_heard: list[str] = []
    while env.agents:
        models = {a: observation_to_model(observations[a], env.config, a) for a in env.agents}
        radio_heard += [text for m in models.values() for text in m.radio.values()]
        observations, *_ = env.step({a: team[a].act(models[a]) for a in env.agents})
    return env.outcome(), radio_heard


@pytest.mark.parametrize(("width", "height"), [(5, 5), (9, 6), (12, 12)])
def test_depth_first_explorer_finds_the_exit_within_a_full_traversal(
    width: int, height: int
) -> None:
    bound = 2 * (width * height - 1)  # a depth-first walk of a tree visits every cell by then
    announcements = 0
    for seed in range(4):
        outcome, radio = play(
            DepthFirstExplorer, seed, width=width, height=height, max_turns=bound + 1
        )
        assert outcome["success"], outcome
        assert all(t <= bound for t in outcome["first_visit_turn"].values())
        assert sum(outcome["wall_bumps"].values()) == 0
        # each agent says so once, the turn after its visit; two teammates hear it next turn
        visits = outcome["first_visit_turn"].values()
        assert radio.count(EXIT_MESSAGE) == 2 * sum(v + 1 < outcome["turns"] for v in visits)
        announcements += radio.count(EXIT_MESSAGE)
    assert announcements > 0


def test_random_walker_never_walks_into_a_wall() -> None:
    outcome, _ = play(RandomWalker, 3, width=8, height=8, max_turns=300)
    assert sum(outcome["moves"].values()) > 100
    assert sum(outcome["wall_bumps"].values()) == 0


@pytest.mark.parametrize("policy", [DepthFirstExplorer, RandomWalker])
def test_movers_are_policies_and_deterministic_per_seed(policy: Any) -> None:
    assert isinstance(policy(), Policy)
    first = play(policy, 5, width=10, height=10, max_turns=80)
    assert play(policy, 5, width=10, height=10, max_turns=80) == first


def _observation(open_edges: str, move: str = "none", on_exit: bool = False) -> Observation:
    return Observation(
        edges={d: "open" if d in open_edges else "interior_wall" for d in "NESW"},  # type: ignore[misc]
        on_exit=on_exit,
        landmark=None,
        turn=0,
        turns_left=10,
        notebook="",
        radio={},
        teammate_notebooks={},
        last_action=LastActionResult(
            move=move,  # type: ignore[arg-type]
            notebook="none",
            notebook_reason="",
            radio="none",
            radio_reason="",
            radio_cooldown=0,
        ),
    )


def test_explorer_trusts_only_confirmed_moves() -> None:
    explorer = DepthFirstExplorer()
    explorer.reset("A", seed=0)
    assert explorer.act(_observation("N")).move == "N"
    # the move was refused: the explorer is still at its start and never tries north again
    assert explorer.act(_observation("N", move="bumped_interior_wall")).move == "STAY"
    explorer.reset("A", seed=0)
    assert explorer.act(_observation("N")).move == "N"
    # confirmed: now in a dead end whose only open edge leads back south
    assert explorer.act(_observation("S", move="moved")).move == "S"
    assert explorer.act(_observation("NE", move="moved")).move == "E"


def test_movers_stay_on_the_exit_and_announce_it_once() -> None:
    for mover in (DepthFirstExplorer(), RandomWalker()):
        mover.reset("B", seed=1)
        first = mover.act(_observation("NESW", on_exit=True))
        assert (first.move, first.radio) == ("STAY", EXIT_MESSAGE)
        later = mover.act(_observation("NESW", move="stayed"))
        assert (later.move, later.radio) == ("STAY", None)
