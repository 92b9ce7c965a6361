"""The text a model reads lives in data files beside the code, loaded through importlib.resources
and declared as package data (issue 17)."""

from __future__ import annotations

import fnmatch
import tomllib
from importlib import resources
from pathlib import Path

from maze_envs.agimaze import model_text, set_env
from maze_envs.agimaze.api import service
from wrappers.contract import description

ROOT = Path(__file__).resolve().parents[1]


def test_the_agimaze_texts_come_from_their_data_file() -> None:
    data = tomllib.loads(
        resources.files("maze_envs.agimaze").joinpath("data", "model_text.toml").read_text()
    )
    assert data["api_description"] == model_text.API_DESCRIPTION
    assert data["set_description"] == set_env.SET_DESCRIPTION
    start = data["set_messages"]["start_prompt"]
    assert f"Please start the first labyrinth {start}" == set_env.INITIAL_MESSAGE
    assert set_env.FAILED_MESSAGE.startswith("You did not solve the labyrinth before reaching")
    assert data["set_messages"]["five_times"] in set_env.FAILED_FINAL_MESSAGE
    assert set_env.not_started_message("up", first=False) == (
        'The action {"id":"up"} is not available now. Please start the next labyrinth ' + start
    )
    assert service.API_DESCRIPTION is model_text.API_DESCRIPTION  # what GET /api/description serves


def test_the_contract_texts_come_from_their_data_files() -> None:
    folder = resources.files("wrappers.contract").joinpath("data")
    assert folder.joinpath("CONTRACT.md").read_text() == description.INTERFACE
    assert (
        " ".join(folder.joinpath("escape_rules.md").read_text().split()) == description.ESCAPE_RULES
    )
    assert description.ESCAPE_RULES.startswith("Agents start on distinct cells of a maze")


def test_the_data_files_are_package_data() -> None:
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]
    for package, relative in [
        ("maze_envs", "agimaze/data/model_text.toml"),
        ("wrappers", "contract/data/CONTRACT.md"),
        ("wrappers", "contract/data/escape_rules.md"),
    ]:
        assert (ROOT / package / relative).is_file()
        patterns = package_data[package]
        assert any(fnmatch.fnmatch(relative, p.replace("**/", "*")) for p in patterns), relative


def test_the_escape_refusals_come_from_their_data_file() -> None:
    from maze_envs.escape.notebook import append_line, splice
    from maze_envs.escape.radio import check_message

    data = tomllib.loads(
        resources.files("maze_envs.escape").joinpath("data", "refusals.toml").read_text()
    )
    assert splice("abc", 2, 1, "x", max_bytes=10, turn_bytes=5)[1] == data["notebook"][
        "start_after_end"
    ].format(start=2, end=1)
    _, dropped = append_line("a\nb\n", "c", max_bytes=4, turn_bytes=50)
    assert dropped == "dropped 1 oldest line(s) to fit 4 bytes"
    refused = check_message("hi", enabled=False, max_bytes=280, cooldown_left=0)
    assert refused == data["radio"]["switched_off"] == "the radio is switched off in this game"
