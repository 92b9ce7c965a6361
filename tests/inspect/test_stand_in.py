"""The stand-in provider (``stand-in/NAME``, :mod:`llm_policies.apps.inspect.stand_in`) in every
output mode the harness sends through Inspect: in the text modes it reads the reply schema from
the system prompt (what ``scripts/inspect_stand_in_scores.py`` once did with a provider of its
own, issue 26)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the Inspect tasks need the inspect extra")

from inspect_ai.model import get_model

from llm_policies.apps.inspect import tasks
from llm_policies.apps.inspect.stand_in import PROVIDER
from maze_envs.journal import Journal
from tests.inspect.support import decisions, run


@pytest.mark.parametrize("mode", ["prompted", "json_object", "native", "tool"])
def test_the_stand_in_plays_and_escapes_in_every_mode(mode: str, tmp_path: Path) -> None:
    journal = tmp_path / "games.sqlite"
    task = tasks.escape(
        preset="navigator", sizes=5, max_turns=60, seeds="0", output_mode=mode,
        journal=str(journal),
    )  # fmt: skip
    log = run(task, get_model(f"{PROVIDER}/wall-follower"), tmp_path / "logs")
    assert log.status == "success" and log.results is not None
    success = log.results.scores[0]
    assert success.name == "team_success" and success.metrics["mean"].value == 1.0
    with Journal(journal, readonly=True) as opened:
        (game,) = list(opened.games())
    assert game.meta is not None and game.meta["harness"]["A"]["output_mode"] == mode
    records = decisions(journal, game.id)
    assert records and all(r["status"] == "ok" for r in records)
    assert {r["output_mode"] for r in records} == {mode}


def test_a_prompt_without_a_schema_is_refused_with_a_reason() -> None:
    from llm_policies.apps.inspect.stand_in import _prompted_schema

    with pytest.raises(ValueError, match="no JSON schema in the system prompt"):
        _prompted_schema("You play a maze. Answer as you like.")
