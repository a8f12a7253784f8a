"""The face a device shows while it speaks (``{"type": "llm", "emotion": …}``), read from the reply's own words.

The firmware draws one of a fixed set of emotions by name. A reply that carries an emoji (a profile's instructions
may ask the model for one at the start of each answer, as xiaozhi's own prompts do) shows the emotion of its first
emoji found in :data:`EMOJI`; a reply without one shows :data:`NEUTRAL`. While a tool runs the face shows
:data:`THINKING`, which is also what keeps a device's channel alive during a long tool.
"""

from __future__ import annotations

NEUTRAL = ("neutral", "🙂")
"""The face of a reply with no emoji of :data:`EMOJI`."""

THINKING = ("thinking", "🤔")
"""The face while a tool runs."""

EMOJI: dict[str, str] = {
    "😊": "happy", "🙂": "happy", "😀": "happy", "😃": "happy",
    "😆": "laughing", "😂": "laughing", "🤣": "laughing",
    "😄": "funny",
    "😢": "sad", "☹": "sad", "🙁": "sad",
    "😭": "crying",
    "😠": "angry", "😡": "angry",
    "😍": "loving", "🥰": "loving", "❤": "loving",
    "😳": "embarrassed",
    "😲": "surprised", "😮": "surprised",
    "😱": "shocked",
    "🤔": "thinking",
    "😉": "winking",
    "😎": "cool",
    "😌": "relaxed",
    "😋": "delicious",
    "😘": "kissy",
    "😏": "confident",
    "😴": "sleepy",
    "😜": "silly", "🙃": "silly",
    "😕": "confused", "🤨": "confused",
}
"""Emoji and the firmware's name of the emotion each shows."""


def face_of(text: str) -> tuple[str, str]:
    """The emotion and emoji a reply beginning with ``text`` shows: its first emoji of :data:`EMOJI`, else
    :data:`NEUTRAL`."""
    for char in text:
        emotion = EMOJI.get(char)
        if emotion is not None:
            return emotion, char
    return NEUTRAL
