"""One exception family. Messages say what went wrong and what to do about it."""


class ReMeError(Exception):
    """Base class: every error a user may see. `str(err)` is one actionable line."""


class PathError(ReMeError):
    """A path that is invalid or resolves outside the workspace."""


class NotFoundError(ReMeError):
    """A file or folder that does not exist."""


class ConflictError(ReMeError):
    """The operation would overwrite or contradict existing state (target exists, text matches twice)."""


class InvalidInputError(ReMeError):
    """Input that is malformed (bad date, binary where text is expected, broken YAML on write)."""


class EvidenceError(ReMeError):
    """A digest update that would drop Sources or digest-to-digest links."""


class LockedError(ReMeError):
    """Another process holds a lock this operation needs (e.g. a dream already running)."""


class AgentError(ReMeError):
    """A memory agent failed (model error, timeout, refused tool call)."""
