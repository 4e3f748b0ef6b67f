"""Writing files the user named: atomically, never replacing what they did not mean to replace.

The rules (docs/generate-upgrade.md, "Writing files"):

- Without ``--force`` nothing is written where any entry exists, a dangling symlink included.
- Only regular files are written: a directory, FIFO, socket or device is refused even with
  ``--force`` (``--file /dev/sda`` must never replace a device node).
- A symlink is written *through*: its target file gets the new content, the link stays a link.
  A link whose target does not exist is refused (the user named a link, not a place to create).
- An existing file keeps its owner, group, mode and hard links: a file with one link is replaced
  atomically by a temporary file given the same owner, group and mode; a file with several links,
  or whose owner cannot be given to a new file, is rewritten in place (same inode).
- A new file gets ``0666 & ~umask`` as ``open()`` would, not the 0600 of a temporary file.
"""

from __future__ import annotations

import contextlib
import os
import stat

from kubectl_dynamo.errors import InputError


def _lstat(path: str):
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise InputError(f"{path}: cannot write: {e.strerror}") from None


def file_type(mode: int, otherwise: str) -> str:
    """What a non-regular file is, for messages (``otherwise`` for a type not named here)."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return otherwise


def resolve_target(path: str) -> str:
    """The regular file a write to ``path`` lands in (a symlink's target), or ``path`` when nothing
    exists there; InputError for anything that is not a regular file."""
    st = _lstat(path)
    if st is None:
        return path
    target = path
    if stat.S_ISLNK(st.st_mode):
        target = os.path.realpath(path)
        st = _lstat(target)
        if st is None:
            raise InputError(f"{path}: a symlink to {target}, which does not exist; remove the link or name a file")
    if not stat.S_ISREG(st.st_mode):
        what = file_type(st.st_mode, "not a regular file")
        raise InputError(f"{path}: {what}, not a regular file; refusing to write it")
    return target


def write_new_file(path: str, text: str, force: bool) -> None:
    """Write ``text`` to ``path``; an existing entry (even a dangling symlink) only with ``force``."""
    if os.path.lexists(path) and not force:
        raise InputError(f"{path} exists; use --force to overwrite it")
    atomic_write(path, text)


def write_with_backup(path: str, text: str, backup: str) -> None:
    """``--write``: copy the file to ``backup`` (which must not exist, not even as a link), then write."""
    target = resolve_target(path)
    try:
        with open(target, "rb") as f:
            original = f.read()
        fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     stat.S_IMODE(os.stat(target).st_mode))
    except FileExistsError:
        raise InputError(f"{backup} exists; move it away first (it may be an earlier backup)") from None
    except OSError as e:
        raise InputError(f"{backup}: cannot write backup: {e.strerror}") from None
    with os.fdopen(fd, "wb") as f:
        f.write(original)
        f.flush()
        os.fsync(f.fileno())
    atomic_write(path, text)


def atomic_write(path: str, text: str) -> None:
    """Write ``text`` following the rules above; readers see the old or the new content."""
    target = resolve_target(path)
    data = text.encode("utf-8")
    st = _lstat(target)
    if st is not None and (st.st_nlink > 1 or not _can_give(st)):
        _write_in_place(target, data)
        return
    import tempfile  # not at module level: every manifest read imports this module; tempfile costs ~3 ms

    directory = os.path.dirname(os.path.abspath(target))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=directory)
    except OSError as e:
        raise InputError(f"{path}: cannot write: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if st is not None:
                if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
                    os.fchown(f.fileno(), st.st_uid, st.st_gid)
                os.fchmod(f.fileno(), stat.S_IMODE(st.st_mode))
            else:
                os.fchmod(f.fileno(), 0o666 & ~_umask())
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise InputError(f"{path}: cannot write: {e.strerror or e}") from None


def _can_give(st: os.stat_result) -> bool:
    """Whether a new file can carry the old one's owner and group (root, or they are ours)."""
    return os.geteuid() == 0 or (st.st_uid == os.geteuid() and st.st_gid in (os.getegid(), *os.getgroups()))


def _write_in_place(target: str, data: bytes) -> None:
    try:
        fd = os.open(target, os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.truncate()
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        raise InputError(f"{target}: cannot write: {e.strerror or e}") from None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
