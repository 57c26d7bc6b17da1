"""Errors a user can act on: the CLI prints their message, never a deep traceback."""


class KilnError(Exception):
    """Base class: the message alone tells the user what is wrong and where."""


class ConfigError(KilnError, ValueError):
    """A configuration file or override is invalid; the message names the key and its origin."""


class StageInputError(KilnError):
    """A stage's input folder is missing, unfinished, or fails verification."""


class ResumeRefused(KilnError):
    """A stage folder holds work made with another configuration."""


class AccountingError(KilnError):
    """Documents in != documents out + documents dropped."""


class UnreadableFileError(KilnError):
    """An input file cannot be read at all (truncated archive, broken footer, ...)."""


class DiskFullError(KilnError):
    """A write ran out of space (or quota); the message names the folder, the free space and what was needed."""
