"""The EnvTraverse contract: description, JSON actions in, observation files out, terminal flag."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import maze_envs  # noqa: F401  (registers the environments)
import maze_envs.cli as cli
from maze_envs import maze_escape_v1
from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.agimaze.set_env import FAILED_MESSAGE, INITIAL_MESSAGE, SOLVED_FINAL_MESSAGE
from maze_envs.policies import agimaze_episode, escape_episode, make_policy
from maze_envs.text import agimaze_description, render_agimaze, render_escape
from wrappers.contract import SessionSpec, load_session, move, read_status, start_session
from wrappers.contract.cli import move_main, start_main, status_main

TUTORIAL = "TUTORIAL/STAGE-01/0000.json"
HIDDEN = "TRAINING/S0-keys/STAGE-01/0005.json"
#: The rows of the command table (maze_envs.cli.COMMANDS) that wrappers and llm_policies ship.
SHIPPED_COMMANDS = {
    ("contract", "start"): "wrappers.contract.cli:start_main",
    ("contract", "move"): "wrappers.contract.cli:move_main",
    ("contract", "status"): "wrappers.contract.cli:status_main",
    ("replay-decisions",): "llm_policies.apps.replay:main",
}


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def observations(root: Path) -> set[str]:
    return {p.name for p in (root / "observations").iterdir()}


def oracle_actions(path: str, seed: int = 0) -> list[str]:
    env = gym.make("maze_envs/AgiMaze-v0", path=path)
    obs, info = env.reset(seed=seed)
    policy = make_policy("oracle", "agimaze")
    policy.reset("player", 0, agimaze_episode(env, info, privileged=True))
    typed = AgiMazeObservation.from_env(obs, info, env=env)
    actions = []
    while True:
        chosen = policy.act(typed)
        action = str(getattr(chosen, "action", chosen))
        actions.append(action)
        obs, _, terminated, truncated, info = env.unwrapped.step_name(action)  # type: ignore[attr-defined]
        typed = AgiMazeObservation.from_env(obs, info, env=env, last_action=action)
        if terminated or truncated:
            return actions


def test_single_labyrinth_files_follow_the_live_environment(tmp_path: Path) -> None:
    spec = SessionSpec(env="agimaze", path=TUTORIAL)
    status = start_session(tmp_path, spec)
    env = gym.make("maze_envs/AgiMaze-v0", path=TUTORIAL)
    obs, info = env.reset(seed=0)
    obs_dir = tmp_path / "observations"
    description = (obs_dir / "environment_description.md").read_text()
    assert description == agimaze_description(agimaze_episode(env, info))
    assert status["terminal"] is False and status["budget"] == 150 and status["steps"] == 0
    assert observations(tmp_path) == {
        "environment_description.md",
        "state.txt",
        "map.txt",
        "message.md",
        "status.json",
    }
    assert (tmp_path / "CONTRACT.md").read_text().startswith("# Playing through files")
    actions = oracle_actions(TUTORIAL)
    for number, action in enumerate(actions, 1):
        status = move(tmp_path, json.dumps({"id": action}))
        obs, _, terminated, _, info = env.unwrapped.step_name(action)  # type: ignore[attr-defined]
        typed = AgiMazeObservation.from_env(obs, info, env=env, last_action=action)
        state = (obs_dir / "state.txt").read_text()
        assert state == render_agimaze(typed.model_copy(update={"map": None})) + "\n"
        assert (obs_dir / "map.txt").read_text() == obs["map"] + "\n"
        assert (obs_dir / "message.md").read_text() == obs["text"] + "\n"
        assert status["steps"] == number == info["steps"]
        assert json.loads((obs_dir / "status.json").read_text()) == status
        record = tmp_path / "history" / f"{number:04d}"
        assert json.loads((record / "action.json").read_text()) == {"id": action}
        assert (record / "state.txt").read_text() == state
    assert status["terminal"] is True and status["solved"] is True and terminated
    assert status["rhae"] == info["rhae"] and status["available_actions"] == []
    assert load_session(tmp_path) == (spec, actions)


def test_hidden_labyrinth_has_no_map_file(tmp_path: Path) -> None:
    start_session(tmp_path, SessionSpec(env="agimaze", path=HIDDEN, seed=3))
    assert "map.txt" not in observations(tmp_path)
    description = (tmp_path / "observations" / "environment_description.md").read_text()
    assert "Board: " in description and '{"id": "up"}' in description
    status = move(tmp_path, {"id": "down"})
    assert status["files"] == ["message.md", "state.txt"]


@pytest.mark.parametrize(
    ("request_text", "error"),
    [
        ("{not json", "not valid JSON"),
        ('["up"]', "an action is a JSON object"),
        ('{"move": "up"}', 'an action needs "id"'),
        ('{"id": "jump"}', "unknown action 'jump'; available: up, down, left, right"),
        ('{"id": "up", "speed": 2}', "unknown key(s) ['speed']"),
    ],
)
def test_bad_requests_exit_2_and_leave_the_workspace_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], request_text: str, error: str
) -> None:
    assert start_main(["--workspace", str(tmp_path), "--env", "agimaze", "--path", TUTORIAL]) == 0
    assert move_main(["--workspace", str(tmp_path), '{"id": "left"}']) == 0
    before = snapshot(tmp_path)
    capsys.readouterr()
    assert move_main(["--workspace", str(tmp_path), request_text]) == 2
    err = capsys.readouterr().err
    assert err.startswith("maze-envs contract move: error: ") and error in err
    assert snapshot(tmp_path) == before


def test_moving_after_the_end_and_missing_or_taken_workspaces_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = str(tmp_path / "w")
    assert start_main(["--workspace", workspace, "--env", "agimaze", "--path", TUTORIAL]) == 0
    for action in oracle_actions(TUTORIAL):
        assert move_main(["--workspace", workspace, json.dumps({"id": action})]) == 0
    before = snapshot(tmp_path)
    capsys.readouterr()
    assert move_main(["--workspace", workspace, '{"id": "up"}']) == 2
    assert "the session is terminal" in capsys.readouterr().err
    assert status_main(["--workspace", workspace]) == 0
    assert json.loads(capsys.readouterr().out)["terminal"] is True
    assert start_main(["--workspace", workspace, "--env", "agimaze", "--path", HIDDEN]) == 2
    assert "already holds a contract session" in capsys.readouterr().err
    assert snapshot(tmp_path) == before
    missing = str(tmp_path / "nowhere")
    assert move_main(["--workspace", missing, '{"id": "up"}']) == 2
    assert status_main(["--workspace", missing]) == 2
    assert "no contract session" in capsys.readouterr().err
    assert not (tmp_path / "nowhere").exists()
    bad = ["--workspace", missing, "--env", "agimaze", "--path", "NOPE/0.json"]
    assert start_main(bad) == 2
    assert "cannot open the labyrinth" in capsys.readouterr().err
    assert not (tmp_path / "nowhere").exists()
    assert start_main([*bad[:4], "--path", HIDDEN, "--force"]) == 0  # --force starts afresh
    assert (
        start_main(["--workspace", workspace, "--env", "agimaze", "--path", HIDDEN, "--force"]) == 0
    )
    assert read_status(workspace)["steps"] == 0 and not (Path(workspace) / "history/0001").exists()


def test_labyrinth_set_waits_for_start_and_sends_the_transition_messages(tmp_path: Path) -> None:
    spec = SessionSpec(env="agimaze-set", paths=[TUTORIAL, TUTORIAL], budget_factor=0.1)
    status = start_session(tmp_path, spec)
    obs_dir = tmp_path / "observations"
    assert status["files"] == ["message.md"] and status["waiting"] is True
    assert (obs_dir / "message.md").read_text() == INITIAL_MESSAGE + "\n"
    assert "2 labyrinth(s)" in (obs_dir / "environment_description.md").read_text()
    status = move(tmp_path, {"id": "up"})  # not available while waiting: no step used
    assert "is not available now" in (obs_dir / "message.md").read_text()
    status = move(tmp_path, {"id": "start"})
    assert status["files"] == ["labyrinth_description.md", "map.txt", "message.md", "state.txt"]
    state = (obs_dir / "state.txt").read_text()
    assert state.startswith("Labyrinth 1 of 2.\nStep 0 of 3.")
    description = (obs_dir / "labyrinth_description.md").read_text()
    assert description.startswith("You play a labyrinth") and '"start"' not in description
    for _ in range(3):  # a budget of 3 steps: the first labyrinth fails
        status = move(tmp_path, {"id": "down"})
    assert observations(tmp_path) == {"environment_description.md", "message.md", "status.json"}
    assert (obs_dir / "message.md").read_text() == FAILED_MESSAGE.replace(
        "five times", "0.1 times"
    ) + "\n"
    assert status["waiting"] is True and status["index"] == 1 and status["terminal"] is False
    move(tmp_path, {"id": "start"})
    assert (obs_dir / "state.txt").read_text().startswith("Labyrinth 2 of 2.")
    status = move(tmp_path, {"id": "start"})  # start while playing: refused by the env, no step
    assert "is not available in this labyrinth" in (obs_dir / "message.md").read_text()
    assert status["steps"] == 0
    for action in ["right", "up", "down"]:
        status = move(tmp_path, {"id": action})
    assert status["terminal"] is True and status["solved"] is False
    assert status["results"][0]["solved"] is False and len(status["results"]) == 2


def test_labyrinth_set_solved_to_the_end(tmp_path: Path) -> None:
    start_session(tmp_path, SessionSpec(env="agimaze-set", paths=[TUTORIAL]))
    move(tmp_path, {"id": "start"})
    for action in oracle_actions(TUTORIAL):
        status = move(tmp_path, {"id": action})
    message = (tmp_path / "observations" / "message.md").read_text()
    assert message == SOLVED_FINAL_MESSAGE + "\n"
    assert status["terminal"] is True and status["solved"] is True and status["solved_count"] == 1


def test_escape_single_agent_session_matches_a_live_game(tmp_path: Path) -> None:
    spec = SessionSpec(env="escape", width=5, height=5, max_turns=12, seed=5)
    start_session(tmp_path, spec)
    from maze_envs.escape.convert import observation_to_model
    from maze_envs.escape.types import Action
    from maze_envs.policies.seeds import agent_seed

    env = maze_escape_v1.parallel_env(preset="full", width=5, height=5, max_turns=12)
    raw, _ = env.reset(seed=5)
    mates = {}
    for index, name in enumerate(env.possible_agents[1:], 1):
        mates[name] = make_policy("explorer", "escape")
        mates[name].reset(name, agent_seed(5, index), escape_episode(env, name))
    description = (tmp_path / "observations" / "environment_description.md").read_text()
    assert "You are agent A." in description and "`explorer`" in description
    moves = ["N", "E", "S", "W", "STAY"] * 3
    status: dict[str, Any] = {}
    for turn, step in enumerate(moves):
        if not env.agents:
            break
        request = {"id": step, "radio": f"turn {turn}"} if turn % 6 == 0 else {"id": step}
        status = move(tmp_path, request)
        actions = {"A": Action(move=step, radio=request.get("radio"))}
        for name, policy in mates.items():
            chosen = policy.act(observation_to_model(raw[name], env.config, name))
            actions[name] = getattr(chosen, "action", chosen)
        raw, *_ = env.step(actions)
        typed = observation_to_model(raw["A"], env.config, "A")
        state = (tmp_path / "observations" / "state.txt").read_text()
        assert state == render_escape(typed, env.config) + "\n", f"turn {turn}"
    assert status["terminal"] is True and status["steps"] == 12
    assert "The game is over" in (tmp_path / "observations" / "message.md").read_text()


def test_escape_requests_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workspace = str(tmp_path)
    argv = ["--workspace", workspace, "--env", "escape", "--width", "5", "--height", "5"]
    assert start_main([*argv, "--set", "notebook_mode=rolling_log"]) == 0
    before = snapshot(tmp_path)
    for bad, error in [
        ('{"id": "UP"}', "unknown action 'UP'"),
        ('{"id": "N", "notebook": {"start": 0, "end": 0, "text": "x"}}', "notebook edits look"),
        ('{"id": "N", "radio": ""}', "invalid action for A: radio"),
    ]:
        assert move_main(["--workspace", workspace, bad]) == 2
        assert error in capsys.readouterr().err
    assert snapshot(tmp_path) == before
    assert move_main(["--workspace", workspace, '{"id": "N", "notebook": {"text": "hi"}}']) == 0
    assert "hi" in (tmp_path / "observations" / "state.txt").read_text()


def test_escape_every_agent_session(tmp_path: Path) -> None:
    spec = SessionSpec(env="escape", width=5, height=5, max_turns=4, agent=None)
    start_session(tmp_path, spec)
    state = (tmp_path / "observations" / "state.txt").read_text()
    assert [line for line in state.splitlines() if line.startswith("## Agent")] == [
        "## Agent A",
        "## Agent B",
        "## Agent C",
    ]
    with pytest.raises(ValueError, match="one action for each agent still playing"):
        move(tmp_path, {"A": {"id": "N"}})
    status = move(tmp_path, {"A": {"id": "N"}, "B": {"id": "S"}, "C": {"id": "STAY"}})
    assert status["controlled"] == ["A", "B", "C"] and status["steps"] == 1


def test_shipped_commands_route_list_and_answer_help_under_their_names(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert {w: cli.COMMANDS[w][0] for w in SHIPPED_COMMANDS} == SHIPPED_COMMANDS
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "contract  " in out and "replay-decisions" in out and "EnvTraverse contract" in out
    assert cli.main(["contract"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: maze-envs contract ")
    for word in ("start", "move", "status"):
        assert f"  {word} " in out
    for words in SHIPPED_COMMANDS:
        with pytest.raises(SystemExit) as exit_:
            cli.main([*words, "--help"])
        assert exit_.value.code == 0
        assert capsys.readouterr().out.startswith(f"usage: maze-envs {' '.join(words)} ")
    assert ("contract",) in cli.GROUPS and ("contract",) not in cli.COMMANDS
    workspace = str(tmp_path)
    assert cli.main(["contract", "start", "--workspace", workspace, "--env", "agimaze",
                     "--path", TUTORIAL]) == 0  # fmt: skip
    assert cli.main(["contract", "move", "--workspace", workspace, '{"id": "left"}']) == 0
    assert cli.main(["contract", "mvoe"]) == 2
    assert "did you mean 'move'?" in capsys.readouterr().err


def test_the_shipped_commands_run_in_a_subprocess(tmp_path: Path) -> None:
    paths = [str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "maze_envs", *args]
        return subprocess.run(command, capture_output=True, text=True, check=False, env=env)

    listing = run("--help")
    assert listing.returncode == 0 and "contract" in listing.stdout
    assert "replay-decisions" in listing.stdout
    assert run("replay-decisions", "--help").stdout.startswith("usage: maze-envs replay-decisions")
    workspace = str(tmp_path / "w")
    started = run(
        "contract", "start", "--workspace", workspace, "--env", "agimaze", "--path", HIDDEN
    )
    assert started.returncode == 0, started.stderr
    result = run("contract", "move", "--workspace", workspace, '{"id": "up"}')
    assert result.returncode == 0 and json.loads(result.stdout)["steps"] == 1
    bad = run("contract", "move", "--workspace", workspace, "{")
    assert bad.returncode == 2 and "not valid JSON" in bad.stderr
    status = run("contract", "status", "--workspace", workspace)
    assert json.loads(status.stdout)["steps"] == 1
    example = Path(__file__).resolve().parents[2] / "examples" / "contract_client.py"
    client = subprocess.run(
        [sys.executable, str(example), "--subprocess", "--max-actions", "2"],
        capture_output=True, text=True, check=False, env=env, timeout=120,
    )  # fmt: skip
    assert client.returncode == 0, client.stderr[-2000:]
    assert client.stdout.count("steps=") == 3


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--width", "2"], "--width 2: input should be greater than or equal to 5"),
        (["--height", "99"], "--height 99: input should be less than or equal to 41"),
        (["--set", "radio_max_bytes=-3"], "--set radio_max_bytes=-3: input should be greater"),
        (["--set", "bogus=1"], "--set bogus=1: not a Maze Escape config field"),
    ],
)
def test_a_bad_maze_escape_option_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    """Issue 23: not pydantic's raw 7-line error, but the option, its value and the rule."""
    workspace = str(tmp_path / "ws")
    assert start_main(["--workspace", workspace, "--env", "escape", *options]) == 2
    error = capsys.readouterr().err
    assert error.startswith("maze-envs contract start: error: cannot build the Maze Escape game: ")
    assert message in error and error.count("\n") == 1
    assert "pydantic" not in error and "validation error" not in error
    assert not (tmp_path / "ws" / "observations").exists()
