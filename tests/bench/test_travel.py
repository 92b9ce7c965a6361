"""What travels between a Ray run's driver and its workers (maze_envs.bench.travel), without Ray:
a user's pack tree sent as bytes and read from a copy, a batch's own journal that leaves nothing
behind, the driver's services (start marks, objects that own the driver's files). The same
pieces on a real cluster whose worker node cannot see the driver's disk: test_cluster.py."""

from __future__ import annotations

import fcntl
import os
import pickle
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

import maze_envs.agimaze.packs as packs
from maze_envs.agimaze.packs import PACK_ROOT, PackPathError, bundle_files
from maze_envs.bench import travel
from maze_envs.bench.rollout import play
from maze_envs.bench.spec import Experiment
from maze_envs.bench.travel import RunServices, batch_journal, install_packs, ship_packs
from maze_envs.journal import Journal

IGNORED = {"elapsed_s", "game_id"}


@pytest.fixture
def node_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A node's temporary folder of the test's own, and no pack copies known yet."""
    folder = tmp_path / "node-tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setattr(packs, "_COPIES", {})
    monkeypatch.setattr(travel, "_INSTALLED", set())
    return folder


def user_packs(root: Path) -> Path:
    """A pack tree of the user's own: two shipped tutorial bundles under MINE/."""
    for name in ("0000.json", "0001.json"):
        target = root / "MINE" / "STAGE-01" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PACK_ROOT / "TUTORIAL" / "STAGE-01" / name, target)
    return root


def test_a_pack_tree_travels_as_bytes_and_plays_from_its_copy(
    tmp_path: Path, node_temp: Path
) -> None:
    root = user_packs(tmp_path / "driver" / "packs")
    experiment = Experiment.model_validate(
        {
            "seeds": "0",
            "agimaze": [{"packs": ["MINE"], "pack_root": str(root), "policies": ["explorer"]}],
        }
    )
    tasks = experiment.tasks()
    assert len(tasks) == 2
    with Journal(tmp_path / "driver.sqlite") as journal:
        on_driver = [play(task, journal) for task in tasks]
    copies = ship_packs(tasks, put=pickle.dumps)  # the object store: bytes
    (copy,) = copies
    assert copy.root == str(root)
    assert sorted(pickle.loads(copy.files)) == [
        "MINE/STAGE-01/0000.json",
        "MINE/STAGE-01/0001.json",
    ]
    # another node: the driver's tree is not there, only what was sent
    shutil.move(root, tmp_path / "elsewhere")
    install_packs(copies, get=pickle.loads)
    assert (node_temp / travel.PACKS_FOLDER / copy.digest / "MINE" / "STAGE-01").is_dir()
    with Journal(tmp_path / "worker.sqlite") as journal:
        on_worker = [play(task, journal) for task in tasks]
        configs = [game.config for game in journal.games()]
    assert [{k: v for k, v in r.items() if k not in IGNORED} for r in on_worker] == [
        {k: v for k, v in r.items() if k not in IGNORED} for r in on_driver
    ]
    assert all(row["status"] == "ok" for row in on_worker)
    assert {config["pack_root"] for config in configs} == {str(root)}  # the driver's path
    install_packs(copies, get=lambda _: pytest.fail("a node writes a copy once"))


def test_only_bundles_below_the_root_are_sent(tmp_path: Path) -> None:
    root = user_packs(tmp_path / "packs")
    with pytest.raises(PackPathError, match="only go down"):
        bundle_files(["../outside.json"], root)
    assert sorted(bundle_files(["MINE/STAGE-01/0001.json"], root)) == ["MINE/STAGE-01/0001.json"]


def test_a_batch_journal_leaves_nothing_on_the_node(node_temp: Path) -> None:
    experiment = Experiment.model_validate(
        {"seeds": "0", "escape": [{"sizes": [5], "max_turns": 5, "policies": ["random"]}]}
    )
    games = node_temp / travel.GAMES_FOLDER
    with batch_journal(True) as journal:
        row = play(experiment.tasks()[0], journal)
        journal.settle()
        rows = journal.stored_game(row["game_id"])
        assert Path(journal.path).parent == games
    assert len(rows.turns) == row["turns"] + 1
    assert list(games.iterdir()) == []  # the file, its -wal / -shm and its lock are gone
    with batch_journal(False) as journal:
        assert journal is None


def _left_by(games: Path, name: str, age_s: float) -> list[Path]:
    """The files a batch journal named ``name`` leaves, as old as ``age_s``."""
    files = [games / f"{name}{suffix}" for suffix in (".sqlite", ".sqlite-wal", ".lock")]
    for file in files:
        file.write_bytes(b"")
        os.utime(file, (time.time() - age_s, time.time() - age_s))
    return files


def test_the_next_batch_deletes_what_a_killed_worker_left(node_temp: Path) -> None:
    games = node_temp / travel.GAMES_FOLDER
    games.mkdir()
    dead = _left_by(games, "dead", age_s=3600)  # its worker was killed: nobody holds its lock
    young = _left_by(games, "young", age_s=0)  # just created: its lock may not be taken yet
    playing = _left_by(games, "playing", age_s=3600)  # a long batch, playing: lock held
    with playing[-1].open("rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        with batch_journal(True):
            pass
    assert not any(file.exists() for file in dead)
    assert all(file.exists() for file in young + playing)


class Counter:
    made = 0

    def __init__(self, name: str) -> None:
        Counter.made += 1
        self.name = name
        self.closed = False

    def hello(self, who: str) -> str:
        return f"{self.name} greets {who}"

    def close(self) -> None:
        self.closed = True


def test_the_drivers_services_keep_marks_and_one_object_per_key() -> None:
    services = RunServices()
    services.mark(3)
    assert services.started(3) and not services.started(4)
    Counter.made = 0
    assert services.call(Counter, ("a",), "hello", ("b",)) == "a greets b"
    assert services.call(Counter, ("a",), "hello", ("c",)) == "a greets c"
    services.call(Counter, ("z",), "hello", ("c",))
    assert Counter.made == 2  # one object per key, kept for the run
    objects: list[Any] = list(services._objects.values())
    services.close()
    assert all(made.closed for made in objects)


def test_driver_calls_need_a_ray_batch() -> None:
    with pytest.raises(RuntimeError, match="not playing a batch of a Ray run"):
        travel.driver_call(Counter, ("a",), "hello", "b")
