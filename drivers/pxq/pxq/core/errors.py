"""The driver's error for bad input (exit code 2)."""


class InputError(ValueError):
    """Bad user input: the message names the problem and the fix."""
