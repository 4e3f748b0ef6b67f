"""Writing files the user named: atomically, never replacing what they did not mean to replace."""

from __future__ import annotations

import contextlib
import os
import tempfile

from .errors import InputError


def write_new_file(path: str, text: str, force: bool) -> None:
    """Write ``text`` to ``path`` atomically; never replace an existing file without ``force``."""
    if os.path.exists(path) and not force:
        raise InputError(f"{path} exists; use --force to overwrite it")
    atomic_write(path, text)


def atomic_write(path: str, text: str) -> None:
    """Temp file in the same directory, fsync, os.replace: readers see the old or the new file."""
    directory = os.path.dirname(os.path.abspath(path))
    mode = None
    if os.path.exists(path):
        mode = os.stat(path).st_mode & 0o7777
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    except OSError as e:
        raise InputError(f"{path}: cannot write: {e.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise InputError(f"{path}: cannot write: {e.strerror or e}") from None


def write_with_backup(path: str, text: str, backup: str) -> None:
    """Copy ``path`` to ``backup`` (mode and times kept), then replace ``path`` atomically."""
    import shutil

    try:
        shutil.copy2(path, backup)
    except OSError as e:
        raise InputError(f"{backup}: cannot write backup: {e.strerror}") from None
    atomic_write(path, text)
