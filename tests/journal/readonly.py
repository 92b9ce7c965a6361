"""Making files really read-only in tests, also when the tests run as root.

Root ignores file permissions (``CAP_DAC_OVERRIDE``), so a ``chmod`` alone would prove nothing:
:func:`as_unprivileged` drops the capabilities that bypass permission checks from this thread
for the duration of a block (Linux ``capset``), and restores them afterwards.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_CAPS_BYPASSING_PERMISSIONS = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
_VERSION_3 = 0x20080522


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _capabilities(update: int | None) -> int:
    """This thread's effective capabilities (low word); set them to ``update`` if given."""
    libc = ctypes.CDLL(None, use_errno=True)
    header = _Header(_VERSION_3, 0)
    data = (_Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget failed")
    previous = int(data[0].effective)
    if update is not None:
        data[0].effective = update
        if libc.capset(ctypes.byref(header), data) != 0:
            raise OSError(ctypes.get_errno(), "capset failed")
    return previous


@contextlib.contextmanager
def as_unprivileged() -> Iterator[None]:
    """File permissions apply inside the block, even to root (skips where that is impossible)."""
    if os.geteuid() != 0:
        yield
        return
    if not sys.platform.startswith("linux"):
        pytest.skip("running as root, and dropping capabilities needs Linux")
    try:
        saved = _capabilities(None)
        mask = 0
        for bit in _CAPS_BYPASSING_PERMISSIONS:
            mask |= 1 << bit
        _capabilities(saved & ~mask)
    except OSError as exc:
        pytest.skip(f"running as root and cannot drop CAP_DAC_OVERRIDE: {exc}")
    try:
        yield
    finally:
        _capabilities(saved)


def make_readonly(*paths: Path) -> None:
    """Remove every write permission from ``paths`` (files and folders)."""
    for path in paths:
        mode = path.stat().st_mode
        path.chmod(stat.S_IMODE(mode) & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def make_writable(*paths: Path) -> None:
    for path in paths:
        path.chmod(stat.S_IMODE(path.stat().st_mode) | stat.S_IWUSR)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of ``folder`` and its bytes (to prove nothing was written)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
