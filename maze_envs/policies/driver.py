"""What a policy reaches of a Ray run's driver, from a worker on another node (issue 26: the
policies read this, not the runner's :mod:`maze_envs.bench.travel`, which sets it).

Objects that own a file of the driver (the LLM policies' response cache) live on the driver's
node; a worker playing a batch of the run reaches them with :func:`driver_call` (``await``
:func:`adriver_call` in an event loop). :func:`driver_link` says whether this process plays such
a batch. Nothing here imports Ray at module level.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any, Protocol


class Link(Protocol):
    """What a worker knows of its run's driver: ``services``, the driver's actor whose
    ``call(factory, key, method, args)`` runs ``factory(*key).method(*args)`` there, and
    ``cwd``, the driver's working folder (:class:`maze_envs.bench.travel.DriverLink`)."""

    @property
    def services(self) -> Any: ...

    @property
    def cwd(self) -> str: ...


_LINK: Link | None = None  # the link of the batch this Ray worker plays


def driver_link() -> Link | None:
    """The driver of the Ray batch this process is playing, or ``None`` (not on Ray)."""
    return _LINK


@contextlib.contextmanager
def use_link(link: Link) -> Iterator[None]:
    """:func:`driver_link` is ``link`` inside the block (a batch of the link's run plays)."""
    global _LINK
    previous, _LINK = _LINK, link
    try:
        yield
    finally:
        _LINK = previous


def driver_path(path: str | os.PathLike[str]) -> str:
    """``path`` as the driver names it absolutely (relative paths are the driver's)."""
    link = _LINK
    base = link.cwd if link is not None else os.getcwd()
    return os.path.join(base, os.fspath(path))


def driver_call(factory: Callable[..., Any], key: tuple[Any, ...], method: str, *args: Any) -> Any:
    """``factory(*key).method(*args)`` run in the driver's services actor (on the driver's
    node, where its files are), from a Ray worker (:func:`driver_link` is set)."""
    import ray

    link = _require_link()
    return ray.get(link.services.call.remote(factory, key, method, args))


async def adriver_call(
    factory: Callable[..., Any], key: tuple[Any, ...], method: str, *args: Any
) -> Any:
    """:func:`driver_call`, awaited (the event loop goes on with the other games meanwhile)."""
    link = _require_link()
    return await link.services.call.remote(factory, key, method, args)


def _require_link() -> Link:
    link = _LINK
    if link is None:
        raise RuntimeError("driver_call: this process is not playing a batch of a Ray run")
    return link
