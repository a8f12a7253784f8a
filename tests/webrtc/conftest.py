"""The calls' tests share the phone calls' speech models fixture (``voice``: Silero VAD, Whisper tiny.en, Piper)."""

from tests.twilio.conftest import voice

__all__ = ["voice"]
