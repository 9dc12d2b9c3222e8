"""The version of `lib`, written into release manifests and BLEU signatures (`lib.__version__`).

A module of its own so the course's machinery can name it without importing the `lib` package,
whose `pretrained` reaches back into that machinery."""

__version__ = "0.1.0"
