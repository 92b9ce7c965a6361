"""Experiments: validation, expansion into games, stable run keys, files, policy text forms."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from maze_envs.bench.policyspec import PolicyEntry, PolicySpec, parse_value
from maze_envs.bench.seeds import parse_seeds
from maze_envs.bench.spec import AgiMazeCase, EscapeCase, Experiment, parse_size
from maze_envs.escape.types import Config
from maze_envs.policies.seeds import agent_seed


def escape_experiment(**setup: object) -> Experiment:
    base: dict[str, object] = {"policies": ["explorer"], "sizes": [9], "max_turns": 50}
    return Experiment.model_validate({"seeds": "0-2", "escape": [{**base, **setup}]})


# --- seeds and sizes -------------------------------------------------------------------------


def test_seeds_are_ranges_lists_or_both_in_order_without_repeats() -> None:
    assert parse_seeds("0-4") == (0, 1, 2, 3, 4)
    assert parse_seeds("7, 3,3, 10-11") == (7, 3, 10, 11)
    assert parse_seeds(["0-1", 5, "1"]) == (0, 1, 5)
    assert parse_seeds(12) == (12,)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("5-2", "runs backwards"),
        ("a-3", "is not a whole number"),
        ("", "name no seed"),
        ("-3", "a seed is a whole number from 0"),
        (True, "must be numbers"),
        (3.5, "must be numbers"),
        ("0-2000000", "over a million"),
    ],
)
def test_bad_seeds_say_what_is_allowed(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_seeds(value)


def test_agent_seeds_are_fixed_independent_streams() -> None:
    seeds = {agent_seed(game, agent) for game in range(20) for agent in range(3)}
    assert len(seeds) == 60
    assert agent_seed(4, 1) == agent_seed(4, 1)
    code = "from maze_envs.policies.seeds import agent_seed; print(agent_seed(4, 1))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(other.stdout) == agent_seed(4, 1)  # the same in another process


def test_sizes() -> None:
    assert parse_size(9) == (9, 9)
    assert parse_size("13x9") == (13, 9)
    assert parse_size("11") == (11, 11)
    with pytest.raises(ValueError, match="a maze size is a number"):
        parse_size("big")


# --- policy specs ----------------------------------------------------------------------------


def test_policy_text_forms() -> None:
    assert PolicySpec.parse("explorer") == PolicySpec(spec="explorer")
    spec = PolicySpec.parse("wall-follower-left:hand=left,patience=3")
    assert spec.spec == "wall-follower-left" and spec.options == {"hand": "left", "patience": 3}
    llm = PolicySpec.parse("anthropic:claude-sonnet-5-5:temperature=0.2,max_output_tokens=300")
    assert llm.spec == "anthropic:claude-sonnet-5-5"
    assert llm.options == {"temperature": 0.2, "max_output_tokens": 300}
    url = PolicySpec.parse("ollama:qwen3:8b:base_url=http://gpu-box:11434,think=false")
    assert url.spec == "ollama:qwen3:8b"
    assert url.options == {"base_url": "http://gpu-box:11434", "think": False}
    assert PolicySpec.parse("my_pkg.agents:Greedy").spec == "my_pkg.agents:Greedy"
    assert PolicySpec.parse(url.text) == url  # the text form round-trips


def test_option_values() -> None:
    assert [parse_value(v) for v in ("true", "False", "null", "3", "0.5", "own")] == [
        True,
        False,
        None,
        3,
        0.5,
        "own",
    ]


def test_teams_split_on_commas_but_keep_member_options() -> None:
    team = PolicyEntry.parse_team("explorer,cooperative:share=true,depth=2,random")
    assert [m.text for m in team.team or ()] == [
        "explorer",
        "cooperative:share=true,depth=2",
        "random",
    ]
    assert team.members(("A", "B", "C"))[1].options == {"share": True, "depth": 2}
    with pytest.raises(ValueError, match="has 3 member"):
        team.members(("A", "B"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "non-empty"),
        ("explorer,random", "is not a policy name"),
        (":x=1", "no policy name"),
        ("explorer:x=1,y", "'y' is not key=value"),
    ],
)
def test_bad_policy_text(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PolicySpec.parse(text)


def test_policy_entries_from_files() -> None:
    entry = PolicyEntry.model_validate(
        {"policy": "explorer", "options": {"depth": 2}, "label": "deep explorer"}
    )
    assert entry.name == "deep explorer" and entry.policy == PolicySpec(
        spec="explorer", options={"depth": 2}
    )
    assert PolicyEntry.model_validate(["explorer", "random"]).name == "explorer+random"
    with pytest.raises(ValueError, match="exactly one of"):
        PolicyEntry.model_validate({"policy": "explorer", "team": ["random"]})


# --- expansion and run keys ------------------------------------------------------------------


def test_every_combination_is_a_game() -> None:
    exp = Experiment.model_validate(
        {
            "seeds": "0-3",
            "escape": [
                {"sizes": [9, "11x7"], "max_turns": 80, "policies": ["explorer", "random"]},
                {"preset": "navigator", "set": {"radio": False}, "policies": ["explorer"]},
            ],
        }
    )
    tasks = exp.tasks()
    assert len(tasks) == 2 * 2 * 4 + 1 * 1 * 4
    first = tasks[0]
    assert isinstance(first.case, EscapeCase)
    assert (first.case.size, first.policy.name, first.seed) == ("9x9", "explorer", 0)
    assert first.case.game_config == Config(width=9, height=9, max_turns=80)
    sizes = {t.case.size for t in tasks if t.case.setup == exp.escape[0].name}
    assert sizes == {"9x9", "11x7"}
    navigator = tasks[-1].case
    assert isinstance(navigator, EscapeCase)
    assert navigator.game_config == Config.from_preset("navigator", radio=False)
    assert navigator.env_id == "maze_envs/MazeEscape-v1"
    assert len({t.run_key for t in tasks}) == len(tasks)


def test_run_keys_are_stable_and_ignore_labels() -> None:
    tasks = escape_experiment().tasks()
    again = escape_experiment(label="renamed").tasks()
    assert [t.run_key for t in tasks] == [t.run_key for t in again]
    code = (
        "from maze_envs.bench.spec import Experiment;"
        "e = Experiment.model_validate({'seeds': '0-2', 'escape': [{'policies': ['explorer'],"
        " 'sizes': [9], 'max_turns': 50}]});"
        "print(' '.join(t.run_key for t in e.tasks()))"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert other.stdout.split() == [t.run_key for t in tasks]
    # anything that changes the game changes the key
    assert escape_experiment(max_turns=51).tasks()[0].run_key != tasks[0].run_key
    assert escape_experiment(version=0).tasks()[0].run_key != tasks[0].run_key
    assert escape_experiment(policies=["explorer:x=1"]).tasks()[0].run_key != tasks[0].run_key
    same_team = escape_experiment(policies=[["explorer"] * 3]).tasks()[0]
    assert same_team.run_key == tasks[0].run_key  # a team of the same members is the same game


def test_two_arms_that_play_the_same_games_are_refused() -> None:
    with pytest.raises(ValueError, match="two arms play the same games"):
        escape_experiment(policies=["explorer", {"policy": "explorer", "label": "again"}]).tasks()


def test_tasks_pickle() -> None:
    task = escape_experiment().tasks()[0]
    assert pickle.loads(pickle.dumps(task)) == task


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ({"version": 3}, "version 3 does not exist"),
        ({"preset": "nope"}, "unknown preset 'nope'"),
        ({"sizes": [99]}, "at size 99x99: width: Input should be less than or equal to 41"),
        ({"set": {"radio_max_bytes": -1}}, "radio_max_bytes"),
        ({"set": {"width": 12}}, "not both"),
        ({"policies": [["explorer", "random"]]}, "has 2 member"),
        ({"policies": []}, "at least 1 item"),
    ],
)
def test_bad_setups_fail_before_any_game(setup: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        escape_experiment(**setup).tasks()


def test_an_experiment_needs_a_setup() -> None:
    with pytest.raises(ValueError, match="no environment setup"):
        Experiment().tasks()


# --- AGI Maze packs --------------------------------------------------------------------------


def test_pack_groups_expand_to_every_bundle() -> None:
    exp = Experiment.model_validate(
        {
            "agimaze": {
                "packs": ["TRAINING/S1-rivers/STAGE-02", "TUTORIAL/STAGE-01/0001.json"],
                "policies": ["random"],
            }
        }
    )
    tasks = exp.tasks()
    packs = [t.case.pack for t in tasks if isinstance(t.case, AgiMazeCase)]
    assert packs == [f"TRAINING/S1-rivers/STAGE-02/{i:04d}.json" for i in range(10)] + [
        "TUTORIAL/STAGE-01/0001.json"
    ]
    case = tasks[0].case
    assert isinstance(case, AgiMazeCase)
    assert (case.group, case.family, case.stage, case.size) == (
        "TRAINING",
        "S1-rivers",
        "STAGE-02",
        "3x4",
    )
    assert (case.soft_good_steps, case.hard_max_steps, case.budget_factor) == (50, 100, 5.0)
    training = Experiment.model_validate({"agimaze": {"packs": "TRAINING", "policies": ["random"]}})
    assert len(training.tasks()) == 240


def test_unknown_packs_list_the_choices() -> None:
    exp = Experiment.model_validate({"agimaze": {"packs": ["TRAINING/S9"], "policies": ["x"]}})
    with pytest.raises(ValueError, match="S0-keys"):
        exp.tasks()


# --- files ---------------------------------------------------------------------------------


TOML = """
name = "from a file"
seeds = "0-1"

[[escape]]
sizes = [7]
max_turns = 30
set = { radio = false }
policies = ["explorer", { team = ["explorer", "random", "random"], label = "mixed" }]

[[agimaze]]
packs = "TUTORIAL/STAGE-02"
budget_factor = 2
seeds = [3]
policies = [{ policy = "random", options = { } }]
"""


def test_experiment_files_toml_yaml_json(tmp_path: Path) -> None:
    toml = tmp_path / "exp.toml"
    toml.write_text(TOML)
    exp = Experiment.load(toml)
    assert exp.name == "from a file" and exp.escape[0].set == {"radio": False}
    tasks = exp.tasks()
    assert len(tasks) == 2 * 2 + 3 * 1
    assert {t.policy.name for t in tasks} == {"explorer", "mixed", "random"}
    assert {t.seed for t in tasks if t.case.kind == "agimaze"} == {3}
    yaml = tmp_path / "exp.yaml"
    yaml.write_text(
        "seeds: 0-1\nescape:\n  - sizes: [7]\n    max_turns: 30\n    policies: [explorer]\n"
    )
    assert len(Experiment.load(yaml).tasks()) == 2
    as_json = tmp_path / "exp.json"
    as_json.write_text(exp.model_dump_json())
    assert [t.run_key for t in Experiment.load(as_json).tasks()] == [t.run_key for t in tasks]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.toml", "seeds = [", "is not valid toml"),
        ("a.toml", "colour = 3", "colour: Extra inputs are not permitted"),
        ("a.toml", "seeds = '3-1'", "runs backwards"),
        ("a.ini", "", "use .toml, .yaml/.yml or .json"),
        ("a.yaml", "- 1\n- 2", "must hold a table"),
        ("a.json", "{", "is not valid json"),
    ],
)
def test_bad_experiment_files_name_the_file_and_problem(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as raised:
        Experiment.load(path)
    assert name in str(raised.value)


def test_a_missing_file() -> None:
    with pytest.raises(ValueError, match="cannot read experiment file"):
        Experiment.load("/nonexistent/exp.toml")
