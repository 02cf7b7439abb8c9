"""The base layer: the workspace (files, locks, the one file rule), settings, errors and the plugin's own
environment. Standard library only: the hooks import it with the system python3."""
