"""Pack versions: the default packs, the earlier version by name, and journals that replay on
the version they were played on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import gymnasium as gym
import numpy as np
import orjson
import pytest

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze import recording
from maze_envs.agimaze.api import HttpBackend
from maze_envs.agimaze.packs import (
    DEFAULT_PACK_VERSION,
    PackPathError,
    resolve_pack_path,
    version_root,
)
from maze_envs.agimaze.planner import dead_states, solve
from maze_envs.journal import Journal
from maze_envs.verify import verify_journal

TRAP = "TRAINING/S3-full/STAGE-01/0004.json"  # a river trap in agimaze-packs-2


def test_the_earlier_packs_play_by_name_and_differ_from_the_default() -> None:
    old = gym.make("maze_envs/AgiMaze-v0", path=TRAP, pack_version="agimaze-packs-2")
    new = gym.make("maze_envs/AgiMaze-v0", path=TRAP)
    old.reset(seed=0)
    new.reset(seed=0)
    old_lab = old.unwrapped.backend.labyrinth
    new_lab = new.unwrapped.backend.labyrinth
    assert old_lab == resolve_pack_path(TRAP, root=version_root("agimaze-packs-2"))[1].labyrinth
    assert old_lab != new_lab
    assert not dead_states(old_lab).live.all() and dead_states(new_lab).live.all()
    explicit = gym.make("maze_envs/AgiMaze-v0", path=TRAP, pack_version=DEFAULT_PACK_VERSION)
    explicit.reset(seed=0)
    assert explicit.unwrapped.backend.labyrinth == new_lab


def test_a_pack_version_is_checked() -> None:
    with pytest.raises(PackPathError, match="no pack version 'agimaze-packs-0'"):
        gym.make("maze_envs/AgiMaze-v0", path=TRAP, pack_version="agimaze-packs-0")
    with pytest.raises(ValueError, match="pack_root= or pack_version="):
        gym.make("maze_envs/AgiMaze-v0", path=TRAP, pack_version="agimaze-packs-2", pack_root=".")
    with pytest.raises(ValueError, match="pack_version= is for the local backend"):
        gym.make(
            "maze_envs/AgiMaze-v0",
            path=TRAP,
            pack_version="agimaze-packs-2",
            backend=HttpBackend("http://127.0.0.1:9"),
        )


def test_a_labyrinth_set_plays_an_earlier_version() -> None:
    env = gym.make("maze_envs/AgiMazeSet-v0", target=TRAP, pack_version="agimaze-packs-2")
    env.reset(seed=0)
    env.unwrapped.step_name("start")
    for _ in range(7):  # each tutorial: play its plan, then start the next
        lab = env.unwrapped.labyrinth
        plan = solve(lab)
        assert plan is not None
        for action in plan:
            env.unwrapped.step_name(action)
        env.unwrapped.step_name("start")
    assert (
        env.unwrapped.labyrinth
        == resolve_pack_path(TRAP, root=version_root("agimaze-packs-2"))[1].labyrinth
    )


def test_journals_replay_on_the_version_they_were_played_on(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    for version in (None, "agimaze-packs-2"):
        env = gym.make("maze_envs/AgiMaze-v0", path=TRAP, journal=str(path), pack_version=version)
        env.reset(seed=1)
        for action in solve(env.unwrapped.backend.labyrinth) or []:
            env.unwrapped.step_name(action)
        env.close()
    with Journal(path, readonly=True) as journal:
        versions = [journal.game(i).config["pack_version"] for i in journal.game_ids()]
    # the default is recorded by name, so the game replays after the default moves on
    assert versions == [DEFAULT_PACK_VERSION, "agimaze-packs-2"]
    assert all(report.ok for report in verify_journal(path))


def test_journals_from_before_pack_versions_replay_on_the_earlier_packs(tmp_path: Path) -> None:
    """A journal written before configs named their pack version (no ``pack_version`` key)
    played the packs of that time, agimaze-packs-2: it still verifies."""
    path = tmp_path / "games.sqlite"
    env = gym.make(
        "maze_envs/AgiMaze-v0", path=TRAP, journal=str(path), pack_version="agimaze-packs-2"
    )
    env.reset(seed=0)
    for action in solve(env.unwrapped.backend.labyrinth) or []:
        env.unwrapped.step_name(action)
    env.close()
    with sqlite3.connect(path) as db:  # drop the key, as an old journal's config lacks it
        for game_id, config in db.execute("SELECT id, config FROM games").fetchall():
            data = orjson.loads(config)
            del data["pack_version"]
            text = orjson.dumps(data).decode()
            db.execute("UPDATE games SET config = ? WHERE id = ?", (text, game_id))
    assert recording.config_pack_version({"path": TRAP}) == recording.LEGACY_PACK_VERSION
    assert recording.config_pack_version({"path": TRAP, "pack_root": "/x"}) is None
    assert recording.config_pack_version({"labyrinth": {}}) is None
    assert recording.config_pack_version({"paths": None, "labyrinths": None}) == "agimaze-packs-2"
    assert all(report.ok for report in verify_journal(path))


def test_the_server_serves_a_pack_version_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    from maze_envs.agimaze.api.server import main as serve_main
    from maze_envs.agimaze.api.server import pack_resolver

    rng = np.random.default_rng(0)
    old = pack_resolver(pack_version="agimaze-packs-2")(TRAP, rng)[1].labyrinth
    assert old == resolve_pack_path(TRAP, root=version_root("agimaze-packs-2"))[1].labyrinth
    assert pack_resolver()(TRAP, rng)[1].labyrinth == resolve_pack_path(TRAP)[1].labyrinth != old
    for argv in (["--pack-version", "agimaze-packs-9"], ["--pack-version", "agimaze-packs-2",
                 "--pack-root", "."]):  # fmt: skip
        with pytest.raises(SystemExit) as exit_info:
            serve_main(argv)
        assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "agimaze-packs-2" in err and "not both" in err
