"""Mandarin text as a Chinese voice's phoneme symbols: clauses of ``sil b a3 #0 … sil eos``.

The Baker voices (:mod:`voxcall.speech.baker`) read the phoneme set of the Baker corpus: a syllable is an initial
(``^`` when it has none) and a final carrying its tone (``ang4``; 5 is the neutral tone), ``#0`` separates
syllables, ``sil`` is a pause and ``eos`` ends the input. :class:`MandarinFrontEnd` makes them:

1. numbers in digits are read as words (:func:`~voxcall.speech.hanzi_numbers.say_numbers`: 30% → 百分之三十);
2. the text is cut into clauses at punctuation, each synthesised on its own (so the first is heard sooner);
3. each run of Chinese characters gets its pinyin from ``pypinyin`` (its phrase dictionary picks the reading of a
   polyphonic character from its neighbours; with third-tone sandhi, by default: 你好 is ni2 hao3), then the few
   readings it gets wrong in what devices are asked (:data:`READINGS`: 调到 is tiao2 dao4, not diao4) are put right;
4. each syllable is split by the voice's own pinyin table (shipped with the model) into its two symbols.

Anything that is neither Chinese nor a number (Latin letters, emoji) is not spoken.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence

from voxcall.speech.hanzi_numbers import say_numbers

__all__ = ["READINGS", "MandarinFrontEnd", "clauses"]

READINGS: Mapping[str, tuple[str, ...]] = {
    "调到": ("tiao2", "dao4"), "调大": ("tiao2", "da4"), "调小": ("tiao2", "xiao3"), "调高": ("tiao2", "gao1"),
    "调低": ("tiao2", "di1"), "调成": ("tiao2", "cheng2"), "调节": ("tiao2", "jie2"), "调整": ("tiao2", "zheng3"),
    "调暗": ("tiao2", "an4"), "调亮": ("tiao2", "liang4"),
}
"""Readings pypinyin gets wrong in device requests (found on the benchmark's sentences), by the characters read."""

_CLAUSE_END = re.compile(r"[，,、；;：:。．！!？?\n…]+")
_HAN = re.compile(r"[\u3400-\u9fff]+")
_SYLLABLE = re.compile(r"([a-zü]+)([1-5])")


def clauses(text: str) -> list[str]:
    """``text`` cut at punctuation into the clauses a voice says one by one (empty ones dropped)."""
    return [part.strip() for part in _CLAUSE_END.split(text) if part.strip()]


class MandarinFrontEnd:
    """Chinese text → phoneme symbols, for a voice whose pinyin table is ``pinyin_table`` (a syllable without its
    tone → its initial and final, ``"zhong": ("zh", "ong")``) and whose symbols are ``symbols``."""

    def __init__(self, pinyin_table: Mapping[str, Sequence[str]], symbols: Mapping[str, int], *,
                 tone_sandhi: bool = True) -> None:
        self._table = {syllable: (parts[0], parts[1]) for syllable, parts in pinyin_table.items()}
        self._symbols = symbols
        self._longest_reading = max(len(characters) for characters in READINGS)
        self.tone_sandhi = tone_sandhi
        """Whether third tones change before a third tone (你好: ni2 hao3), as speakers say them."""

    def sentences(self, text: str) -> Iterator[list[int]]:
        """The symbol ids of each clause of ``text`` that has something to say, in order."""
        for clause in clauses(say_numbers(text)):
            syllables = self.syllables(clause)
            if syllables:
                yield [self._symbols[symbol] for symbol in self.phonemes(syllables)]

    def syllables(self, clause: str) -> list[str]:
        """The tone-numbered pinyin of the Chinese characters in ``clause`` (``["ba3", "yin1", …]``)."""
        from pypinyin import Style, lazy_pinyin  # the [zh] extra

        said: list[str] = []
        for run in _HAN.findall(clause):
            readings = lazy_pinyin(run, style=Style.TONE3, neutral_tone_with_five=True, tone_sandhi=self.tone_sandhi)
            if len(readings) != len(run):
                continue  # a character pypinyin does not know: no reading per character, nothing safe to align
            said += self._corrected(run, readings)
        return [syllable for syllable in said if _SYLLABLE.fullmatch(syllable)]

    def _corrected(self, run: str, readings: list[str]) -> list[str]:
        """``readings`` of the characters of ``run`` with :data:`READINGS` applied (longest match first)."""
        fixed = list(readings)
        for start in range(len(run)):
            for length in range(min(self._longest_reading, len(run) - start), 1, -1):
                reading = READINGS.get(run[start:start + length])
                if reading is not None:
                    fixed[start:start + length] = reading
                    break
        return fixed

    def phonemes(self, syllables: Sequence[str]) -> list[str]:
        """The voice's symbols for ``syllables``: ``sil``, each syllable's initial and toned final with ``#0``
        between syllables, ``sil``, ``eos``. A syllable the table lacks is dropped (an erhua ``dianr3`` is said as
        ``dian3`` then ``er5``)."""
        symbols = ["sil"]
        for syllable in syllables:
            base, tone = syllable[:-1], syllable[-1]
            parts = [(base, tone)]
            if base == "n" or base == "ng":  # 嗯
                parts = [("en", tone)]
            elif base not in self._table and base.endswith("r") and base[:-1] in self._table:
                parts = [(base[:-1], tone), ("er", "5")]
            for part, part_tone in parts:
                if part in self._table:
                    initial, final = self._table[part]
                    symbols += [initial, final + part_tone, "#0"]
        if symbols[-1] == "#0":
            symbols[-1] = "sil"
        else:
            symbols.append("sil")
        return [*symbols, "eos"]
