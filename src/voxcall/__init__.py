"""voxcall: a realtime voice-agent server, OpenAI Realtime compatible, whose heart is tool calling."""

__version__ = "0.1.0"
