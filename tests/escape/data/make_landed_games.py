"""Writes ``landed_games.sqlite.gz`` and ``landed_forms.json.gz``: Maze Escape games recorded by the
code as it was *before* the observation path was rewritten (issue 16/17), and what that code
made of each observation (typed JSON form, text, numeric encodings). Kept so
``tests/escape/test_landed_games.py`` can prove that games recorded before the change still
replay and that every observation and every form derived from it is unchanged.

It was run once, against the landed tree (commit 523ff78), as::

    PYTHONPATH=/work/main python tests/escape/data/make_landed_games.py tests/escape/data

Running it again against a later tree would only record that tree's behaviour, which is not the
point: do not regenerate the files unless the recorded format is meant to change.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from maze_envs import maze_escape_v0, maze_escape_v1
from maze_envs.escape.types import Action, AppendEdit, Observation, SpliceEdit
from maze_envs.journal import Journal
from maze_envs.text import render_escape
from wrappers.escape_numeric import EscapeNumericObservation

SMALL_NOTES: dict[str, Any] = {
    "notebook_max_bytes": 200,
    "notebook_turn_bytes": 40,
    "max_turns": 40,
}
#: Games played by a walker that heads for the exit (so some end in team success).
GREEDY = {23, 24}
#: (env module, overrides, turns, seed): every optional feature alone and together, both layout
#: versions, both notebook modes, one to four agents, and limits small enough to be hit.
GAMES: list[tuple[Any, dict[str, Any], int, int]] = [
    (maze_escape_v0, {"preset": "sparse", "width": 6, "height": 5}, 30, 11),
    (maze_escape_v1, {"preset": "sparse", "width": 6, "height": 5}, 30, 12),
    (maze_escape_v0, {"preset": "navigator", "width": 7, "height": 7, **SMALL_NOTES}, 40, 13),
    (maze_escape_v1, {"preset": "navigator", "width": 7, "height": 7, **SMALL_NOTES}, 40, 14),
    (maze_escape_v0, {"preset": "shared_frame", "width": 5, "height": 6}, 30, 15),
    (maze_escape_v1, {"preset": "shared_frame", "width": 5, "height": 6}, 30, 16),
    (
        maze_escape_v0,
        {"preset": "full", "width": 5, "height": 5, "num_agents": 4, **SMALL_NOTES},
        40,
        17,
    ),
    (
        maze_escape_v1,
        {"preset": "full", "width": 5, "height": 5, "num_agents": 4, **SMALL_NOTES},
        40,
        18,
    ),
    (
        maze_escape_v1,
        {
            "preset": "full",
            "width": 6,
            "height": 6,
            "coordinates": "absolute",
            "trail_length": 4,
            "notebook_max_bytes": 64,
            "notebook_turn_bytes": 24,
            "radio_max_bytes": 12,
            "radio_cooldown": 0,
            "reward_mode": "team_sparse",
            "max_turns": 35,
        },
        35,
        19,
    ),
    (
        maze_escape_v0,
        {
            "preset": "navigator",
            "width": 5,
            "height": 5,
            "num_agents": 2,
            "notebook_max_bytes": 40,
            "notebook_turn_bytes": 20,
            "radio": False,
            "trail_length": 2,
            "max_turns": 30,
        },
        30,
        20,
    ),
    (maze_escape_v1, {"width": 5, "height": 5, "num_agents": 1, "used_exits": True}, 25, 21),
    (
        maze_escape_v1,
        {
            "width": 8,
            "height": 5,
            "num_agents": 2,
            "maze_algorithm": "backtracker",
            "meeting_alert": True,
            "coordinates": "own",
            "trail_length": 1,
            "distance_sensor": False,
        },
        30,
        22,
    ),
    (maze_escape_v1, {"preset": "full", "width": 5, "height": 5, "max_turns": 60}, 60, 23),
    (maze_escape_v0, {"preset": "navigator", "width": 5, "height": 6, **SMALL_NOTES}, 40, 24),
]
WORDS = ["tree", "dead end", "N S", "exit?", "→ back", "日本", "a much longer note than fits"]


def choose_action(rng: np.random.Generator, splice: bool, notebook: str, typed: bool) -> Any:
    """A random action that exercises every rule: moves, valid/rejected edits, radio."""
    move = int(rng.integers(0, 5))
    roll = rng.random()
    text = str(rng.choice(WORDS))
    size = len(notebook)
    if splice:
        if roll < 0.35:
            edit = (0, 0, text)
        elif roll < 0.45:
            edit = (size, size, text + "\n")
        elif roll < 0.55:
            edit = (0, size + 3, "")  # past the end: rejected with a reason
        elif roll < 0.6:
            edit = (2, 1, "x")  # start > end: rejected
        else:
            edit = None
    else:
        edit = text if roll < 0.6 else None
    radio = str(rng.choice(WORDS)) if rng.random() < 0.35 else ""
    if typed:
        notebook_model: SpliceEdit | AppendEdit | None = None
        if isinstance(edit, tuple):
            notebook_model = SpliceEdit(start=edit[0], end=edit[1], text=edit[2])
        elif edit:
            notebook_model = AppendEdit(text=edit)
        names = ["N", "E", "S", "W", "STAY"]
        return Action(move=names[move], notebook=notebook_model, radio=radio or None)  # type: ignore[arg-type]
    if splice:
        nb: dict[str, Any] = (
            {"edit": 1, "start": edit[0], "end": edit[1], "text": edit[2]}
            if isinstance(edit, tuple)
            else {"edit": 0, "start": 0, "end": 0, "text": ""}
        )
    else:
        nb = {"append": edit or ""}
    return {"move": move, "notebook": nb, "radio": radio}


def greedy_move(env: Any, agent: str, rng: np.random.Generator) -> int:
    """A move towards the exit (a random one one time in five), read from the landed board."""
    board, state = env._board, env._state
    here = state.positions[env.possible_agents.index(agent)]
    if rng.random() < 0.2:
        return int(rng.integers(0, 5))
    best = min(
        range(4),
        key=lambda m: (
            board.exit_path[board.step_to[here][m]] if board.step_to[here][m] >= 0 else 99
        ),
    )
    return best


def forms(env: Any, numeric: list[Any], observations: dict[str, Any]) -> dict[str, Any]:
    """What the landed code derives from each agent's observation."""
    out: dict[str, Any] = {}
    for agent, obs in observations.items():
        model = Observation.from_space(obs, env.config, agent)
        entry: dict[str, Any] = {
            "typed": model.model_dump(mode="json"),
            "text": render_escape(model, env.config),
        }
        for name, wrapper in numeric:
            encoded = wrapper.encode([obs])[0]
            entry[name] = (
                encoded.tolist()
                if isinstance(encoded, np.ndarray)
                else {k: np.asarray(v).tolist() for k, v in encoded.items()}
            )
        out[agent] = entry
    return out


def main(folder: str) -> None:
    out = Path(folder)
    journal_path = out / "landed_games.sqlite"
    journal_path.unlink(missing_ok=True)
    recorded: list[dict[str, Any]] = []
    with Journal(journal_path) as journal:
        for module, overrides, turns, seed in GAMES:
            env = module.parallel_env(journal=journal, **overrides)
            numeric: list[Any] = []
            if module is maze_escape_v1:
                numeric = [
                    ("numeric_dict", EscapeNumericObservation(env)),
                    ("numeric_flat", EscapeNumericObservation(env, flatten=True)),
                    ("numeric_hash", EscapeNumericObservation(env, text="hash", hash_buckets=8)),
                    ("numeric_codes", EscapeNumericObservation(env, edges="codes")),
                ]
            rng = np.random.default_rng(seed)
            observations, _ = env.reset(seed=seed)
            game_forms = [forms(env, numeric, observations)]
            splice = env.config.notebook_mode == "splice"
            for t in range(turns):
                if not env.agents:
                    break
                actions = {
                    a: choose_action(rng, splice, observations[a]["notebook"], typed=t % 4 == 3)
                    for a in env.agents
                }
                if seed in GREEDY:
                    for a in env.agents:
                        move = greedy_move(env, a, rng)
                        if isinstance(actions[a], Action):
                            names = ["N", "E", "S", "W", "STAY"]
                            actions[a] = actions[a].model_copy(update={"move": names[move]})
                        else:
                            actions[a]["move"] = move
                observations, *_ = env.step(actions)
                game_forms.append(forms(env, numeric, observations))
            recorded.append(
                {"game": env.recorder.last_game_id, "env_id": env.env_id, "turns": game_forms}
            )
            env.close()  # an unfinished game is stored as aborted: it replays all the same
    # gzip: the SQLite file is mostly slack (1.6 MB); the test unpacks it into a temporary folder
    journal_gz = out / "landed_games.sqlite.gz"
    journal_gz.write_bytes(gzip.compress(journal_path.read_bytes(), compresslevel=9, mtime=0))
    journal_path.unlink()
    (out / "landed_forms.json.gz").write_bytes(
        gzip.compress(orjson.dumps(recorded), compresslevel=9, mtime=0)
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).parent))
