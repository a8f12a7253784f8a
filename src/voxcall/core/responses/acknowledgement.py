"""What the agent says while a slow server tool runs, so the user never hears dead air.

When a round's tools have not all finished ``tools.acknowledge_after_ms`` after they started, the response says
one short phrase from :data:`PHRASES`, in the user's language, and ends; the result is spoken when it lands. The
language is the session's transcription language when it names one, else the script of the user's last words (Han
characters: Chinese, kana: Japanese, Hangul: Korean), else English. Phrases take turns, so a second slow tool in one
conversation does not sound like a recording.
"""

from __future__ import annotations

import unicodedata

__all__ = ["PHRASES", "acknowledgement", "language_of"]

PHRASES: dict[str, tuple[str, ...]] = {
    "en": ("One moment, I'm checking.", "Just a second, I'm on it.", "Let me look that up, one moment."),
    "zh": ("请稍等，我查一下。", "稍等一下，我正在处理。"),
    "ja": ("少々お待ちください、確認します。",),
    "ko": ("잠시만요, 확인해 볼게요.",),
    "es": ("Un momento, lo estoy comprobando.", "Un segundo, ya lo miro."),
    "fr": ("Un instant, je vérifie.", "Une seconde, je regarde."),
    "de": ("Einen Moment, ich sehe nach.", "Eine Sekunde, ich prüfe das."),
    "it": ("Un momento, controllo subito.",),
    "pt": ("Um momento, estou verificando.",),
}
"""Acknowledgements by language (ISO 639-1), in the order they take turns."""

_SCRIPTS = (("CJK UNIFIED", "zh"), ("HIRAGANA", "ja"), ("KATAKANA", "ja"), ("HANGUL", "ko"))


def language_of(text: str) -> str | None:
    """The language a text's script gives away (Chinese, Japanese, Korean), or None for any other script."""
    found: str | None = None
    for char in text:
        if ord(char) < 0x2E80:
            continue
        name = unicodedata.name(char, "")
        for prefix, language in _SCRIPTS:
            if name.startswith(prefix):
                if language != "zh":  # kana or Hangul decide; Han characters alone mean Chinese
                    return language
                found = language
    return found


def acknowledgement(language: str | None, user_text: str, turn: int) -> str:
    """The phrase for the ``turn``-th acknowledgement of a session whose transcription ``language`` (or None) is
    set and whose user last said ``user_text``."""
    chosen = (language or "").split("-")[0].lower()
    if chosen not in PHRASES:
        chosen = language_of(user_text) or "en"
    phrases = PHRASES[chosen]
    return phrases[turn % len(phrases)]
