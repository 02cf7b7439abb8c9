"""The workspace: the user's memory folder, its layers, safe path resolution and atomic writes.

Standard library only: the Stop/SessionEnd hooks use this module with the system python3.
Every path a tool receives is workspace-relative POSIX (``daily/2026-06-20/x.md``); anything
that would resolve outside the workspace is refused before a byte is read or written.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import threading
import time
from pathlib import Path, PurePosixPath
from typing import BinaryIO
from collections.abc import Iterator

from .errors import LockedError, NotFoundError, PathError, ReMeError
from . import nofollow
from .location import workspace_root

LAYERS = (
    "session/claude_code",
    "session/dialog",
    "resource",
    "daily",
    "digest/personal",
    "digest/procedure",
    "digest/wiki",
    "metadata",
)
DIGEST_BUCKETS = ("personal", "procedure", "wiki")
# The workspace holds every note, transcript and the index of all their text: private to its owner.
PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
_GROUP_OTHER = 0o077
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

# Names Windows cannot hold; refused everywhere so a workspace stays portable.
_WINDOWS_RESERVED = {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(1, 10)} | {f"lpt{i}" for i in range(1, 10)}
_MAX_COMPONENT_BYTES = 255
_MAX_PATH_BYTES = 1024  # a whole relative path (PATH_MAX is 1024 on macOS, root included)


def default_root() -> Path:
    """REME_WORKSPACE, else the plugin option, else ~/.reme."""
    return Path(workspace_root())


def validate_component(name: str) -> str:
    """Check one path component (a file or folder name); return it unchanged or raise PathError."""
    if not name or name in (".", ".."):
        raise PathError(f"invalid path component {name!r}: use a plain file or folder name")
    if "\x00" in name:
        raise PathError("path contains a NUL byte; remove it")
    if "/" in name or "\\" in name:
        raise PathError(f"invalid name {name!r}: a name cannot contain '/' or '\\'")
    if any(ord(c) < 32 for c in name):
        raise PathError(f"invalid name {name!r}: control characters are not allowed")
    if any("\ud800" <= c <= "\udfff" for c in name):  # os.fsdecode's stand-ins for bytes that are not UTF-8
        raise PathError(f"invalid name {name!r}: it is not valid UTF-8; rename the file")
    stem = name.split(".", 1)[0].strip().lower()
    if stem in _WINDOWS_RESERVED:
        raise PathError(f"invalid name {name!r}: {stem.upper()} is a reserved device name on Windows")
    if name.endswith((" ", ".")):
        raise PathError(f"invalid name {name!r}: names cannot end with a space or a dot")
    if any(c in name for c in '<>:"|?*'):
        raise PathError(f'invalid name {name!r}: the characters <>:"|?* are not allowed')
    if len(name.encode("utf-8")) > _MAX_COMPONENT_BYTES:
        raise PathError(f"name too long ({len(name.encode())} bytes, max {_MAX_COMPONENT_BYTES}): shorten it")
    return name


def real_path(path: str | os.PathLike[str]) -> str:
    """``os.path.realpath``, which raises when a symlink on the way is replaced while it is read (a folder
    swapped for a link mid-call), as a PathError that says so: never an internal error."""
    try:
        return os.path.realpath(path)
    except OSError:
        raise PathError(f"{os.fspath(path)} changed while its path was checked; retry") from None


def own_stat(root: Path, rel: str) -> os.stat_result | None:
    """The stat of a file or folder of the workspace itself; None when it is gone or is reached through
    a symlink (a layer linked elsewhere included), which may point anywhere on the disk: the index and
    the resource pipeline follow none, as the tools refuse those that lead out."""
    path = root / rel
    try:
        st = os.stat(path, follow_symlinks=False)
        real = os.path.realpath(path)
    except OSError:
        return None
    return st if real == os.path.join(os.path.realpath(root), *rel.split("/")) else None


def team_metadata(personal_metadata: Path, folder: Path) -> Path:
    """Where the derived state (index, vectors, caches, locks, logs) of a repository's team memory
    ``folder`` lives: in the personal workspace's metadata/, one folder per repository (its real path
    hashed; its name, made printable, for a reader), never in the checkout, which anyone can commit to."""
    import hashlib

    real = os.path.realpath(folder)
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.basename(os.path.dirname(real)))[:40].strip("._") or "repo"
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    return Path(personal_metadata) / "team" / f"{name}-{digest}"


class Workspace:
    """A memory workspace rooted at ``root``. Layers are created on first use.

    ``metadata``: where its derived state lives when not in ``<root>/metadata`` -- a repository's team
    memory keeps it in the personal workspace (``team_metadata``): its ``<root>/metadata`` is then
    never read, written or made private (the repository's files are the team's, not this user's)."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        create: bool = True,
        metadata: str | os.PathLike[str] | None = None,
    ):
        path = Path(os.path.expanduser(str(root))) if root else default_root()
        if "\x00" in str(path):
            raise PathError("workspace path contains a NUL byte")
        self.root = path.absolute()
        if create:
            self.ensure_layers()
        elif not self.root.is_dir():
            raise NotFoundError(f"workspace {self.root} does not exist; run `reme-cc init` or set REME_WORKSPACE")
        self.root = self.root.resolve()
        self._metadata = Path(metadata).absolute() if metadata is not None else self.root / "metadata"
        self._notes_guard = threading.RLock()
        self._notes_depth = 0
        if metadata is None:
            self._make_private()
        else:
            _private_umask()
            try:
                (self._metadata / "logs").mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
            except OSError as exc:
                raise ReMeError(
                    f"cannot create {self._metadata}: {exc.strerror or exc}; check the personal workspace's permissions"
                ) from exc

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    # ---- layers -------------------------------------------------------------------------------
    def ensure_layers(self) -> None:
        try:
            _private_umask()
            for layer in LAYERS:
                (self.root / layer).mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
            (self.root / "metadata" / "logs").mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
        except PermissionError as exc:
            raise ReMeError(
                f"cannot create the workspace at {self.root}: permission denied; "
                "choose a writable folder with REME_WORKSPACE or --workspace"
            ) from exc
        except OSError as exc:
            raise ReMeError(f"cannot create the workspace at {self.root}: {exc.strerror}") from exc

    def linked_layers(self) -> dict[str, str]:
        """{layer: where it leads} for the layers that are symlinks (or lie under one): never used."""
        return {
            layer: os.path.realpath(self.root / layer)
            for layer in LAYERS
            if (self.root / layer).exists() and own_stat(self.root, layer) is None
        }

    def _make_private(self) -> None:
        """Folders 0700, files 0600. From now on this process creates everything private (the umask
        gains 077: SQLite's -wal/-shm, logs, locks, new day folders alike); a workspace left readable
        by others (made by an older version, or by hand) is tightened once, with a line in
        metadata/logs/workspace.log. Files under resource/ are the user's own and keep their modes
        (the 0700 folders already keep others out), as do files with other hard links."""
        _private_umask()
        try:
            if not os.stat(self.root).st_mode & _GROUP_OTHER:
                return
        except OSError:
            return
        dirs = files = 0
        failed: list[str] = []
        for folder, _subdirs, names in os.walk(self.root):
            if Path(folder) != self.root:  # the root last: a walk cut short is redone next time
                dirs += _chmod_private(Path(folder), PRIVATE_DIR, failed)
            if Path(folder) == self.root / "resource" or (self.root / "resource") in Path(folder).parents:
                continue
            for name in names:
                files += _chmod_private(Path(folder) / name, PRIVATE_FILE, failed)
        root_done = _chmod_private(self.root, PRIVATE_DIR, failed)
        note = "" if not failed else (f"; could not change {len(failed)} (e.g. {failed[0]}): fix them by hand "
                                      f"with chmod go-rwx")  # fmt: skip
        self.append_log(
            "workspace.log",
            f"made the workspace private (it was readable by other users): "
            f"{dirs + root_done} folder(s) set to 0700, {files} file(s) to 0600{note}",
        )

    def append_log(self, name: str, line: str, *, stamped: bool = True, rotate_at: int | None = None) -> None:
        """One line (timestamped unless ``stamped`` is False) in metadata/logs/<name>; past ``rotate_at``
        bytes the log becomes <name>.1 first (best effort: a read-only disk loses it)."""
        with contextlib.suppress(OSError):
            self.logs.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
            path = self.logs / validate_component(name)
            if rotate_at is not None:
                with contextlib.suppress(FileNotFoundError):
                    if path.stat().st_size > rotate_at:
                        os.replace(path, path.with_name(path.name + ".1"))
            with open(path, "a", encoding="utf-8", errors="replace") as fh:
                fh.write((f"{time.strftime('%Y-%m-%dT%H:%M:%S')} " if stamped else "") + f"{line}\n")

    @property
    def metadata(self) -> Path:
        return self._metadata

    @property
    def logs(self) -> Path:
        return self._metadata / "logs"

    # ---- paths --------------------------------------------------------------------------------
    def normalize(self, rel: str, *, allow_root: bool = False) -> str:
        """Validate a workspace-relative path and return its canonical POSIX form.

        Refuses empty paths, absolute paths, ``~``, ``..``, NUL bytes, backslashes and reserved names.
        """
        if not isinstance(rel, str):
            raise PathError("path must be a string")
        if "\x00" in rel:
            raise PathError("path contains a NUL byte; remove it")
        text = rel.strip()
        if text in ("", ".", "./"):
            if allow_root:
                return ""
            raise PathError("path is empty: give a workspace-relative path such as daily/2026-06-20/note.md")
        if "\\" in text:
            raise PathError(f"path {rel!r} uses '\\': use '/' as the separator")
        if text.startswith("/") or re.match(r"^[A-Za-z]:", text):
            raise PathError(f"path {rel!r} is absolute: give a path relative to the workspace {self.root}")
        if text.startswith("~"):
            raise PathError(f"path {rel!r} starts with '~': give a path relative to the workspace")
        parts = [p for p in PurePosixPath(text).parts if p not in ("", ".")]
        if any(p == ".." for p in parts):
            raise PathError(f"path {rel!r} contains '..': paths must stay inside the workspace")
        for part in parts:
            validate_component(part)
        norm = "/".join(parts)
        if len(norm.encode("utf-8")) > _MAX_PATH_BYTES:
            raise PathError(f"path too long ({len(norm.encode())} bytes, max {_MAX_PATH_BYTES}): use a shorter path")
        return norm

    def resolve(self, rel: str, *, allow_root: bool = False) -> Path:
        """Absolute path for a workspace-relative one; refuses anything that escapes the workspace,
        including through a symlink anywhere along the way."""
        norm = self.normalize(rel, allow_root=allow_root)
        target = self.root / norm if norm else self.root
        real = Path(real_path(target))
        if real != self.root and self.root not in real.parents:
            raise PathError(f"path {rel!r} resolves outside the workspace (through a symlink); refused")
        return target

    def relpath(self, path: str | os.PathLike[str]) -> str:
        """Workspace-relative POSIX path of an absolute path inside the workspace."""
        p = Path(path)
        if not p.is_absolute():
            p = self.root / p
        try:
            return p.relative_to(self.root).as_posix()
        except ValueError:
            real = Path(real_path(p))
            try:
                return real.relative_to(self.root).as_posix()
            except ValueError:
                raise PathError(f"{path} is outside the workspace {self.root}") from None

    def existing_file(self, rel: str) -> tuple[str, Path]:
        """(canonical path, absolute path) of an existing file of the workspace's own (the rule of
        ``open_file``: no symlink on the way, a regular file, no other hard link)."""
        norm, fh = self.open_file(rel)
        fh.close()
        return norm, self.root / norm

    def open_file(self, rel: str) -> tuple[str, BinaryIO]:
        """(canonical path, the file opened for reading). The one rule for every reader that shows a
        file's content: never through a symlink (anywhere on the way: it may point anywhere on the
        disk), never a pipe or device (a read would block), never a file with other hard links (it may
        be a file outside, which no path check can tell) — nofollow.open_file."""
        norm = self.normalize(rel)
        return norm, os.fdopen(nofollow.open_file(self.root, norm), "rb")

    def exists(self, rel: str) -> bool:
        return self.resolve(rel).exists()

    # ---- reading ------------------------------------------------------------------------------
    def read_bytes(self, rel: str) -> bytes:
        _norm, fh = self.open_file(rel)
        with fh:
            return fh.read()

    # ---- writing ------------------------------------------------------------------------------
    def write_bytes(self, rel: str, data: bytes) -> Path:
        """Atomically replace ``rel`` with ``data`` (temp file in the same folder, fsync, rename,
        fsync the folder). A crash leaves either the old file or the new one, never a mix."""
        norm = self.normalize(rel)
        try:  # each folder opened without following a symlink: one swapped in meanwhile cannot lead it elsewhere
            nofollow.write_file(self.root, norm, data)
        except OSError as exc:
            raise _os_error(exc, self.root / norm) from exc
        return self.root / norm

    def write_text(self, rel: str, text: str) -> Path:
        return self.write_bytes(rel, text.encode("utf-8"))

    # ---- locks --------------------------------------------------------------------------------
    def lock_path(self, name: str) -> Path:
        return self.metadata / "locks" / f"{validate_component(name)}.lock"

    def lock(self, name: str, timeout: float = 30.0) -> contextlib.AbstractContextManager[None]:
        """A named inter-process lock under metadata/locks/ (flock: released by the OS if the
        holder dies, so a killed process never blocks the next one)."""
        return file_lock(self.lock_path(name), timeout)

    @contextlib.contextmanager
    def notes_lock(self, timeout: float = 60.0) -> Iterator[None]:
        """Serialises read-modify-write changes of notes across threads and processes (MCP servers,
        recorders, dream subagents), so no update is lost. Re-entrant within a thread: a tool that
        calls another tool (the recorder renaming its card through move) does not block itself."""
        if not self._notes_guard.acquire(timeout=timeout):
            raise LockedError("another reme operation has been changing notes for too long; retry")
        try:
            if self._notes_depth:
                self._notes_depth += 1
                try:
                    yield
                finally:
                    self._notes_depth -= 1
                return
            with self.lock("notes", timeout):
                self._notes_depth = 1
                try:
                    yield
                finally:
                    self._notes_depth = 0
        finally:
            self._notes_guard.release()

    def is_locked(self, name: str) -> bool:
        """True while another process holds the named lock (e.g. a running recorder or dream)."""
        try:
            with self.lock(name, timeout=0):
                return False
        except LockedError:
            return True


def atomic_write(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        import tempfile  # lazy: the Stop hook's fast path usually writes nothing, and every ms counts there

        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:60]}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # read-only, full, or immutable folder: the same clear error as below
        raise _os_error(exc, path) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            with contextlib.suppress(OSError):
                os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _os_error(exc, path) from exc
        raise
    fsync_dir(path.parent)


def _private_umask() -> None:
    """From now on this process creates nothing readable by others (see Workspace._make_private)."""
    os.umask(os.umask(0) | _GROUP_OTHER)


def _chmod_private(path: Path, mode: int, failed: list[str]) -> int:
    """1 when ``path`` (not a symlink, no other hard link) was readable by others and is now ``mode``;
    a chmod that fails (another owner, an immutable file) is added to ``failed`` for the log."""
    try:
        st = os.lstat(path)
    except OSError:
        return 0  # gone meanwhile
    if not st.st_mode & _GROUP_OTHER or (not os.path.isdir(path) and st.st_nlink > 1) or os.path.islink(path):
        return 0
    try:
        os.chmod(path, (st.st_mode & 0o700) | (mode & 0o700))
        return 1
    except OSError as exc:
        failed.append(f"{path}: {exc.strerror or exc}")
        return 0


def fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def _os_error(exc: OSError, path: Path, action: str = "write") -> ReMeError:
    if exc.errno == errno.ENOSPC:
        return ReMeError(
            f"cannot {action} {path.name}: the disk is full; free some space and retry (nothing was changed)"
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        return ReMeError(f"cannot {action} {path.name}: permission denied (nothing was changed)")
    if exc.errno == errno.EROFS:
        return ReMeError(f"cannot {action} {path.name}: the workspace is on a read-only filesystem")
    return ReMeError(f"cannot {action} {path.name}: {exc.strerror or exc}")


@contextlib.contextmanager
def file_lock(path: Path, timeout: float = 30.0, poll: float = 0.05) -> Iterator[None]:
    """Exclusive flock on ``path``; raises LockedError after ``timeout`` seconds (0 = try once)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
    except OSError as exc:  # e.g. a read-only workspace: say so instead of a traceback
        raise _os_error(exc, path, "lock") from exc
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockedError(
                        f"{path.name} is held by another reme process; wait for it to finish and retry"
                    ) from None
                time.sleep(poll)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
