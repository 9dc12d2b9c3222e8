"""The shared code of the RNN encoder-decoder course.

Every chapter imports from here. Importing ``lib`` has no side effects: nothing is
downloaded, trained or moved to a device until a function asks for it.
"""


def __getattr__(name: str):
    """`lib.__version__`, read from `lib.version` only when asked: `import lib` imports nothing."""
    if name == "__version__":
        # Imported here, so that `import lib` loads no submodule (tests/test_reference.py).
        from lib.version import __version__

        return __version__
    raise AttributeError(f"module 'lib' has no attribute {name!r}")


def pretrained(device=None, download: bool = True, train: bool = True, progress: bool = True,
               attention: bool = False):
    """The course's reference model (see `lib.course.reference`): cached, downloaded or trained.

    attention=True: the attention chapter's model instead (`lib.experiments.long_inputs`), a
    one-layer attention decoder trained from scratch, got the same way.
    """
    if attention:
        # Imported here, as reference below: the attention model's machinery imports lib back.
        from lib.experiments.long_inputs import pretrained as _attention_model

        return _attention_model(device=device, download=download, train=train)
    # Imported here: at the top, `import lib` (which every submodule runs first) would load
    # torch and the whole model for lib.bleu too, and reference imports half of lib back.
    from lib.course.reference import pretrained as _pretrained

    return _pretrained(device=device, download=download, train=train, progress=progress)


def load_corpus(config=None):
    """The course's corpus (split, vocabularies, encoded pairs), built once and kept on disk by
    `lib.course.memo.load_corpus`; `lib.data.build_corpus` is the pipeline itself."""
    # Imported here, as in pretrained(): `import lib` stays free of torch and of the course.
    from lib.course.memo import load_corpus as _load_corpus

    return _load_corpus(config)
