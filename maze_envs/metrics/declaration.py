"""What a metric is: a :class:`Metric` row names its function and how every table shows it.

A metric is one function whose docstring is its definition (marked :func:`metric_function`,
so the conformance test can tell a metric from a helper) and one row of
:data:`maze_envs.metrics.METRICS` saying where it is shown: the column it fills, its heading,
its format, which readers show it and for which environments. The readers
(:data:`READERS`) take their columns, headings, legends and formats from the rows, so a new
metric is its function and its row.

The function is named by an import string (``"module:function"``), resolved when first used,
as the command table names commands: a row may name a function above this floor (the analysis
metrics of :mod:`maze_envs.bench.analysis.escape_behaviour` read journaled games) without this
floor importing it.

Example:
    >>> row = Metric("stays", "maze_envs.metrics.decisions:stays", "stay", "STAYs / game")
    >>> print(row.legend)
    STAYs: decisions of the policy's play that were STAY (a fallback STAY is not counted).
    >>> row.format(3), row.format(None), Metric("x", row.function, "x", "x", "{:.0%}").format(0.5)
    ('3', '-', '50%')
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, Literal, TypeVar

#: The readers of the metrics: the runner's per-game tallies (``tally``: the results row of a
#: game), the results table's aggregates (``results``), the Markdown and HTML reports
#: (``report``), ``maze-envs analyze`` (``analyze``), the studies' reports (``studies``), the
#: viewer (``viewer``) and the decision replay report (``replay``).
Reader = Literal["tally", "results", "report", "analyze", "studies", "viewer", "replay"]
READERS: Final[tuple[Reader, ...]] = (
    "tally",
    "results",
    "report",
    "analyze",
    "studies",
    "viewer",
    "replay",
)
#: The kinds of rows a metric applies to: Maze Escape, AGI Maze (single labyrinth or set), the
#: generic rows of any other environment.
RowKind = Literal["escape", "agimaze", "generic"]
#: How a team row of ``maze-envs analyze`` combines its agents' values: ``sum``; ``recount``
#: (the function again over every agent's decisions); ``own`` (the team row computes it itself:
#: the union of cells, the earliest exit visit...).
Team = Literal["sum", "recount", "own"]

_F = TypeVar("_F", bound=Callable[..., Any])
_MARK: Final = "__maze_envs_metric__"
_ROLE: Final = re.compile(r":\w+:`~?([^`]+)`")


def metric_function(function: _F) -> _F:
    """Mark ``function`` as a metric's definition (its docstring is the definition): the
    conformance test fails when a marked function has no row of the table."""
    setattr(function, _MARK, True)
    return function


def is_metric_function(obj: Any) -> bool:
    """Whether ``obj`` is marked by :func:`metric_function`."""
    return callable(obj) and bool(getattr(obj, _MARK, False))


@dataclass(frozen=True)
class Metric:
    """One metric: its column, its function, and how each reader shows it.

    ``name`` is the column the metric fills in every row that holds it (``columns`` maps a
    reader to another column name where that reader's rows name it differently);
    ``function`` the import string of the function that defines it; ``header`` the short
    heading of text tables (``maze-envs analyze``); ``label`` the heading of reports, studies
    and the viewer; ``fmt`` the format of one value (``str.format``; None shows as ``-``, a
    bool as yes/no); ``unit`` what a value counts; ``readers`` the readers that show it
    (:data:`READERS`); ``kinds`` the rows it applies to; ``interval`` the interval the
    aggregates give it (``wilson`` for a rate of successes, ``bootstrap`` for a mean over
    games, None when it is not aggregated); ``over`` which games a mean is over; ``team`` how
    ``maze-envs analyze``'s team row combines the agents' values; ``text`` the kinds whose
    text tables show it (default: every kind of ``kinds``; the CSV holds every metric).
    """

    name: str
    function: str
    header: str
    label: str
    fmt: str = "{}"
    unit: str = "count"
    readers: tuple[Reader, ...] = ("analyze",)
    kinds: tuple[RowKind, ...] = ("escape",)
    interval: Literal["wilson", "bootstrap"] | None = None
    over: str = "all"
    team: Team = "sum"
    columns: Mapping[Reader, str] = field(default_factory=dict)
    text: tuple[RowKind, ...] | None = None

    def __post_init__(self) -> None:
        unknown = [r for r in self.readers if r not in READERS]
        if unknown:
            raise ValueError(
                f"metric {self.name!r}: unknown reader(s) {', '.join(unknown)}; "
                f"the readers are {', '.join(READERS)}"
            )
        module, colon, attribute = self.function.partition(":")
        if not colon or not module or not attribute:
            raise ValueError(
                f"metric {self.name!r}: function {self.function!r} is not 'module:function'"
            )

    @property
    def in_text(self) -> tuple[RowKind, ...]:
        """The kinds of rows whose text tables show the metric."""
        return self.kinds if self.text is None else self.text

    def column(self, reader: Reader) -> str:
        """The column that holds the metric in ``reader``'s rows."""
        return self.columns.get(reader, self.name)

    @cached_property
    def compute(self) -> Callable[..., Any]:
        """The function that defines the metric (imported on first use)."""
        module, _, attribute = self.function.partition(":")
        target: Any = importlib.import_module(module)
        for part in attribute.split("."):
            target = getattr(target, part)
        return target

    @property
    def legend(self) -> str:
        """The definition: the first paragraph of the function's docstring, on one line."""
        text = inspect.getdoc(self.compute) or ""
        return " ".join(text.split("\n\n", 1)[0].split())

    @property
    def plain_legend(self) -> str:
        """The legend as plain text (reST roles and literals unwrapped), for tables."""
        text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], self.legend)
        return text.replace("``", "")

    def format(self, value: Any) -> str:
        """One value as the tables show it (``-`` for None, yes/no for a bool)."""
        if value is None:
            return "-"
        if isinstance(value, bool):
            return "yes" if value else "no"
        return self.fmt.format(value)

    def shown_by(self, reader: Reader, kind: RowKind | None = None) -> bool:
        """Whether ``reader`` shows this metric (for rows of ``kind``, when given)."""
        return reader in self.readers and (kind is None or kind in self.kinds)
