"""``maze-envs bench`` on the command line, the main job, and the cooperation study example."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import orjson
import pytest

from maze_envs.agimaze.packs import list_bundles, resolve_pack_path
from maze_envs.bench.command import main, main_experiment
from maze_envs.cli import main as cli_main
from maze_envs.journal import Journal
from tests.bench import ESCAPE_VERSION
from tests.bench.test_frontpage import assert_every_line_links_a_page

REPO = Path(__file__).resolve().parents[2]


def rows(out: Path) -> list[dict[str, object]]:
    return list(orjson.loads((out / "results.json").read_bytes())["games"])


def test_an_escape_setup_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code = cli_main(
        [
            "bench",
            "--env",
            "escape",
            "--escape-version",
            str(ESCAPE_VERSION),
            "--size",
            "7",
            "9x7",
            "--max-turns",
            "70",
            "--set",
            "radio=false",
            "--set",
            "coordinates=own,trail_length=5",
            "--policy",
            "explorer",
            "--team",
            "explorer,random,wall-follower-left",
            "--seeds",
            "0-1",
            "5",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    games = rows(out)
    assert len(games) == 2 * 2 * 3
    assert {g["size"] for g in games} == {"7x7", "9x7"}
    assert {g["seed"] for g in games} == {0, 1, 5}
    assert {g["policy"] for g in games} == {"explorer", "explorer+random+wall-follower-left"}
    team = next(g for g in games if "+" in str(g["policy"]))
    assert team["policy_specs"] == ["explorer", "random", "wall-follower-left"]
    experiment = orjson.loads((out / "experiment.json").read_bytes())
    assert experiment["escape"][0]["set"] == {
        "radio": False,
        "coordinates": "own",
        "trail_length": 5,
    }
    printed = capsys.readouterr().out
    assert "| setup | size | policy | team success (95% CI) |" in printed
    assert "12 games (12 played, 0 already done)" in printed
    assert "summary.md" in printed and "games.sqlite" in printed


def test_an_agimaze_setup_and_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    args = ["--env", "agimaze", "--pack", "TUTORIAL/STAGE-01", "--budget-factor", "2"]
    args += ["--policy", "random", "--policy", "oracle", "--out", str(out), "--quiet"]
    assert main(args) == 0
    assert capsys.readouterr().out == ""
    games = rows(out)
    budgets = {  # twice each bundle's max_steps
        2 * (resolve_pack_path(name)[1].labyrinth.max_steps or 0)
        for name in list_bundles("TUTORIAL/STAGE-01/")
    }
    assert len(games) == 6 and {g["budget"] for g in games} == budgets
    assert main([*args, "--resume"]) == 0
    with Journal(out / "games.sqlite", readonly=True) as journal:
        assert len(journal.game_ids()) == 6


def test_a_config_file(tmp_path: Path) -> None:
    config = tmp_path / "exp.toml"
    config.write_text(
        f'name = "file"\nseeds = "0"\n[[escape]]\nversion = {ESCAPE_VERSION}\nsizes = [7]\n'
        'max_turns = 40\npolicies = ["explorer"]\n'
    )
    out = tmp_path / "run"
    assert main(["--config", str(config), "--seeds", "3-4", "--out", str(out), "--quiet"]) == 0
    assert [g["seed"] for g in rows(out)] == [3, 4]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--size", "9"], "--size needs --env escape (without --env"),
        (["--pack", "TRAINING"], "--pack needs --env agimaze (without --env"),
        (["--env", "agimaze", "--size", "9"], "--size does not apply to --env agimaze"),
        (["--env", "escape", "--pack", "TRAINING"], "--pack does not apply to --env escape"),
        (["--config", "x.toml", "--env", "escape"], "either in --config or by --env"),
        (["--env", "escape", "--seeds", "9-3"], "runs backwards"),
        (["--env", "escape", "--policy", ":x=1"], "no policy name"),
        (["--env", "escape", "--set", "radio"], "'radio' is not key=value"),
        (["--env", "escape", "--size", "99"], "less than or equal to 41"),
        # a field set by an option is placed by that option, in the validator's own words
        (["--env", "escape", "--size", "abc"], ": --size: a maze size is a number such as 9"),
        (["--env", "agimaze", "--budget-factor", "-1"], ": --budget-factor: Input should be"),
        (["--env", "escape", "--workers", "0"], "--workers must be at least 1"),
        (["--env", "escape", "--fresh", "--resume"], "give one of them"),
        (["--executor", "gpu"], "invalid choice: 'gpu'"),
        (["--env", "escape", "--ray-address", "h:6379"], "go with --executor ray"),
        (
            ["--env", "escape", "--executor", "ray", "--ray-runtime-env", "[1]"],
            "must be a JSON object (Ray's runtime_env), got a list",
        ),
        (
            ["--env", "escape", "--executor", "ray", "--ray-runtime-env", "none.json"],
            "--ray-runtime-env: cannot read 'none.json'",
        ),
    ],
)
def test_bad_arguments_exit_2_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*args, "--out", str(tmp_path / "run")])
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert message in error
    # one line: the error and where the options are listed, not the 15-line usage block
    assert error.count("\n") == 1 and "usage:" not in error
    assert error.startswith("maze-envs bench: error: ")
    assert error.endswith("(see maze-envs bench --help)\n")
    assert "Value error," not in error  # pydantic's prefix, not ours


def test_unusable_runs_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--env", "escape", "--escape-version", str(ESCAPE_VERSION), "--size", "7"]
    base += ["--max-turns", "30", "--quiet"]
    assert main([*base, "--policy", "no-such-policy", "--out", str(tmp_path / "a")]) == 2
    assert "no-such-policy" in capsys.readouterr().err
    assert main([*base, "--out", str(tmp_path / "b")]) == 0
    assert main([*base, "--out", str(tmp_path / "b")]) == 2
    assert "already holds a run; pass --resume" in capsys.readouterr().err
    taken = tmp_path / "file"
    taken.write_text("")
    assert main([*base, "--out", str(taken)]) == 2


def test_the_main_job_is_both_environments_baselines() -> None:
    experiment = main_experiment()
    escape = {p.name for setup in experiment.escape for p in setup.policies}
    agimaze = {p.name for setup in experiment.agimaze for p in setup.policies}
    assert {"random", "wall-follower-left", "wall-follower-right", "explorer"} <= escape
    assert {"cooperative", "oracle"} <= escape and {"random", "explorer", "oracle"} <= agimaze
    assert {pack for setup in experiment.agimaze for pack in setup.packs} == {
        "TUTORIAL",
        "TRAINING",
    }


def test_the_main_job_runs_verifies_and_says_where_everything_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert cli_main(["bench", "--seeds", "0", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    games = rows(out)
    assert {g["env"] for g in games} == {"escape", "agimaze"}
    assert all(g["status"] == "ok" for g in games)
    assert "verify: " in printed and "FAILED" not in printed
    for name in ("games.sqlite", "results.csv", "results.json", "summary.md"):
        assert (out / name).is_file() and name in printed
    if importlib.util.find_spec("matplotlib") is not None:
        assert (out / "escape_by_size.png").is_file() and (out / "agimaze_rhae70.png").is_file()
    summary = (out / "summary.md").read_text()
    assert "| Family | Stage | Size | soft/hard |" in summary
    assert "| S0-keys | STAGE-01 | 3x3 | 35/70 |" in summary
    # the front page links every table line to a viewer page of its games
    assert (out / "index.html").is_file() and "index.html" in printed
    assert_every_line_links_a_page(out)
    assert (out / "main-job.txt").is_file()
    # running it again starts over its own earlier run, saying what it deletes
    assert cli_main(["bench", "--seeds", "1", "--out", str(out), "--quiet", "--no-pages"]) == 0
    assert {g["seed"] for g in rows(out) if g["env"] == "escape"} == {1}
    error = capsys.readouterr().err
    assert f"the main job starts over its earlier run: deleting the run in {out}" in error
    assert "games.sqlite" in error and "pages/" in error
    # another experiment's run is never deleted by it
    other = ["--env", "escape", "--size", "5", "--max-turns", "20", "--quiet"]
    assert cli_main(["bench", *other, "--out", str(out)]) == 2  # a run is there
    assert cli_main(["bench", *other, "--out", str(tmp_path / "mine")]) == 0
    assert cli_main(["bench", "--out", str(tmp_path / "mine"), "--quiet"]) == 2
    assert "not the main job's" in capsys.readouterr().err


def test_the_cooperation_study_example_in_short(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = importlib.util.spec_from_file_location(
        "cooperation_study", REPO / "examples" / "cooperation_study.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["cooperation_study"] = module
    spec.loader.exec_module(module)
    docs = tmp_path / "docs"
    code = module.main(
        [
            "--seeds",
            "0-2",
            "--seeds",
            "1000-1001",
            "--sizes",
            "7",
            "9",
            "--executor",
            "inline",
            "--out",
            str(tmp_path / "run"),
            "--docs",
            str(docs),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    # the arms say what differs: the radio; the meeting alert is a control no baseline reads
    for arm in (
        "cooperative team, radio on",
        "cooperative team, radio off",
        "independent explorers, radio on",
        "cooperative team, radio on, alert off",
    ):
        assert printed.count(f"| {arm} |") == 2 * 2  # one line per size and seed range
    assert "alert" not in printed.replace("alert off", "").replace("Meeting alert control", "")
    assert "cooperative team (radio on) vs independent explorers (radio on)" in printed
    assert printed.count("played 0 of 6 games differently") == 1  # seeds 0-2: 2 sizes x 3
    assert printed.count("played 0 of 4 games differently") == 1  # seeds 1000-1001
    assert "## Findings (replicated on every seed range)" in printed
    assert "times faster" in printed and "x |" in printed  # speed-ups as ratios
    assert len(rows(tmp_path / "run" / "seeds-0-2")) == 4 * 2 * 3
    assert len(rows(tmp_path / "run" / "seeds-1000-1001")) == 4 * 2 * 2
    report = (docs / "cooperation_study.md").read_text()
    assert report.startswith("# The cooperation study") and "--docs DIR" in report
    assert "## Seeds 0-2" in report and "## Seeds 1000-1001" in report


SMALL = ["--env", "escape", "--escape-version", str(ESCAPE_VERSION), "--size", "5"]
SMALL += ["--max-turns", "20", "--seeds", "0-1", "--no-plots", "--quiet"]


def game_count(out: Path) -> int:
    with Journal(out / "games.sqlite", readonly=True) as journal:
        return len(journal.game_ids())


def test_the_main_job_never_deletes_another_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A user's run in ``out/`` (every run's default folder): ``maze-envs bench`` with no
    options refuses it with status 2, naming --out and --fresh, and leaves it as it was."""
    monkeypatch.chdir(tmp_path)
    assert main(SMALL) == 0  # the user's own experiment, in the default folder
    before = (tmp_path / "out" / "rows.jsonl").read_bytes()
    capsys.readouterr()
    assert main([]) == 2
    error = capsys.readouterr().err
    assert "not the main job's" in error and "--out" in error and "--fresh" in error
    assert "Traceback" not in error
    assert (tmp_path / "out" / "rows.jsonl").read_bytes() == before
    assert game_count(tmp_path / "out") == 2
    assert not (tmp_path / "out" / "main-job.txt").exists()


def test_fresh_says_what_it_deletes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    (out / "mine").mkdir(parents=True)
    (out / "mine" / "notes.txt").write_text("kept")
    assert main([*SMALL, "--out", str(out)]) == 0
    capsys.readouterr()
    assert main([*SMALL, "--out", str(out), "--fresh", "--seeds", "3"]) == 0
    error = capsys.readouterr().err
    assert f"--fresh: deleting the run in {out}" in error
    assert "2 game(s) in games.sqlite" in error and "rows.jsonl" in error
    assert game_count(out) == 1  # the new run only
    assert (out / "mine" / "notes.txt").read_text() == "kept"  # nothing else is touched


def test_ray_not_installed_exits_2_with_the_hint_and_blocks_no_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    out = tmp_path / "run"
    assert main([*SMALL, "--executor", "ray", "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert "pip install 'maze-envs[ray]'" in error and "Traceback" not in error
    assert main([*SMALL, "--out", str(out)]) == 0  # a plain rerun is not refused
    assert game_count(out) == 2


def test_files_left_before_a_first_game_are_not_a_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    Journal(out / "games.sqlite").close()  # an empty journal, as a run stopped at once leaves
    (out / "experiment.json").write_text("{}")
    assert main([*SMALL, "--out", str(out)]) == 0
    assert game_count(out) == 2


def test_resume_of_an_unreadable_journal_exits_2_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main([*SMALL, "--out", str(out)]) == 0
    (out / "games.sqlite").write_bytes(b"this is not a journal" * 100)
    for name in ("games.sqlite-wal", "games.sqlite-shm"):
        (out / name).unlink(missing_ok=True)
    capsys.readouterr()
    assert main([*SMALL, "--out", str(out)]) == 2  # a run is there: never deleted unasked
    assert "cannot be read" in capsys.readouterr().err
    assert main([*SMALL, "--out", str(out), "--resume"]) == 2
    error = capsys.readouterr().err
    assert "cannot be continued" in error and "maze-envs verify" in error and "--fresh" in error
    assert "Traceback" not in error
