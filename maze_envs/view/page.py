"""Assembling a self-contained viewer page: template files, style, script and the game's data.

The page is one HTML file with everything inside: the style (``templates/viewer.css``), the
script (``templates/common.js`` plus the environment's own ``escape.js``, ``agimaze.js``, or
``generic.js`` for any other environment) and
the game's data as a JSON block. Nothing is fetched: no network, no CDN, so a page can be mailed,
archived next to its journal, or opened offline years later.

Large data (a 600-turn game with full notebooks, prompts and replies) is stored gzip-compressed
and base64-encoded instead of as plain JSON; the page inflates it with the browser's own
``DecompressionStream``. Repeated texts (a notebook turn after turn) are stored as changes
against their previous value (:func:`text_deltas`), so the page stays small.

Example:
    >>> page = render_page("demo <1>", "escape", {"n": 0})
    >>> page.startswith("<!DOCTYPE html>"), "demo &lt;1&gt;" in page, "https://" in page
    (True, True, False)
    >>> read_payload(page)
    {'n': 0}
"""

from __future__ import annotations

import base64
import gzip
import html
import re
from importlib import resources
from typing import Any, Final, Literal

import orjson

from maze_envs.reading.text import common_affixes

#: Payloads larger than this (bytes of JSON) are gzip-compressed in the page.
COMPRESS_ABOVE: Final = 256 * 1024
Kind = Literal["escape", "agimaze", "generic"]
#: Page data read after the first paint (see :func:`render_page`).
LATE_KEYS: Final = ("decisions", "blobs")
_JSON_TYPE: Final = "application/json"
_GZIP_TYPE: Final = "application/x-gzip-base64"
_PLACEHOLDER: Final = re.compile(r"\{\{([A-Z_]+)\}\}")
#: How much of a new text is looked for inside the old one to spot lines dropped at the front.
_PROBE: Final = 64


def template(name: str) -> str:
    """The text of one template file shipped in ``maze_envs/view/templates``."""
    return (resources.files("maze_envs.view") / "templates" / name).read_text(encoding="utf-8")


def encode_payload(data: Any, *, compress: bool | None = None) -> tuple[str, str]:
    """(script type, script text) holding ``data``: JSON, or gzip+base64 when large.

    Every ``<`` in the JSON is written as ``\\u003c`` (valid JSON), so no text of the game (a
    notebook holding ``</script>``) can end the script element or open a comment.
    """
    raw = orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS)
    if compress is None:
        compress = len(raw) > COMPRESS_ABOVE
    if compress:
        packed = gzip.compress(raw, compresslevel=9, mtime=0)  # mtime=0: same game, same page
        return _GZIP_TYPE, base64.b64encode(packed).decode("ascii")
    return _JSON_TYPE, raw.decode("utf-8").replace("<", "\\u003c")


def _read_block(page: str, name: str) -> Any:
    found = re.search(rf'<script id="{name}" type="([^"]+)">(.*?)</script>', page, re.S)
    if found is None:
        raise ValueError(f"not a maze-envs viewer page: no {name} data block")
    kind, text = found.groups()
    if kind == _GZIP_TYPE:
        return orjson.loads(gzip.decompress(base64.b64decode(text)))
    return orjson.loads(text)


def read_payload(page: str) -> Any:
    """The data of a page made by :func:`render_page`, both blocks joined (for tests, tools)."""
    data = _read_block(page, "game")
    late = _read_block(page, "late")
    if isinstance(data, dict) and isinstance(late, dict):
        data.update(late)
    return data


def render_page(title: str, kind: Kind, data: Any, *, compress: bool | None = None) -> str:
    """The whole HTML page of one game of environment ``kind``.

    The decision records and blobs (:data:`LATE_KEYS`), often most of a language-model game's
    data, go into a second block that the page reads after it has drawn the first turn.
    """
    late = None
    if isinstance(data, dict) and any(data.get(k) for k in LATE_KEYS):
        late = {k: data[k] for k in LATE_KEYS if k in data}
        data = {k: v for k, v in data.items() if k not in LATE_KEYS}
    data_type, payload = encode_payload(data, compress=compress)
    late_type, late_payload = encode_payload(late, compress=compress)
    script = template("common.js") + "\n" + template(f"{kind}.js")
    values = {
        "TITLE": html.escape(title),
        "KIND": kind,
        "STYLE": template("viewer.css"),
        "SCRIPT": script,
        "DATA_TYPE": data_type,
        "DATA": payload,
        "LATE_TYPE": late_type,
        "LATE": late_payload,
    }
    # one pass, so text inside the values is never taken for a placeholder
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template("page.html"))


def render_run_index(title: str, data: Any) -> str:
    """The front page of a benchmark run (``index.html``): ``templates/run_index.html``, its
    style and script, and the run's data (``maze_envs.bench.frontpage.index_data``) as JSON.

    >>> page = render_run_index("run <1>", {"title": "run <1>", "parts": []})
    >>> "<title>run &lt;1&gt;</title>" in page, read_index(page)["title"]
    (True, 'run <1>')
    """
    data_type, payload = encode_payload(data, compress=False)
    values = {
        "TITLE": html.escape(title),
        "STYLE": template("run_index.css"),
        "SCRIPT": template("run_index.js"),
        "DATA_TYPE": data_type,
        "DATA": payload,
    }
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template("run_index.html"))


def read_index(page: str) -> Any:
    """The data of a front page made by :func:`render_run_index` (for tests, tools)."""
    return _read_block(page, "run")


def _utf16(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (what JavaScript string indices count)."""
    return len(text.encode("utf-16-le")) // 2


def text_delta(previous: str, current: str) -> list[Any] | None:
    """``current`` as a change of ``previous``: None when equal, else ``[start, end, text]``.

    ``current == previous[:start] + text + previous[end:]``, positions counted in UTF-16 code
    units, as JavaScript indexes strings (the page applies the changes). When ``current`` starts
    inside ``previous`` (a rolling log that dropped its oldest lines) the change is
    ``[start, end, text, cut]``: drop ``cut`` units from the front first.

    >>> text_delta("abc", "abc") is None, text_delta("abc", "abXc"), text_delta("", "hi")
    (True, [2, 2, 'X'], [0, 0, 'hi'])
    >>> text_delta("a😀b", "a😀cb")  # the emoji is two UTF-16 units
    [3, 3, 'c']
    >>> text_delta("line 1\\nline 2\\n", "line 2\\nline 3\\n")
    [7, 7, 'line 3\\n', 7]
    """
    if previous == current:
        return None
    plain = _splice(previous, current)
    # A rolling log drops its oldest lines: look for the new text's start inside the old one.
    probe = current[: min(_PROBE, max(1, len(current) // 2))]
    cut = previous.find(probe, 1) if probe else -1
    if cut > 0:
        rolled = _splice(previous[cut:], current)
        if len(rolled[2]) < len(plain[2]):
            return [*rolled, _utf16(previous[:cut])]
    return plain


def _splice(previous: str, current: str) -> list[Any]:
    """``[start, end, text]`` with ``current == previous[:start] + text + previous[end:]``."""
    start, end = common_affixes(previous, current)
    cut = len(previous) - end
    return [_utf16(previous[:start]), _utf16(previous[:cut]), current[start : len(current) - end]]


def text_deltas(values: list[str]) -> list[Any]:
    """A sequence of texts as changes, each against the one before (the first against ``""``)."""
    out: list[Any] = []
    previous = ""
    for value in values:
        out.append(text_delta(previous, value))
        previous = value
    return out
