"""Zero-setup Python environment for the plugin. Standard library only.

Claude Code gives us a ``python3`` and two folders: ``CLAUDE_PLUGIN_ROOT`` (this source tree) and
``CLAUDE_PLUGIN_DATA`` (ours to write). On first use we build ``<data>/venv-<stamp>`` (``uv`` when it
is on PATH, else ``python3 -m venv`` + pip) and install the package from the plugin root into it
(a normal, non-editable install). ``<stamp>`` hashes the plugin version, pyproject.toml and the
Python version, so an upgrade builds a fresh env next to the old one and switches over atomically
(the ready-marker is written last) while running servers keep their old env. A file lock makes two
windows starting together build once; a failure is recorded (``install-error.json`` + log) and shown
by the MCP stand-in and ``reme-cc doctor``.

API for other surfaces: ``ensure_env()`` (build if needed, return the env's python), ``env_python()``
(path, may not exist yet), ``env_ready()``, ``env_bin(name)``, ``last_error()``.
Also ``python3 -m reme_cc.base.bootstrap [--rebuild|--status]`` with the plugin root on sys.path.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

MIN_PYTHON = (3, 10)
READY = ".reme-ready"
ERROR_FILE = "install-error.json"
LOG_FILE = "install.log"


class BootstrapError(Exception):
    """The environment could not be built; ``str()`` says what failed, where the log is, how to fix."""


def plugin_root() -> Path:
    root = os.environ.get("CLAUDE_PLUGIN_ROOT", "").strip()
    if root:
        return Path(root)
    here = Path(__file__).resolve().parents[2]  # reme_cc/base/bootstrap.py -> the folder holding reme_cc/
    if (here / ".claude-plugin").is_dir():  # the plugin's own source tree (launcher, hooks)
        return here
    try:  # `reme-cc env` inside the env: the plugin folder it was built from, recorded in its marker
        return Path(json.loads((Path(sys.prefix) / READY).read_text())["root"])
    except (OSError, ValueError, KeyError, TypeError):
        return here


def data_dir() -> Path:
    # REME_PLUGIN_DATA: exported by the SessionStart hook for commands run from Claude's Bash tool
    data = (os.environ.get("CLAUDE_PLUGIN_DATA") or os.environ.get("REME_PLUGIN_DATA") or "").strip()
    if data:
        return Path(data)
    # A terminal has neither: use the env Claude Code already built for this plugin (reme-<marketplace>,
    # reme-inline) rather than build a second one for minutes
    plugins = Path.home() / ".claude" / "plugins" / "data"
    built = sorted(plugins.glob(f"reme-*/venv-{stamp()}/{READY}"))
    return built[0].parent.parent if built else plugins / "reme-standalone"


def plugin_version(root: Path | None = None) -> str:
    root = root or plugin_root()
    try:
        return str(json.loads((root / ".claude-plugin" / "plugin.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return "0"


def stamp(root: Path | None = None) -> str:
    """What the env was built from: plugin version + pyproject.toml + python minor version."""
    root = root or plugin_root()
    h = hashlib.sha256()
    h.update(plugin_version(root).encode())
    try:
        h.update((root / "pyproject.toml").read_bytes())
    except OSError:
        pass
    h.update(f"{sys.version_info[0]}.{sys.version_info[1]}".encode())
    return h.hexdigest()[:12]


def venv_dir() -> Path:
    return data_dir() / f"venv-{stamp()}"


def _bin(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / (name + (".exe" if os.name == "nt" else ""))


def env_python() -> Path:
    """The interpreter to run reme with. ``REME_PYTHON`` (an existing interpreter with reme_cc installed,
    used by tests and developers) wins; else the plugin env's python (which may not exist yet)."""
    override = os.environ.get("REME_PYTHON", "").strip()
    return Path(override) if override else _bin(venv_dir(), "python")


def env_bin(name: str = "reme-cc") -> Path:
    """A console script of the env (e.g. ``reme-cc``), next to ``env_python()``."""
    return env_python().parent / name


def env_ready() -> bool:
    if os.environ.get("REME_PYTHON", "").strip():
        return env_python().exists()
    return (venv_dir() / READY).is_file() and env_python().exists()


def last_error() -> str | None:
    """The message of the last failed build for the current stamp, if any."""
    try:
        info = json.loads((data_dir() / ERROR_FILE).read_text())
    except (OSError, ValueError):
        return None
    return info.get("message") if info.get("stamp") == stamp() else None


# A repository the user opens is hostile input, and Claude Code starts reme in it: ``python -m`` and
# ``-c`` would put the working directory first on sys.path (a json.py there would run inside reme).
# Safe-path mode (3.11+) keeps it off and still honours PYTHONPATH; 3.10 has only isolated mode.
SAFE_PATH = "-P" if sys.version_info >= (3, 11) else "-I"
# Where reme's processes work: the plugin's own code, never a folder a repository controls.
TRUSTED_CWD = Path(__file__).resolve().parent
# The folder the session works in, handed to a process that runs in TRUSTED_CWD (see session_cwd).
SESSION_CWD_ENV = "REME_SESSION_CWD"


def module_argv(python: str | os.PathLike[str], module: str, *args: str) -> list[str]:
    """argv that runs ``python -m module args`` with no untrusted folder on its import path."""
    return [str(python), SAFE_PATH, "-m", module, *args]


def enter_trusted_cwd() -> None:
    """Work in TRUSTED_CWD from now on, keeping the session's folder (the old cwd) in the environment
    for ``session_cwd`` and the children."""
    try:
        os.environ[SESSION_CWD_ENV] = os.getcwd()
    except OSError:
        os.environ.pop(SESSION_CWD_ENV, None)  # the session's folder is gone: CLAUDE_PROJECT_DIR stands in
    os.chdir(TRUSTED_CWD)


def session_cwd() -> str:
    """The folder the session works in: the one handed over by ``enter_trusted_cwd`` (the MCP server),
    else the working directory (the CLI works from wherever it is run; Claude Code starts the server in
    the session's folder, measured equal to CLAUDE_PROJECT_DIR, which stands in when it was deleted)."""
    handed = os.environ.get(SESSION_CWD_ENV, "").strip()
    if handed:
        return handed
    try:
        return os.getcwd()
    except OSError:
        return os.environ.get("CLAUDE_PROJECT_DIR") or "/"


def reme_argv(*args: str) -> list[str]:
    """argv that runs ``reme-cc <args>`` in the plugin env. While the env is not built yet, it goes
    through the stdlib launcher, which builds the env first (minutes, first use only) and then runs."""
    if env_ready():
        return module_argv(env_python(), "reme_cc", *args)
    return [sys.executable or "python3", SAFE_PATH, "-S", str(plugin_root() / "scripts" / "launch.py"), *args]


def spawn_detached(argv: list[str], log_path: Path, *, env: dict[str, str] | None = None) -> int:
    """Start ``argv`` in its own session (setsid) with stdio on ``log_path`` and return its pid.
    Neither the hook's timeout nor the CLI's exit can kill it (a plain child would die with the hook).
    It works in TRUSTED_CWD: every argument it needs is passed as an absolute path."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=str(TRUSTED_CWD),
            env=dict(os.environ, **(env or {})),
            start_new_session=True,
            close_fds=True,
        )
    return proc.pid


def ensure_env(*, rebuild: bool = False, lock_timeout: float = 900.0, quiet: bool = True) -> Path:
    """Return the env's python, building it first when missing or stale. Raises BootstrapError."""
    if not rebuild and env_ready():
        return env_python()
    if sys.version_info < MIN_PYTHON:
        raise BootstrapError(
            f"reme needs Python >= {MIN_PYTHON[0]}.{MIN_PYTHON[1]} but `{sys.executable}` is "
            f"{sys.version.split()[0]}; install a newer python3 and restart Claude Code"
        )
    data = data_dir()
    try:
        data.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BootstrapError(
            f"cannot create the plugin data folder {data} ({exc.strerror}); check its permissions"
        ) from None
    from .workspace import file_lock  # stdlib too
    from .errors import LockedError

    try:
        with file_lock(data / "env.lock", lock_timeout, poll=0.5):
            if not rebuild and env_ready():  # another window finished it while we waited
                return env_python()
            _build(venv_dir(), quiet=quiet)
    except LockedError:
        raise BootstrapError(
            f"another process has been building the reme environment for over "
            f"{lock_timeout:.0f}s; wait, or delete {data} and retry"
        ) from None
    return env_python()


def _build(venv: Path, *, quiet: bool) -> None:
    data = venv.parent
    log_path = data / LOG_FILE
    root = plugin_root()
    t0 = time.monotonic()
    uv = shutil.which("uv")
    if uv:
        steps = [
            [uv, "venv", "--python", sys.executable, str(venv)],
            [uv, "pip", "install", "--python", str(_bin(venv, "python")), str(root)],
        ]
    else:
        pip = [str(_bin(venv, "python")), "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
        # the pip a distribution's venv brings (23.0 on Debian 12) still builds sdists such as jieba
        # with the deprecated `setup.py install`: a current pip first
        steps = [[sys.executable, "-m", "venv", str(venv)], [*pip, "--upgrade", "pip"], [*pip, str(root)]]
    steps.append([str(_bin(venv, "python")), "-c", "import reme_cc.surfaces.server, reme_cc.tools, claude_agent_sdk"])
    shutil.rmtree(venv, ignore_errors=True)  # a half-built env from a crash is never reused
    with open(log_path, "w") as log:
        log.write(f"reme env build {time.strftime('%Y-%m-%d %H:%M:%S')} root={root} stamp={venv.name}\n")
        for cmd in steps:
            log.write(f"$ {' '.join(cmd)}\n")
            log.flush()
            try:
                rc = subprocess.run(
                    cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=str(data)
                ).returncode
            except OSError as exc:
                rc, log_tail = -1, str(exc)
            else:
                log_tail = ""
            if rc != 0:
                log.flush()
                _fail(venv, cmd, rc, log_tail or _tail(log_path), log_path)
    elapsed = time.monotonic() - t0
    (venv / READY).write_text(
        json.dumps(
            {
                "env": venv.name,
                "root": str(root),
                "seconds": round(elapsed, 1),
                "built": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "installer": "uv" if uv else "pip",
            }
        )
    )
    (data / ERROR_FILE).unlink(missing_ok=True)
    for old in data.glob("venv-*"):  # previous versions; a server still running from one keeps its open files
        if old != venv:
            shutil.rmtree(old, ignore_errors=True)
    if not quiet:
        print(f"reme: environment ready in {elapsed:.0f}s at {venv}", file=sys.stderr)


def _tail(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    errors = [ln for ln in lines if "error" in ln.lower()]
    return (errors or lines or [""])[-1][:300]


def _fail(venv: Path, cmd: list[str], rc: int, detail: str, log_path: Path) -> None:
    step = (
        "creating the virtualenv"
        if ("venv" in cmd)
        else ("installing packages" if "install" in cmd else "checking the installed package")
    )
    hint = (
        "install the venv module (e.g. `sudo apt install python3-venv`)"
        if step.startswith("creating")
        else "check the network/proxy for pypi.org or free disk space"
    )
    message = (
        f"reme could not prepare its Python environment: {step} failed (exit {rc}: {detail}); "
        f"log: {log_path}; fix: {hint}, then run `python3 {plugin_root()}/scripts/launch.py --rebuild` "
        f"or restart Claude Code"
    )
    shutil.rmtree(venv, ignore_errors=True)
    (venv.parent / ERROR_FILE).write_text(
        json.dumps({"stamp": stamp(), "message": message, "command": cmd, "time": time.strftime("%Y-%m-%dT%H:%M:%S")})
    )
    raise BootstrapError(message)


def status() -> dict[str, object]:
    ready = env_ready()
    info: dict[str, object] = {
        "python": str(env_python()),
        "ready": ready,
        "data_dir": str(data_dir()),
        "stamp": stamp(),
        "error": last_error(),
    }
    marker = venv_dir() / READY
    if marker.is_file():
        try:
            info.update(json.loads(marker.read_text()))
        except ValueError:
            pass
    return info


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--status" in args:
        print(json.dumps(status(), indent=2))
        return 0
    try:
        py = ensure_env(rebuild="--rebuild" in args, quiet=False)
    except BootstrapError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(py)
    return 0


if __name__ == "__main__":
    sys.exit(main())
