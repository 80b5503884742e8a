"""The one exception the CLI turns into a one-line message and a non-zero exit."""


class UserError(Exception):
    """Bad input or a missing prerequisite, detected before any measurement starts.

    One problem per line: a source with several (a config file with two bad values) raises one
    UserError("\\n".join(problems)), and the CLI prints each line as its own error line.
    """

    @property
    def problems(self) -> list[str]:
        """Its problems, one line each."""
        return str(self).splitlines() or [str(self)]
