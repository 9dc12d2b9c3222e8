"""lib.course.notebook.glue: myst-nb's glue in the book build, a plain display without myst-nb
(Colab)."""

from __future__ import annotations

import builtins
import sys
import types

import pytest

from lib.course import notebook


def test_uses_myst_nb_when_it_is_installed(monkeypatch):
    calls = []
    fake = types.ModuleType("myst_nb")
    fake.glue = lambda name, value, display=True: calls.append((name, value, display))
    monkeypatch.setitem(sys.modules, "myst_nb", fake)
    notebook.glue("bleu", 36.4, display=False)
    notebook.glue("k", 5)
    assert calls == [("bleu", 36.4, False), ("k", 5, True)]


@pytest.fixture
def no_myst_nb(monkeypatch):
    real_import = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name == "myst_nb" or name.startswith("myst_nb."):
            raise ImportError("No module named 'myst_nb'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "myst_nb", raising=False)
    monkeypatch.setattr(builtins, "__import__", refuse)


def test_without_myst_nb_it_displays_only_when_asked(no_myst_nb, monkeypatch):
    shown = []
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda value: shown.append(value))
    notebook.glue("hidden", 1.5, display=False)
    notebook.glue("shown", "Va !")
    assert shown == ["Va !"]


def test_a_generated_sentence_over_forty_words_is_refused(monkeypatch):
    calls = []
    fake = types.ModuleType("myst_nb")
    fake.glue = lambda name, value, display=True: calls.append(name)
    monkeypatch.setitem(sys.modules, "myst_nb", fake)
    notebook.glue("forty", " ".join(["word"] * 40), display=False)  # the limit itself is fine
    with pytest.raises(ValueError, match=r"glue 'long': 41 words, more than the 40"):
        notebook.glue("long", " ".join(["word"] * 40) + ", more.", display=False)
    notebook.glue("number", 123456.5, display=False)  # numbers are not sentences
    assert calls == ["forty", "number"]
