"""A study report written as one Markdown file and one self-contained HTML page.

Both come from the same sections (:mod:`maze_envs.studies.document`). The page embeds the plots
(:mod:`maze_envs.studies.plots`) as data URIs, so it can be mailed or committed alone; without
matplotlib it says how to get them and shows every table all the same.

Example:
    >>> from maze_envs.studies.document import Section, Table
    >>> part = [Section("Arms", ["text", ["a", "b"], Table(["x", "y"], [["1", "2|3"]])])]
    >>> print(markdown_text("T", part))
    # T
    <BLANKLINE>
    ## Arms
    <BLANKLINE>
    text
    <BLANKLINE>
    - a
    - b
    <BLANKLINE>
    | x | y |
    |---|---|
    | 1 | 2\\|3 |
    <BLANKLINE>
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

from maze_envs.studies.document import Section, Table

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; }
.note { color: #555; font-style: italic; }
"""


def _markdown_block(block: str | list[str] | Table) -> str:
    if isinstance(block, Table):
        lines = ["| " + " | ".join(block.header) + " |", "|" + "---|" * len(block.header)]
        lines += [
            "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in block.rows
        ]
        return "\n".join(lines)
    if isinstance(block, list):
        return "\n".join(f"- {item}" for item in block)
    return block


def markdown_text(title: str, parts: Sequence[Section], plots: Sequence[str] = ()) -> str:
    """The sections as Markdown; ``plots`` are image files beside the document."""
    out = [f"# {title}"]
    for section in parts:
        if section.title:
            out.append(f"## {section.title}")
        out += [_markdown_block(block) for block in section.blocks]
        if section.title == "Behaviour" and plots:
            out.append("\n".join(f"![{name}]({name})" for name in plots))
    if plots and not any(s.title == "Behaviour" for s in parts):
        out.append("## Plots\n\n" + "\n".join(f"![{name}]({name})" for name in plots))
    return "\n\n".join(out) + "\n"


def _html_block(block: str | list[str] | Table) -> str:
    if isinstance(block, Table):
        head = "".join(f"<th>{html.escape(h)}</th>" for h in block.header)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
            for row in block.rows
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    if isinstance(block, list):
        return "<ul>" + "".join(f"<li>{html.escape(i)}</li>" for i in block) + "</ul>"
    return f"<p>{html.escape(block)}</p>"


def _image(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(path.name)}" src="data:image/png;base64,{data}">'


def html_page(
    title: str,
    parts: Sequence[Section],
    plots: Sequence[Path] = (),
    why_no_plots: str | None = None,
) -> str:
    """The sections as one self-contained HTML page, with the plots embedded."""
    body = [f"<h1>{html.escape(title)}</h1>"]
    figures = "".join(_image(p) for p in plots)
    if why_no_plots:
        figures = f'<p class="note">No plots: {html.escape(why_no_plots)}.</p>'
    for section in parts:
        if section.title:
            body.append(f"<h2>{html.escape(section.title)}</h2>")
        body += [_html_block(block) for block in section.blocks]
        if section.title == "Arms":
            body.append(figures)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )
