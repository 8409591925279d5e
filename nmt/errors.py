"""The one exception type users see: the CLI prints its message on one line and exits 2."""


class NmtError(Exception):
    """A problem with the user's input (recipe, files, checkpoints), not a bug in nmt."""
