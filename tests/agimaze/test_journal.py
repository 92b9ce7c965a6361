"""Journaled AGI Maze episodes: the stored format, replay/verify guarantees, both envs in a file."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs import maze_escape_v0
from maze_envs.agimaze import recording
from maze_envs.agimaze.api import HttpBackend
from maze_envs.agimaze.compiled import PlayerState
from maze_envs.agimaze.env import AgiMazeEnv
from maze_envs.agimaze.packs import DEFAULT_PACK_VERSION, pack_root
from maze_envs.agimaze.planner import solve
from maze_envs.agimaze.replay import env_from_config
from maze_envs.agimaze.set_env import AgiMazeSetEnv
from maze_envs.journal import Journal, JournalError
from maze_envs.verify import main as verify_main
from maze_envs.verify import verify_journal
from tests.agimaze.test_env import corridor, extended, generated, needs_packs
from tests.journal.faults import inject
from tests.journal.tamper import delete_turns, edit_turn, run_sql

BUNDLE = "TRAINING/S0-keys/STAGE-01/0005.json"


def play(env: Any, names: list[str]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Step by name; return (observation, info) of each step."""
    seen = []
    for name in names:
        obs, _, terminated, truncated, info = env.unwrapped.step_name(name)
        seen.append((obs, info))
        if terminated or truncated:
            break
    return seen


def stored(path: Path) -> tuple[list[Any], dict[int, list[Any]]]:
    with Journal(path, readonly=True) as journal:
        games = journal.games()
        return games, {g.id: list(journal.turns(g.id)) for g in games}


@needs_packs
def test_the_rows_hold_narration_formal_inventory_and_action(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    env = gym.make("maze_envs/AgiMaze-v0", path=BUNDLE, journal=path)
    obs0, info0 = env.reset(seed=7)
    names = ["up", "left", "down", "right", "right"]
    seen = play(env, names)
    env.close()
    (game,), turns = stored(path)
    assert game.env_id == "maze_envs/AgiMaze-v0" and game.seed == 7
    assert game.config == {
        "path": BUNDLE,
        "labyrinth": None,
        "budget_factor": 5.0,
        "max_steps": None,
        "pack_root": None,
        "pack_version": DEFAULT_PACK_VERSION,  # the version played, by name
    }
    # journals written while the env had reward_shaping= still rebuild (the key is ignored)
    assert isinstance(env_from_config(game.config | {"reward_shaping": True}), AgiMazeEnv)
    rows = turns[game.id]
    assert [t.turn for t in rows] == [0, 1, 2, 3, 4, 5]
    assert rows[0].actions == {}
    assert rows[0].events == {
        "player": {
            "action": None,
            "name": BUNDLE,
            "text": "Game has started.",
            "formal": info0["formal"],
            "inventory": {},
            "steps": 0,
            "solved": False,
            "error": None,
        }
    }
    assert rows[0].observations == {"player": json.loads(json.dumps(_plain(obs0)))}
    actions = env.unwrapped.action_names
    for row, name, (obs, info) in zip(rows[1:], names, seen, strict=True):
        assert row.actions == {"player": actions.index(name)}
        assert row.events == {
            "player": {
                "action": name,
                "text": obs["text"],
                "formal": info["formal"],
                "inventory": info["formal"]["inventory"],
                "steps": info["steps"],
                "solved": info["solved"],
                "error": None,
            }
        }
        assert row.observations == {"player": _plain(obs)}
    assert game.outcome == {
        "name": BUNDLE,
        "solved": False,
        "steps": 5,
        "max_steps": 70,
        "budget": 350,
        "rhae": 0.0,
        "aborted": True,
        "turns": 5,
    }
    (report,) = verify_journal(path)
    assert report.describe() == "game 1: ok, 6 turns verified (abandoned before its end)"


def _plain(obs: dict[str, Any]) -> Any:
    """An observation as JSON data (numpy values as numbers and lists)."""
    from maze_envs.journal import decode_json, encode_json

    return decode_json(encode_json(obs))


def test_solved_and_truncated_episodes_verify_with_their_outcomes(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    lab = generated()
    plan = solve(lab)
    assert plan is not None
    env = AgiMazeEnv(labyrinth=lab, journal=path)
    env.reset(seed=1)
    seen = play(env, plan)
    assert seen[-1][1]["solved"] is True
    env.reset(seed=2)  # out of budget: max_steps 2, factor 1
    env.close()
    short = AgiMazeEnv(labyrinth=lab, max_steps=2, budget_factor=1.0, journal=path)
    short.reset(seed=3)
    play(short, ["up"] * 5)
    short.close()
    reports = verify_journal(path)
    assert [(r.status, r.turns_verified) for r in reports] == [
        ("ok", len(plan) + 1),
        ("aborted", 1),
        ("ok", 3),
    ]
    games, _ = stored(path)
    assert games[0].outcome is not None and games[0].outcome["solved"] is True
    assert games[0].outcome["rhae"] == 1.0 and games[0].outcome["turns"] == len(plan)
    assert games[1].outcome == {**games[1].outcome, "aborted": True, "steps": 0, "turns": 0}
    assert games[2].outcome is not None
    assert (games[2].outcome["solved"], games[2].outcome["budget"]) == (False, 2)
    assert games[2].config["labyrinth"] == {"labyrinth": lab.model_dump(mode="json")}


def test_actions_the_labyrinth_lacks_are_recorded_and_replayed(tmp_path: Path) -> None:
    """A directory's action union may offer actions a bundle lacks: not played, but a turn."""
    path = tmp_path / "games.sqlite"
    env = AgiMazeEnv(labyrinth=extended(), journal=path)
    env.reset(seed=4)
    names = [n for n in env.action_names if n.startswith(("look_", "bomb_"))]
    play(env, [*names, "up", "down"])
    env.close()
    (report,) = verify_journal(path)
    assert (report.status, report.turns_verified) == ("aborted", len(names) + 3)


@needs_packs
def test_directory_draws_and_seedless_resets_replay(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    env = gym.make("maze_envs/AgiMaze-v0", path="TRAINING/S0-keys/STAGE-01", journal=path)
    env.reset(seed=11)
    rng = np.random.default_rng(0)
    for _ in range(4):  # resets without a seed draw one, and the journal stores it
        for _ in range(6):
            _, _, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
            if terminated or truncated:
                break
        env.reset()
    env.close()
    games, _ = stored(path)
    assert len(games) == 5 and games[0].seed == 11
    assert all(isinstance(g.seed, int) for g in games)
    assert len({g.outcome["name"] for g in games if g.outcome}) > 1  # different bundles drawn
    assert all(r.ok for r in verify_journal(path))
    # the same seeds draw the same bundles again
    again = gym.make("maze_envs/AgiMaze-v0", path="TRAINING/S0-keys/STAGE-01")
    names = []
    for game in games:
        _, info = again.reset(seed=game.seed)
        names.append(info["name"])
    assert names == [g.outcome["name"] for g in games if g.outcome]


@needs_packs
def test_a_pack_root_is_stored_and_used_by_the_replay(tmp_path: Path) -> None:
    root = tmp_path / "packs"
    target = root / "MINE" / "0001.json"
    target.parent.mkdir(parents=True)
    shutil.copyfile(pack_root() / BUNDLE, target)
    path = tmp_path / "games.sqlite"
    env = AgiMazeEnv(path="MINE/0001.json", pack_root=root, journal=path)
    env.reset(seed=0)
    play(env, ["right", "down"])
    env.close()
    (game,), _ = stored(path)
    assert game.config["pack_root"] == str(root)
    assert [r.status for r in verify_journal(path)] == ["aborted"]
    shutil.rmtree(root)  # the replay needs the pack root it was played from
    (report,) = verify_journal(path)
    assert report.problem is not None
    assert (report.problem.turn, report.problem.kind) == (0, "replay_error")


def test_the_http_backend_refuses_a_journal(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    with pytest.raises(ValueError, match="journal= needs the local backend"):
        AgiMazeEnv(path=BUNDLE, backend=HttpBackend("http://127.0.0.1:9"), journal=path)
    assert not path.exists()


def _forge(path: Path, game_id: int, turn: int, column: str, change: Any) -> None:
    """Edit one stored part of one turn and make every record hash again (a consistent
    forgery: only the replay finds it)."""

    def forged(text: str) -> str:
        return json.dumps(change(json.loads(text)))

    edit_turn(path, game_id, turn, column, forged, rehash=True)


def _journal_of_two(path: Path) -> None:
    lab = generated()
    plan = solve(lab)
    assert plan is not None
    env = AgiMazeEnv(labyrinth=lab, journal=path)
    for seed in (1, 2):
        env.reset(seed=seed)
        play(env, plan)
    env.close()


def _set_text(events: dict[str, Any]) -> dict[str, Any]:
    events.setdefault("player", {})["text"] = "You found a secret door."  # (what changed)
    return events


def _set_action(actions: dict[str, Any]) -> dict[str, Any]:
    actions["player"] = (actions["player"] + 1) % 4
    return actions


def _set_observed_text(observations: dict[str, Any]) -> dict[str, Any]:
    observations.setdefault("player", {})["text"] = "You found a secret door."
    return observations


@pytest.mark.parametrize(
    ("column", "change", "kind"),
    [
        ("events", _set_text, "mismatch"),
        ("actions", _set_action, "mismatch"),
        ("observations", _set_observed_text, "mismatch"),
    ],
)
def test_forged_rows_are_caught_by_the_replay(
    tmp_path: Path, column: str, change: Any, kind: str
) -> None:
    path = tmp_path / "games.sqlite"
    _journal_of_two(path)
    _forge(path, 2, 3, column, change)
    first, second = verify_journal(path)
    assert first.ok
    assert second.problem is not None
    assert (second.problem.turn, second.problem.kind) == (3, kind), second.describe()
    assert second.turns_verified == 3


def test_edited_rows_missing_turns_and_outcomes_are_found(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    _journal_of_two(path)
    # an edit without making the hashes again, and a lost middle turn (turn 1 stores its
    # formal events in full; later turns what changed)
    edit_turn(path, 1, 1, "events", lambda text: text.replace("moved", "flew"))
    delete_turns(path, 2, 4, 4)
    first, second = verify_journal(path)
    assert first.problem is not None and second.problem is not None
    assert (first.problem.turn, first.problem.kind) == (1, "mismatch")
    assert (second.problem.turn, second.problem.kind) == (4, "missing")
    # turns cut off the end while the outcome still claims them
    _journal_of_two(tmp_path / "tail.sqlite")
    _, turns = stored(tmp_path / "tail.sqlite")
    last = len(turns[1]) - 1
    delete_turns(tmp_path / "tail.sqlite", 1, last - 1)
    run_sql(
        tmp_path / "tail.sqlite",
        "UPDATE games SET outcome = json_set(outcome, '$.rhae', 0.5) WHERE id = 2",
    )
    first, second = verify_journal(tmp_path / "tail.sqlite")
    assert first.problem is not None
    assert (first.problem.turn, first.problem.kind) == (last - 1, "missing")
    assert f"reached turn {last}" in first.problem.reason
    assert second.problem is not None and "outcome differs" in second.problem.reason


def test_the_state_digest_covers_every_part_of_the_engine_state() -> None:
    base: dict[str, Any] = {
        "name": "x",
        "steps": 3,
        "limit": 10,
        "max_steps": 2,
        "over": False,
        "solved": False,
    }
    state = PlayerState((1, 2))
    variants = [
        state,
        PlayerState((2, 1)),
        PlayerState((1, 2), key=True),
        PlayerState((1, 2), treasure=True),
        PlayerState((1, 2), exit_key=True),
        PlayerState((1, 2), boat=True),
        PlayerState((1, 2), flashlight=True),
        PlayerState((1, 2), grenades=1),
        PlayerState((1, 2), packs_taken=1),
        PlayerState((1, 2), blown=frozenset({4})),
        PlayerState((1, 2), won=True),
        None,
    ]
    digests = {recording.state_digest(**base, state=s) for s in variants}
    for field, value in (
        ("name", "y"),
        ("steps", 4),
        ("limit", 11),
        ("max_steps", 3),
        ("over", True),
        ("solved", True),
    ):
        digests.add(recording.state_digest(**{**base, field: value}, state=state))
    assert len(digests) == len(variants) + 6
    # equal states give equal digests (blown walls as a set, whatever their order)
    a = PlayerState((0, 0), blown=frozenset({3, 1, 2}))
    b = PlayerState((0, 0), blown=frozenset({2, 3, 1}))
    assert recording.state_digest(**base, state=a) == recording.state_digest(**base, state=b)


@pytest.mark.parametrize("durability", ["turn", "batch"])
def test_a_journal_failure_stops_the_episode(
    tmp_path: Path, durability: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from maze_envs.journal import batch

    monkeypatch.setattr(batch, "BATCH_ROWS", 3)  # batch: turns 0-2 are committed by play()
    path = tmp_path / "games.sqlite"
    with Journal(path, durability=durability) as journal:
        faults = inject(journal)
        env = AgiMazeEnv(labyrinth=generated(), journal=journal)
        env.reset(seed=1)
        play(env, ["up", "down"])
        assert journal.committed_turn(1) == 2
        faults.fail["INSERT INTO turns"] = "disk I/O error"
        with pytest.raises(JournalError, match=r"cannot write turns? 3.* of game 1 .*disk I/O"):
            env.unwrapped.step_name("left")
            if durability == "batch":
                env.unwrapped.step_name("left")  # turn 3 waited in the batch: raises here
                env.unwrapped.step_name("left")
        faults.fail.clear()
        digest = env.state_digest()
        with pytest.raises(JournalError, match="no longer being recorded"):
            env.unwrapped.step_name("left")
        assert env.state_digest() == digest
        env.reset(seed=2)
        play(env, ["up"])
        env.close()
        first, _ = journal.games()
        assert first.outcome is not None and first.outcome["turns"] == 2
        assert first.turn_count == 3
    reports = verify_journal(path)
    if durability == "turn":  # the lost turn 3 was never returned: nothing returned is missing
        assert [(r.status, r.turns_verified) for r in reports] == [("aborted", 3), ("aborted", 2)]
    else:  # turns 3 and 4 were returned by their steps, then lost with the batch: never ok
        assert first.outcome["turns_played"] == 4
        assert [(r.status, r.turns_verified) for r in reports] == [("failed", 3), ("aborted", 2)]
        problem = reports[0].problem
        assert problem is not None and problem.turn == 3 and problem.kind == "missing"
        assert problem.reason.startswith("turns 3-4 were played but never stored")


def _random_set_game(env: AgiMazeSetEnv, seed: int, steps: int) -> None:
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    for _ in range(steps):
        _, _, terminated, _, _ = env.step(int(rng.integers(env.action_space.n)))
        if terminated:
            break


def test_labyrinth_set_episodes_are_journaled_and_verified(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    labs = [corridor(), corridor(open_map=True), generated()]
    env = AgiMazeSetEnv(labyrinths=labs, journal=path)
    _random_set_game(env, 1, 3000)  # plays to the end
    _random_set_game(env, 2, 25)  # abandoned by close()
    env.close()
    reports = verify_journal(path)
    assert [r.status for r in reports] == ["ok", "aborted"]
    games, turns = stored(path)
    assert games[0].env_id == "maze_envs/AgiMazeSet-v0"
    assert games[0].outcome is not None and games[0].outcome["labyrinths"] == 3
    assert len(games[0].outcome["results"]) == 3
    assert reports[1].turns_verified == 26
    first = turns[1]
    assert first[0].events["player"]["action"] is None
    assert first[0].events["player"]["waiting"] is True
    start = next(t for t in first if t.events["player"]["action"] == "start")
    assert start.events["player"]["text"] == "Game has started."
    # a forged step is found
    _forge(path, 1, 5, "actions", lambda a: {"player": (a["player"] + 1) % 5})
    report = verify_journal(path)[0]
    assert report.problem is not None and report.problem.turn == 5


def test_one_file_holds_both_environments_and_verify_replays_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "games.sqlite"
    with Journal(path) as journal:
        escape = maze_escape_v0.parallel_env(width=6, height=6, max_turns=6, journal=journal)
        escape.reset(seed=1)
        while escape.agents:
            escape.step({a: escape.action_space(a).sample() for a in escape.agents})
        escape.close()
        maze = AgiMazeEnv(labyrinth=generated(), journal=journal)
        maze.reset(seed=2)
        play(maze, ["up", "right", "down"])
        maze.close()
        labyrinths = AgiMazeSetEnv(labyrinths=[corridor()], journal=journal)
        labyrinths.reset(seed=3)
        for name in ("up", "start", "right", "right", "right"):
            labyrinths.step_name(name)
        labyrinths.close()
    assert verify_main([str(path)]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if re.match(r"^ +\d  ", line)]
    assert [line.split()[1] for line in rows] == [
        "maze_envs/MazeEscape-v0",
        "maze_envs/AgiMaze-v0",
        "maze_envs/AgiMazeSet-v0",
    ]
    assert rows[0].endswith("ok, 7 turns verified")
    assert rows[1].endswith("ok, 4 turns verified (abandoned before its end)")
    assert rows[2].endswith("ok, 6 turns verified")
    assert "3 of 3 game(s) verified" in out
    _forge(path, 2, 2, "events", _set_text)
    assert verify_main([str(path)]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^ +2  maze_envs/AgiMaze-v0 .* FAILED at turn 2 \(mismatch\)", out, re.M)
    assert "2 of 3 game(s) verified" in out
