"""Only what pyproject.toml cannot say. The agent prompts are package data in two folders without
Python code: reme_cc/prompts/ (pipeline-only prompts) and the plugin's top-level agents/ (Claude Code
reads it there), which the build maps into the package as reme_cc/agents/ so that the memory-agent
runner finds every prompt in any install (docs/ARCHITECTURE.md, "Agent files")."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["reme_cc*"]) + ["reme_cc.prompts", "reme_cc.agents"],
    package_dir={"reme_cc.agents": "agents"},
)
