"""The face a reply shows: its first emoji that names an emotion the firmware draws, else neutral."""

from __future__ import annotations

from voxcall.xiaozhi.emotions import EMOJI, NEUTRAL, face_of

FIRMWARE_EMOTIONS = {"neutral", "happy", "laughing", "funny", "sad", "angry", "crying", "loving", "embarrassed",
                     "surprised", "shocked", "thinking", "relaxed", "sleepy", "silly", "confused", "winking", "cool",
                     "delicious", "kissy", "confident"}
"""The emotions the firmware (and the open server's EMOJI_MAP) knows by name."""


def test_a_reply_shows_its_first_known_emoji() -> None:
    assert face_of("😂 That is a good one! 😢") == ("laughing", "😂")
    assert face_of("好的 😊，马上办。") == ("happy", "😊")
    assert face_of("Plain words. 🚀 rockets are no face.") == NEUTRAL


def test_every_emotion_is_one_the_firmware_draws() -> None:
    assert set(EMOJI.values()) <= FIRMWARE_EMOTIONS
    assert NEUTRAL[0] in FIRMWARE_EMOTIONS
