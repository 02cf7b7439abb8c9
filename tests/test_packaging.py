"""What a built reme-cc wheel carries: every agent prompt as package data, and metadata in the
current form (an SPDX licence expression; the build prints no deprecation warning)."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest

from support.plugin_copy import copy_plugin

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    src = copy_plugin(tmp_path_factory.mktemp("plugin") / "reme")
    out = src / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-w", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (path,) = out.glob("reme_cc-*.whl")
    return path, build.stdout + build.stderr


def test_wheel_ships_every_agent_prompt(wheel):
    from reme_cc.surfaces.agent import PACKAGE_DIR

    names = set(zipfile.ZipFile(wheel[0]).namelist())
    shipped = {f"reme_cc/agents/{p.name}" for p in (PACKAGE_DIR.parent / "agents").glob("*.md")}
    shipped |= {f"reme_cc/prompts/{p.name}" for p in (PACKAGE_DIR / "prompts").glob("*.md")}
    assert {"reme_cc/prompts/recorder.md", "reme_cc/agents/dream-integrator.md"} <= shipped
    assert shipped <= names, sorted(shipped - names)


def test_wheel_metadata_is_current_and_the_build_warns_nothing(wheel):
    path, log = wheel
    with zipfile.ZipFile(path) as zf:
        meta = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in zf.namelist())
    assert "License-Expression: Apache-2.0" in meta
    assert "BuildBackendWarning" not in log and "deprecat" not in log.lower(), log
