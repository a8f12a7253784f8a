"""The Mandarin front end: Chinese text → pinyin → the Baker voices' phoneme symbols (pypinyin, the ``[zh]`` extra)."""

from __future__ import annotations

import pytest

from tests.requirements import require_module
from voxcall.speech.mandarin import READINGS, MandarinFrontEnd, clauses

TABLE = {"ba": ("b", "a"), "yin": ("^", "in"), "liang": ("l", "iang"), "tiao": ("t", "iao"), "dao": ("d", "ao"),
         "bai": ("b", "ai"), "fen": ("f", "en"), "zhi": ("zh", "iii"), "san": ("s", "an"), "shi": ("sh", "iii"),
         "ni": ("n", "i"), "hao": ("h", "ao"), "en": ("^", "en"), "dian": ("d", "ian"), "er": ("^", "er"),
         "yi": ("^", "i")}
"""A few rows of a voice's pinyin table (the real one ships with the model)."""


@pytest.fixture
def front_end() -> MandarinFrontEnd:
    require_module("pypinyin")
    symbols = {symbol: index for index, symbol in enumerate(
        ["pad", "sil", "#0", "eos", *sorted({part for parts in TABLE.values() for part in parts}),
         *(f"{final}{tone}" for final in sorted({parts[1] for parts in TABLE.values()}) for tone in "12345")])}
    return MandarinFrontEnd(TABLE, symbols)


def test_clauses_split_at_punctuation() -> None:
    assert clauses("你好，把音量调到三十。好吗？\n") == ["你好", "把音量调到三十", "好吗"]
    assert clauses("……") == []


def test_numbers_are_read_and_misread_polyphones_put_right(front_end: MandarinFrontEnd) -> None:
    assert front_end.syllables("把音量调到三十") == ["ba3", "yin1", "liang4", "tiao2", "dao4", "san1", "shi2"]
    assert READINGS["调到"] == ("tiao2", "dao4")
    symbols = {index: symbol for symbol, index in front_end._symbols.items()}
    [said] = front_end.sentences("调到30%")
    assert [symbols[index] for index in said] == ["sil", "t", "iao2", "#0", "d", "ao4", "#0", "b", "ai3", "#0", "f",
                                                  "en1", "#0", "zh", "iii1", "#0", "s", "an1", "#0", "sh", "iii2",
                                                  "sil", "eos"]


def test_third_tone_sandhi_is_a_setting(front_end: MandarinFrontEnd) -> None:
    assert front_end.syllables("你好") == ["ni2", "hao3"]
    front_end.tone_sandhi = False
    assert front_end.syllables("你好") == ["ni3", "hao3"]


def test_latin_letters_and_symbols_are_not_spoken(front_end: MandarinFrontEnd) -> None:
    assert front_end.syllables("OK，你好🙂") == ["ni2", "hao3"]
    assert list(front_end.sentences("OK 🙂")) == []


def test_phonemes_frame_each_clause(front_end: MandarinFrontEnd) -> None:
    assert front_end.phonemes(["ni2", "hao3"]) == ["sil", "n", "i2", "#0", "h", "ao3", "sil", "eos"]
    assert front_end.phonemes(["n2"]) == ["sil", "^", "en2", "sil", "eos"]  # 嗯
    assert front_end.phonemes(["dianr3"]) == ["sil", "d", "ian3", "#0", "^", "er5", "sil", "eos"]  # erhua
    assert front_end.phonemes(["xyz1"]) == ["sil", "sil", "eos"]  # not in the table: dropped


def test_sentences_are_symbol_ids_per_clause(front_end: MandarinFrontEnd) -> None:
    said = list(front_end.sentences("你好，把音量调到30%。"))
    assert len(said) == 2
    symbols = {index: symbol for symbol, index in front_end._symbols.items()}
    assert [symbols[index] for index in said[0]] == ["sil", "n", "i2", "#0", "h", "ao3", "sil", "eos"]
    assert [symbols[index] for index in said[1]][:4] == ["sil", "b", "a3", "#0"]
