"""A game the environment accepted always verifies, whatever form its actions came in.

Actions may be any ``Mapping`` (``MappingProxyType``, custom classes), also for the ``notebook``
part, with numpy scalars for numbers and text: the journal stores them as plain JSON (never as
an opaque placeholder), and the replay of that JSON is the same game.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maze_envs import maze_escape_v0
from maze_envs.journal import Journal
from maze_envs.verify import verify_journal
from tests.journal.tamper import stored_turns


class Frozen(Mapping[str, Any]):
    """A custom read-only Mapping (not a dict)."""

    def __init__(self, items: Mapping[str, Any]) -> None:
        self._items = dict(items)

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


WRAPPERS: dict[str, Callable[[Mapping[str, Any]], Mapping[str, Any]]] = {
    "dict": dict,
    "MappingProxyType": MappingProxyType,
    "custom Mapping": Frozen,
}


def numpy_action(move: int, text: str, wrap: Callable[[Mapping[str, Any]], Any]) -> Any:
    notebook = wrap(
        {"edit": np.int8(1), "start": np.int64(0), "end": np.uint16(0), "text": np.str_(text)}
    )
    return wrap({"move": np.int64(move), "notebook": notebook, "radio": np.str_(text[:3])})


@pytest.mark.parametrize("kind", sorted(WRAPPERS))
def test_any_mapping_of_numpy_values_is_journaled_as_plain_data_and_verifies(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "games.sqlite"
    wrap = WRAPPERS[kind]
    env = maze_escape_v0.parallel_env(preset="full", width=6, height=6, max_turns=8, journal=path)
    env.reset(seed=5)
    turn = 0
    while env.agents:
        env.step({a: numpy_action(turn % 5, f"t{turn}{a}", wrap) for a in env.agents})
        turn += 1
    env.close()
    (report,) = verify_journal(path)
    assert (report.status, report.turns_verified) == ("ok", 9)
    with Journal(path, readonly=True) as journal:
        first = list(journal.turns(1))[1].actions
    raw = stored_turns(path, 1)[1].parts  # what the turn stores, decompressed
    assert first["A"] == {
        "move": 0,
        "notebook": {"edit": 1, "start": 0, "end": 0, "text": "t0A"},
        "radio": "t0A",
    }
    assert "unencodable" not in str(raw) and '"move":0' in raw["actions"]


MOVES = st.integers(0, 4)
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    turns=st.lists(
        st.tuples(st.sampled_from(sorted(WRAPPERS)), MOVES, TEXT), min_size=1, max_size=12
    ),
)
def test_random_mappings_always_verify(seed: int, turns: list[tuple[str, int, str]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "games.sqlite"
        env = maze_escape_v0.parallel_env(width=5, height=5, max_turns=15, journal=path)
        env.reset(seed=seed)
        for kind, move, text in turns:
            if not env.agents:
                break
            action = numpy_action(move, text, WRAPPERS[kind])
            env.step({agent: action for agent in env.agents})
        env.close()
        (report,) = verify_journal(path)
    assert report.ok, report.describe()
