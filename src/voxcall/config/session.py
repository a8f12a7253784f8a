"""The ``session:`` section: what every session of the server gets, and its limits. Each default here is the
only one: the session core reads it from here."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from voxcall.config.kinds import AudioInput

DEFAULT_INSTRUCTIONS = (
    "You are a helpful voice assistant. Answer in one or two short, natural sentences that sound right "
    "when spoken: no markdown, lists, code or emoji. When a tool fits the request, use it rather than guessing; "
    "before a slow one, say a short sentence such as \"Let me check.\" If a tool fails, say so plainly and do not "
    "repeat the call. Ask when unsure."
)


class SessionOptions(BaseModel):
    """The ``session:`` section: what every realtime session of the server gets, and its limits."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    instructions: str = DEFAULT_INSTRUCTIONS
    """System instructions for sessions that set none."""
    prefetch: bool = True
    """Run a hidden follow-up response after tool output, claimed by the client's next ``response.create``."""
    max_speculative: int = Field(default=8, ge=1)
    """Hidden follow-up responses running at once, process-wide. Each holds a provider slot until it is claimed or
    dropped."""
    llm_timeout: float = Field(default=60.0, gt=0)
    """Seconds of silence from the LLM before a response fails. Counted before and between its events."""
    max_frame_bytes: int = Field(default=1_048_576, gt=0)
    """Largest client WebSocket message; larger ones get an error event."""
    max_history_items: int = Field(default=200, ge=1)
    """Conversation items a session keeps. Before a response, older ones are deleted from the conversation."""
    max_hidden_events: int = Field(default=2048, ge=1)
    """Events a hidden follow-up buffers before it pauses. It resumes when it is claimed."""
    max_tools: int = Field(default=128, ge=1, le=10_000)
    """Function tools a session (or one response) may declare; more is an error that names this limit."""
    eager_turn_ms: int = Field(default=100, ge=0, le=10_000)
    """A pause (ms) inside a spoken turn after which the answer is prepared hidden: claimed when the turn detector
    confirms the end of the turn, dropped when the user speaks on. 0 turns it off."""
    live_transcript_ms: int = Field(default=500, ge=0, le=10_000)
    """Speech (ms) between two partial transcripts of a turn still being spoken under server VAD
    (``conversation.item.input_audio_transcription.delta`` while the user speaks); 0 turns them off (the whole
    transcript then comes as one delta just before ``.completed``)."""
    max_turn_seconds: float = Field(default=30.0, gt=0, le=300)
    """Longest spoken turn under server VAD: at this length the turn ends (is committed, and the client told with
    ``voxcall.input_audio_buffer.turn_capped``) as if the speaker had paused. The default is one Whisper window, so
    that no transcription grows with a client that streams audio faster than it is spoken. Push-to-talk buffers are
    capped at 5 minutes without a commit."""
    events_per_second: int = Field(default=200, ge=1)
    """Client events a session may send per second, sustained (bursts up to one second's worth); more are dropped,
    the first of each burst with a ``rate_limit_exceeded`` error naming this limit."""
    responses_per_minute: int = Field(default=60, ge=1)
    """``response.create`` events a session may send per minute; more are refused with a ``rate_limit_exceeded``
    error (the session's ``rate_limits.updated`` events report what is left)."""
    max_conversation_bytes: int = Field(default=2_097_152, ge=1024)
    """Size (JSON bytes) of the conversation a response may send to the LLM; before a response, the oldest items
    are deleted until it fits (a call is never separated from its output); a single item larger than this is refused."""
    idle_timeout: float = Field(default=900.0, gt=0)
    """Seconds without a client event and with no response running after which the session is closed (code 1000,
    reason naming this limit)."""
    repair_tool_calls: bool = True
    """When a model's native tool call names no declared tool or its arguments break the schema, tell the model why
    and let it try once more within the same response (off: the call is only rejected)."""
    audio_input: AudioInput = "transcribe"
    """What the model is given of a spoken turn: ``transcribe``, the speech-to-text transcript; ``direct``, the audio
    itself (WAV), for a Chat Completions model that hears (``openai-chat`` only; implies ``model_inputs: [audio]``).
    The client still gets transcripts. A session may choose with ``audio.input.voxcall_audio_input``."""
    max_direct_audio_bytes: int = Field(default=4_194_304, ge=65_536)
    """Audio (WAV bytes) of the user's turns a session keeps for a model that hears it; past it, older turns keep
    only their transcripts. The newest turn is always kept."""
    max_image_bytes: int = Field(default=1_000_000, ge=1024)
    """Largest image a user message may carry: the length of its ``data:`` URL; a larger one is refused."""
