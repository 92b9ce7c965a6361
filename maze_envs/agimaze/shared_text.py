"""A Gymnasium ``Text`` space that ``AsyncVectorEnv``'s shared memory carries correctly.

Gymnasium stores a ``Text`` observation in shared memory as character indices but reads it
back only once, when the vector env is built, into a tuple of strings: every later
observation of an ``AsyncVectorEnv(..., shared_memory=True)`` (the default, also used by
``gym.make_vec(..., vectorization_mode="async")``) shows that first, blank text. The AGI Maze
observations (``text``, ``map``, ``message``) use :class:`SharedText` instead, a ``Text`` for
every other purpose, whose shared memory is a numpy array of fixed-length strings (``<U{n}``):
the batched value is then a live view, exactly like a ``Box``'s, and each read (or the
vector env's default copy) holds the current texts.

The batched value of an async vector env is a ``numpy`` array of ``numpy.str_`` (a ``str``
subclass); a sync vector env gives a tuple of ``str``. Both compare equal element by element.

Example:
    >>> import multiprocessing
    >>> from gymnasium.vector.utils import (create_shared_memory, read_from_shared_memory,
    ...                                     write_to_shared_memory)
    >>> space = SharedText(max_length=16, min_length=0, charset="abc ")
    >>> memory = create_shared_memory(space, n=2, ctx=multiprocessing)
    >>> view = read_from_shared_memory(space, memory, n=2)
    >>> write_to_shared_memory(space, 1, "a cab", memory)
    >>> [str(text) for text in view]
    ['', 'a cab']
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)
from numpy.typing import NDArray


class SharedText(spaces.Text):
    """``gymnasium.spaces.Text`` whose values vector envs can pass through shared memory."""


def _string_dtype(space: SharedText) -> np.dtype[Any]:
    # UCS-4: four bytes per character, so a text of max_length characters always fits
    return np.dtype(("U", space.max_length))


@create_shared_memory.register(SharedText)
def _create(space: SharedText, n: int = 1, ctx: ModuleType | Any = None) -> Any:
    import multiprocessing

    context = ctx if ctx is not None else multiprocessing
    return context.Array("i", n * space.max_length)  # int32 cells: one per UCS-4 character


@read_from_shared_memory.register(SharedText)
def _read(space: SharedText, shared_memory: Any, n: int = 1) -> NDArray[np.str_]:
    return np.frombuffer(shared_memory.get_obj(), dtype=_string_dtype(space), count=n)


@write_to_shared_memory.register(SharedText)
def _write(space: SharedText, index: int, value: str, shared_memory: Any) -> None:
    if len(value) > space.max_length:  # numpy would cut it silently
        raise ValueError(f"text of {len(value)} characters is longer than {space.max_length}")
    view = np.frombuffer(shared_memory.get_obj(), dtype=_string_dtype(space))
    view[index] = value
