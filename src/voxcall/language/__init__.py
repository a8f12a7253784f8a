"""Language rules as data, one module per language (:mod:`~voxcall.language.en`, :mod:`~voxcall.language.zh` …),
each a :class:`~voxcall.language.rules.Language`, and the few functions that read them. A second language is a second
module, listed in :data:`LANGUAGES`. This package imports nothing of voxcall's: every other part may use it (the local
model's lexicon, :mod:`voxcall.llm.local.lexicon`, still holds its own).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from voxcall.language import de, en, es, fr, it, ja, ko, pt, zh
from voxcall.language.rules import Language, SpokenForms
from voxcall.language.scripts import language_of, spaced

__all__ = ["ACKNOWLEDGEMENTS", "LANGUAGES", "SPOKEN_FORMS", "Language", "acknowledgement", "asking", "giving_up",
           "in_digits", "language_of", "spaced", "thinking"]

LANGUAGES: Mapping[str, Language] = MappingProxyType({
    language.code: language
    for language in (en.LANGUAGE, zh.LANGUAGE, ja.LANGUAGE, ko.LANGUAGE, es.LANGUAGE, fr.LANGUAGE, de.LANGUAGE,
                     it.LANGUAGE, pt.LANGUAGE)
})
"""Every language the server has rules for, by ISO 639-1 code."""

ACKNOWLEDGEMENTS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    code: language.acknowledgements for code, language in LANGUAGES.items()})
"""What the agent says while a slow server tool runs, by language, in the order the phrases take turns."""

SPOKEN_FORMS: Mapping[str, SpokenForms] = MappingProxyType({
    code: language.spoken_forms for code, language in LANGUAGES.items() if language.spoken_forms is not None})
"""How symbols are read aloud, by language (as :meth:`~voxcall.speech.voices.VoiceCatalog.language` names them)."""


def acknowledgement(language: str | None, user_text: str, turn: int) -> str:
    """The phrase for the ``turn``-th acknowledgement of a session whose transcription ``language`` (or None) is
    set and whose user last said ``user_text``, in the language :func:`_spoken` picks. Phrases take turns, so a
    second slow tool in one conversation does not sound like a recording."""
    phrases = ACKNOWLEDGEMENTS[_spoken(language, user_text)]
    return phrases[turn % len(phrases)]


def thinking(language: str | None, user_text: str, turn: int) -> str:
    """The ``turn``-th short phrase said while the model reads a prompt it was not ready for ("Let me see."), in the
    language :func:`acknowledgement` speaks, the phrases taking turns as its do."""
    phrases = LANGUAGES[_spoken(language, user_text)].thinking
    return phrases[turn % len(phrases)]


def asking(language: str | None, user_text: str, value: str) -> str:
    """The question asking for ``value`` (a parameter's name: "city") that the user's words left out, in the
    language :func:`acknowledgement` speaks."""
    return LANGUAGES[_spoken(language, user_text)].asking.format(value=value)


def giving_up(language: str | None, user_text: str) -> str:
    """What the voice says when a thinker did not answer in time, failed, or ended its reply having said nothing and
    called nothing (:mod:`voxcall.llm.local.duet`; a local model's reply too: :mod:`voxcall.llm.local.backend`),
    in the language :func:`acknowledgement` speaks."""
    return LANGUAGES[_spoken(language, user_text)].giving_up


def _spoken(language: str | None, user_text: str) -> str:
    """The language to speak to a session whose transcription ``language`` (or None) is set and whose user last said
    ``user_text``: that language when it names one with rules, else the language of the user's script (Han
    characters: Chinese, kana: Japanese, Hangul: Korean), else English."""
    chosen = (language or "").split("-")[0].lower()
    return chosen if chosen in LANGUAGES else language_of(user_text) or "en"


def in_digits(text: str) -> str:
    """``text`` with the spoken numbers of every language that has a reader written in Arabic digits (百分之三十 →
    ``30%``); everything else is left as it was."""
    for language in LANGUAGES.values():
        if language.digits is not None:
            text = language.digits(text)
    return text
