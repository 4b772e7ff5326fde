"""The exception the typing rules raise; the code generator adds the source location."""


class SemanticError(Exception):
    """A typing or shape mistake in a kernel (the message is for the user)."""
