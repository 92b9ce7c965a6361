"""Pillow for the spectator pictures of both games (``render_mode="rgb_array"``): one loader and
one font, so the two viewers (:mod:`maze_envs.escape.viewer`, :mod:`maze_envs.agimaze.viewer`)
fail with the same install hint and draw captions in the same type.

Example:
    >>> image, draw, _ = pillow()
    >>> load_font(12) is load_font(12)
    True
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any


def pillow() -> tuple[Any, Any, Any]:
    """Pillow's ``Image``, ``ImageDraw`` and ``ImageFont`` modules, or an ImportError saying
    how to install them."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:  # pragma: no cover - depends on the installation
        raise ImportError(
            "rgb_array rendering needs Pillow: pip install 'maze-envs[render]'"
        ) from None
    return Image, ImageDraw, ImageFont


@lru_cache(maxsize=4)
def load_font(size: int) -> Any:
    """Pillow's default font at ``size`` pixels (loaded once per size)."""
    _, _, fonts = pillow()
    return fonts.load_default(size=size)
