"""AgiMaze-v0 passes check_env and keeps every observation in its space on every pack family.

One case per TRAINING family, CLASSIC difficulty/mechanic, EXTENDED item and TUTORIAL stage of
the catalog: the family's first bundle through ``gymnasium.make`` (with ``render_mode="ansi"``),
and the family directory, where each reset draws another bundle and the action space is the
union of the family's actions.
"""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze.packs import list_bundles
from maze_envs.agimaze.packs.catalog import STAGES
from tests.agimaze.test_env import needs_packs, random_rollout


def pack_families() -> list[str]:
    """Pack directories, one per family of the catalog (each tutorial stage is its own)."""
    families = {
        stage.path if stage.group == "TUTORIAL" else f"{stage.group}/{stage.family}"
        for stage in STAGES
    }
    return sorted(families)


def test_every_group_has_families() -> None:
    groups = {family.split("/")[0] for family in pack_families()}
    assert groups == {"TUTORIAL", "TRAINING", "CLASSIC", "EXTENDED"}
    assert len(pack_families()) == 7 + 4 + 9 + 3


@needs_packs
@pytest.mark.parametrize("family", pack_families())
def test_check_env_and_random_play_on_every_family(family: str) -> None:
    names = list_bundles(family + "/")
    assert names, f"no bundles under {family}/"
    env = gym.make("maze_envs/AgiMaze-v0", path=names[0], render_mode="ansi").unwrapped
    check_env(env)
    random_rollout(env, seed=1, steps=200)
    assert isinstance(env.render(), str)
    # the whole family: a short budget so that the rollout draws several bundles
    drawn = gym.make("maze_envs/AgiMaze-v0", path=family, max_steps=8, render_mode="ansi")
    check_env(drawn.unwrapped)
    assert len({drawn.reset(seed=seed)[1]["name"] for seed in range(6)}) > 1
    random_rollout(drawn.unwrapped, seed=2, steps=300)
