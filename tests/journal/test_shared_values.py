"""The reader of shared values (:class:`~maze_envs.journal.delta_values.SharedValuesReader`, what
the analysis reads) gives, turn after turn, exactly the values of the whole turn, and of the keys
it keeps only those, on any sequence of values the writer stores as changes (the generated turns
of ``test_delta``'s round trip: counters that move on, texts edited and referenced, arrays that
slide, objects merged, marker lookalikes)."""

from __future__ import annotations

import random
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from maze_envs.journal.delta import DeltaWriter
from maze_envs.journal.delta_reader import SkippedKeyError
from maze_envs.journal.delta_values import SharedValuesReader
from maze_envs.journal.format import encode_json_bytes
from tests.journal.test_delta import changing_turns, objects


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(objects(1), min_size=1, max_size=8), st.randoms(use_true_random=False))
def test_shared_values_are_the_values_of_the_whole_turn(
    values: list[dict[str, Any]], rng: random.Random
) -> None:
    turns = changing_turns(values, rng)
    keep = {"a", "k", "z"}
    writer, every, few = DeltaWriter(), SharedValuesReader(), SharedValuesReader(keep=keep)
    handed_out = []
    for value in turns:
        stored = writer.encode(value)
        whole = orjson.loads(encode_json_bytes(value))
        assert every.read(stored) == whole
        try:
            kept = few.read(stored)
        except SkippedKeyError:  # (a kept text stored as a reference to a skipped one)
            return
        assert kept == {
            agent: {key: item[key] for key in item if key in keep}
            if isinstance(item, dict)
            else item
            for agent, item in whole.items()
        }
        handed_out.append((kept, orjson.dumps(kept)))
    # a later turn never changed the values an earlier one handed out
    assert all(orjson.dumps(kept) == text for kept, text in handed_out)
