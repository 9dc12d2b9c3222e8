"""bench.rekey: the key line follows a change of the key's formula, and the report says so."""

import pytest

from bench import rekey
from bench.report import KEY_LINE

OLD, NEW = "0123456789abcdef", "fedcba9876543210"


def report(settings: str) -> str:
    return (f"# Benchmarks\n\n{KEY_LINE.format(key=OLD)} (a hash).\n\n## Training\n\n"
            f"The configuration (lib.course.reference: {settings}, batch 128 sentences).\n")


def test_the_key_line_is_replaced_and_the_note_says_nothing_was_remeasured():
    out = rekey.rekey(report(rekey.settings_text()), OLD, NEW, "the formula changed", "2026-01-01")
    assert KEY_LINE.format(key=NEW) + " (a hash)." in out and OLD in out  # named in the note
    assert KEY_LINE.format(key=OLD) not in out
    assert "> Re-keyed on 2026-01-01 from `0123456789abcdef`: the formula changed." in out
    assert "not measured again" in out and out.count("> Re-keyed") == 1
    again = rekey.rekey(out, NEW, "1" * 16, "again", "2026-01-02")
    assert again.count("> Re-keyed") == 1 and "2026-01-01" not in again


def test_a_report_of_other_settings_or_another_key_is_refused():
    with pytest.raises(SystemExit, match="settings"):
        rekey.rekey(report("emb_dim=1"), OLD, NEW, "x", "2026-01-01")
    with pytest.raises(SystemExit, match="does not name"):
        rekey.rekey(report(rekey.settings_text()), NEW, OLD, "x", "2026-01-01")
