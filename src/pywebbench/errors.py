"""The one exception the CLI turns into a one-line message and a non-zero exit."""


class UserError(Exception):
    """Bad input or a missing prerequisite, detected before any measurement starts."""
