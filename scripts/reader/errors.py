"""The reader notebooks' one error, raised by every step of the conversion."""


class ReaderNotebookError(ValueError):
    """A chapter uses something the reader notebook cannot show faithfully."""
