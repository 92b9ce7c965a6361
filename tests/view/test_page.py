"""Page assembly: the text-change coding the page's script undoes, and the payload block."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from maze_envs.view.page import encode_payload, read_payload, render_page, text_delta, text_deltas

TEXT = st.text(alphabet=st.sampled_from("ab\nxé😀</>"), max_size=40)


def apply(previous: str, delta: list | None) -> str:
    """What undelta() in common.js does, on UTF-16 code units."""
    if delta is None:
        return previous
    units = previous.encode("utf-16-le")
    if len(delta) > 3:
        units = units[2 * delta[3] :]
    start, end, text = delta[:3]
    return (units[: 2 * start] + text.encode("utf-16-le") + units[2 * end :]).decode("utf-16-le")


@given(TEXT, TEXT)
def test_a_change_rebuilds_the_new_text(previous: str, current: str) -> None:
    assert apply(previous, text_delta(previous, current)) == current


@given(st.lists(TEXT, max_size=8))
def test_a_stream_of_changes_rebuilds_every_text(values: list[str]) -> None:
    out, previous = [], ""
    for delta in text_deltas(values):
        previous = apply(previous, delta)
        out.append(previous)
    assert out == values


def test_a_rolling_log_costs_only_its_new_line() -> None:
    lines = [f"turn {t}: went north, east was a wall\n" for t in range(400)]
    notebooks = ["".join(lines[max(0, t - 200) : t + 1]) for t in range(400)]  # full: drops one
    deltas = text_deltas(notebooks)
    assert all(len(d[2]) == len(lines[t]) for t, d in enumerate(deltas))
    assert len(deltas[300]) == 4 and deltas[300][2] == lines[300]


def test_payload_blocks() -> None:
    data = {"note": "</script><!-- <b>", "n": [1, 2]}
    kind, text = encode_payload(data, compress=False)
    assert kind == "application/json" and "<" not in text
    kind, packed = encode_payload(data, compress=True)
    assert kind == "application/x-gzip-base64" and re.fullmatch(r"[A-Za-z0-9+/=]+", packed)
    assert encode_payload(data, compress=True) == (kind, packed)  # deterministic
    for compress in (False, True):
        page = render_page("t", "escape", data, compress=compress)
        assert read_payload(page) == data
        assert "{{" not in page  # every placeholder filled
