"""The surfaces: what runs reme — the CLI, the MCP server, the Claude Code hooks, doctor, the demo, the
MCP stand-in, the agent runner and the pipeline commands. Nothing below imports them."""
