"""Files and folders beneath a root, reached one name at a time without following a symlink.

Standard library only (the hooks use the workspace with the system python3). A path check followed
by an open, rename or unlink by path leaves a window in which a folder can be swapped for a symlink
(a repository's ``.reme/`` is anyone's to shape): then the change lands wherever the symlink points.
Here every folder on the way is opened with ``O_NOFOLLOW`` from the one before it, and the last step
(open, rename, unlink) is made relative to that folder's descriptor: a symlink anywhere is refused, a
swap after the walk changes nothing, since the descriptor still names the folder that was checked.

A file is read only when it is itself a regular file with no other hard link (a hard link may be any
file on the disk); pipes and devices are refused without blocking (``O_NONBLOCK``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat as st
from pathlib import Path

from .errors import InvalidInputError, NotFoundError, PathError, ReMeError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
_READ = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | _CLOEXEC
_PRIVATE_DIR = 0o700


def _split(rel: str) -> tuple[str, str]:
    parent, _, name = rel.rpartition("/")
    return parent, name


def _refused(root: Path, rel: str, exc: OSError) -> ReMeError:
    """The clear error for a walk or open that failed on ``rel``."""
    if exc.errno == errno.ENOENT:
        return NotFoundError(f"{rel} does not exist; use list to see what is there")
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        here = root
        for part in rel.split("/"):  # name the symlink (or file) in the way
            here = here / part
            if os.path.islink(here):
                return PathError(
                    f"{rel} goes through the symlink {os.path.relpath(here, root)}; reme never follows "
                    "a symlink (it may point anywhere on the disk): refused — put a copy there instead"
                )
            if here.exists() and not here.is_dir() and str(here) != str(root / rel):
                return PathError(f"{rel}: {os.path.relpath(here, root)} is a file, not a folder")
        return PathError(f"{rel} is reached through a symlink; refused")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return ReMeError(f"cannot open {rel}: permission denied")
    return ReMeError(f"cannot open {rel}: {exc.strerror or exc}")


def open_dir(root: Path, rel: str, *, create: bool = False) -> int:
    """A descriptor of the folder ``root/rel`` (``rel`` canonical, "" for the root), each name opened
    without following a symlink; ``create`` makes missing folders (0700)."""
    fd = os.open(root, _DIR)
    try:
        for part in rel.split("/") if rel else ():
            try:
                nxt = os.open(part, _DIR | _NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, _PRIVATE_DIR, dir_fd=fd)
                nxt = os.open(part, _DIR | _NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except OSError as exc:
        os.close(fd)
        raise _refused(root, rel, exc) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def lstat(root: Path, rel: str) -> os.stat_result | None:
    """The entry ``rel`` itself (a symlink is not followed; nor is one on the way: then None)."""
    parent, name = _split(rel)
    try:
        dfd = open_dir(root, parent)
    except ReMeError:
        return None
    try:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False) if name else os.fstat(dfd)
    except OSError:
        return None
    finally:
        os.close(dfd)


def kind(mode: int) -> str | None:
    """Why an entry is not opened as a file or folder (None: it is a regular file or a folder)."""
    if st.S_ISREG(mode) or st.S_ISDIR(mode):
        return None
    if st.S_ISLNK(mode):
        return "a symlink: never followed (it may point anywhere on the disk)"
    return "not a regular file (a pipe, socket or device): never opened"


def open_file(root: Path, rel: str) -> int:
    """A read-only descriptor of the regular file ``root/rel`` with a single link; PathError for a
    symlink, a pipe or device, or a hard-linked file, InvalidInputError for a folder."""
    parent, name = _split(rel)
    dfd = open_dir(root, parent)
    try:
        fd = os.open(name, _READ, dir_fd=dfd)
    except OSError as exc:
        raise _refused(root, rel, exc) from None
    finally:
        os.close(dfd)
    try:
        info = os.fstat(fd)
        if st.S_ISDIR(info.st_mode):
            raise InvalidInputError(f"{rel} is a folder, not a file; use list to see its contents")
        if not st.S_ISREG(info.st_mode):
            raise PathError(f"{rel} is {kind(info.st_mode)}; refused")
        if info.st_nlink > 1:
            raise PathError(
                f"{rel} has {info.st_nlink} hard links and may be a file outside the workspace; refused "
                "(put a copy there instead of a link)"
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_file(root: Path, rel: str, data: bytes) -> None:
    """Atomically replace ``root/rel`` with ``data`` (temp file, fsync, rename, fsync the folder), the
    folders on the way created and none of them reached through a symlink."""
    parent, name = _split(rel)
    dfd = open_dir(root, parent, create=True)
    try:
        with contextlib.suppress(FileNotFoundError):
            if st.S_ISDIR(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
                raise PathError(f"{rel} is a folder; cannot write a file there")
        write_at(dfd, name, data)
    finally:
        os.close(dfd)


def write_at(dfd: int, name: str, data: bytes) -> None:
    """The atomic replacement of ``name`` in the folder ``dfd`` (OSError as raised)."""
    tmp = f".{name[:60]}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=dfd)
    try:
        try:
            with contextlib.suppress(OSError):  # keep the mode of the file replaced
                os.fchmod(fd, os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode & 0o7777)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        raise
    with contextlib.suppress(OSError):
        os.fsync(dfd)


def rename(root: Path, src: str, dst: str) -> None:
    """Rename the entry ``src`` (a file, folder or symlink: never followed) to ``dst``, replacing a file
    there; the folders up to ``dst`` are created."""
    (sp, sn), (dp, dn) = _split(src), _split(dst)
    sfd = open_dir(root, sp)
    try:
        dfd = open_dir(root, dp, create=True)
        try:
            os.replace(sn, dn, src_dir_fd=sfd, dst_dir_fd=dfd)
            for fd in {sfd, dfd}:
                with contextlib.suppress(OSError):
                    os.fsync(fd)
        finally:
            os.close(dfd)
    finally:
        os.close(sfd)


def remove(root: Path, rel: str) -> None:
    """Delete the entry ``rel``: a file or symlink is unlinked, a folder removed with everything in it
    (descriptor by descriptor: no symlink inside is followed)."""
    parent, name = _split(rel)
    dfd = open_dir(root, parent)
    try:
        if st.S_ISDIR(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
            _remove_tree(dfd, name)
        else:
            os.unlink(name, dir_fd=dfd)
    finally:
        os.close(dfd)


def _remove_tree(dfd: int, name: str) -> None:
    fd = os.open(name, _DIR | _NOFOLLOW, dir_fd=dfd)
    try:
        with os.scandir(fd) as entries:
            for entry in list(entries):
                if entry.is_dir(follow_symlinks=False):
                    _remove_tree(fd, entry.name)
                else:
                    os.unlink(entry.name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=dfd)


def walk(root: Path, rel: str, *, recursive: bool = True) -> list[tuple[str, os.stat_result]]:
    """Every entry under the folder ``rel`` (not itself; only its own entries unless ``recursive``) as
    (canonical path, its own stat), folders before their contents; no symlink is followed."""
    out: list[tuple[str, os.stat_result]] = []

    def visit(fd: int, prefix: str) -> None:
        with os.scandir(fd) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # gone meanwhile
            path = f"{prefix}/{entry.name}" if prefix else entry.name
            out.append((path, info))
            if recursive and st.S_ISDIR(info.st_mode):
                try:
                    sub = os.open(entry.name, _DIR | _NOFOLLOW, dir_fd=fd)
                except OSError:
                    continue  # swapped for a symlink or gone meanwhile
                try:
                    visit(sub, path)
                finally:
                    os.close(sub)

    fd = open_dir(root, rel)
    try:
        visit(fd, rel)
    finally:
        os.close(fd)
    return out
