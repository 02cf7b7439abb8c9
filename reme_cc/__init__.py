"""reme-cc: file-native long-term memory for Claude Code.

This module must stay import-light: the hooks import the package with the system python3,
before the plugin's own environment (and its dependencies) exists.
"""

__version__ = "0.1.0"
