"""Memory processes built on the workspace and the notes layer: day index pages (daily.py), evidence
protection for digest nodes (evidence.py), and — from other modules — transcripts, auto-memory, dream,
resources (the memory-agent runner is reme_cc/surfaces/agent.py, a surface). Import submodules directly; this package imports nothing."""
