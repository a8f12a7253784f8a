"""Whisper on an utterance-sized window: encode the utterance's own frames, not a 30 s window.

faster-whisper pads every input to Whisper's 30 s window, so a 2 s question pays for encoding 28 s of padding.
:class:`UtteranceDecoder` calls CTranslate2's Whisper directly with the utterance's log-mel frames plus
:data:`TAIL_PAD_S` of silence (and at least :data:`MIN_WINDOW_S` in all), which makes the encoder several times
cheaper. Whisper was trained on full windows only, and on a window that ends right after the speech the decoder
can loop ("turn off the lights. Turn off the lights. ..."); so the decoder runs in timestamp mode (it closes each
segment with a timestamp, then ends) with a token budget proportional to the audio, and a result is accepted only
when the decoder closed it with a timestamp within the budget, no segment starts after the audio or repeats the one
before, and it does not compress like a loop (faster-whisper's own measure). Otherwise
:meth:`UtteranceDecoder.decode` answers None and the caller runs the padded path, as before.

A decode that passes these checks but that Whisper was unsure of (an average log probability under
faster-whisper's -1.0: :attr:`Decoded.sure` false) is still answered: faster-whisper's own path samples such
words again at rising temperatures, five hypotheses each, and on the 19–20 such utterances among 330 (five voices,
``bench_voice.py``'s and ``bench_stt.py``'s requests) that took 0.28–1.87 s each against the sized window's 0.05 s,
and heard no better (word errors: sized window 51–52; the retries 44 in one run and 63 in the next, being random;
one greedy pass on the 30 s window 59), and in ``bench_voice.py`` it made the slowest first audio of eight sessions
(1.14–1.27 s). The caller keeps it from an English-only model; a multilingual model's still takes the padded
path, where it was measured to hear better (:mod:`voxcall.speech.stt`).

With a multilingual model and no language given, the language is detected on the same encoded window; a guess
below :data:`_DETECTION_CONFIDENCE` leaves the decision to the padded path (the short window hears languages
less surely than Whisper's own).
"""

from __future__ import annotations

import itertools
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

TAIL_PAD_S = 2.0
"""Padding after the last frame of speech: room for the decoder to hear that the speech has ended."""
MIN_WINDOW_S = 8.0
"""Shortest window: with 5 s the decoder looped on 4 of 36 short requests spoken by piper, with 8 s on none."""
MAX_FRAMES = 3000
"""Whisper's whole window (30 s at 100 frames/s); longer audio goes to the padded path, which seeks through it."""

# faster-whisper's defaults for WhisperModel.transcribe, so both paths judge a decode alike.
_COMPRESSION_RATIO_THRESHOLD = 2.4
_LOG_PROB_THRESHOLD = -1.0
_NO_SPEECH_THRESHOLD = 0.6
_MAX_LENGTH = 448  # Whisper's decoder context
# Budget (``max_length`` past the prompt): fast speech is ~5 text tokens/s and timestamps add two per segment, but
# CTranslate2 stops Whisper at about half of it. Measured: with 10/s and at least 16, "What's the weather in Paris?"
# heard 100 ms after its last word stopped before its closing timestamp (46 of 80 such requests did, and went to
# the padded path, 0.6 s slower); with 20/s and at least 32, 78 of 80 settle.
_TOKENS_PER_SECOND = 20
_MIN_TOKENS = 32
_DETECTION_CONFIDENCE = 0.5  # measured: espeak's Spanish on an 8 s window, "th" 0.43 then "es" 0.24; 30 s: "es"


@dataclass(frozen=True, slots=True)
class Decoded:
    """A settled decode of the sized window: the text ("" for silence), its language, and whether Whisper was
    sure of it by faster-whisper's threshold on the average log probability per token (silence is: faster-whisper
    skips it without retrying)."""

    text: str
    language: str
    sure: bool


class UtteranceDecoder:
    """Greedy or beam decoding of one utterance (≤ 30 s) on a window sized to it, sharing a loaded WhisperModel."""

    def __init__(self, model: Any, *, beam_size: int) -> None:
        """``model`` is a ``faster_whisper.WhisperModel``; its CTranslate2 model, features and tokenizer are reused."""
        self._model = model
        self._beam_size = beam_size
        self._multilingual = bool(model.model.is_multilingual)
        self._prompts: dict[str, tuple[Any, list[int], list[int]]] = {}  # by language: its token is in the prompt

    def decode(self, audio: npt.NDArray[np.float32], language: str | None) -> Decoded | None:
        """What ``audio`` (16 kHz float32) says, or None when the padded path must decide. ``language`` None:
        detected from the encoded window (multilingual models; English otherwise)."""
        import ctranslate2  # type: ignore[import-untyped]  # comes with faster-whisper

        features = self._model.feature_extractor(audio)  # (n_mels, frames + 1); the last frame is padding
        frames = features.shape[-1] - 1
        if frames > MAX_FRAMES:
            return None
        window = min(MAX_FRAMES, max(frames + int(TAIL_PAD_S * 100), int(MIN_WINDOW_S * 100)))
        window += window % 2  # the encoder's convolution halves the frames
        padded = np.full((features.shape[0], window), _silence(features[:, :frames]), dtype=np.float32)
        padded[:, :frames] = features[:, :frames]
        encoded = self._model.model.encode(ctranslate2.StorageView.from_array(padded[None]))
        if not self._multilingual:
            language = "en"  # an English-only model takes no language token; faster-whisper likewise says "en"
        elif language is None:
            token, probability = self._model.model.detect_language(encoded)[0][0]
            if probability < _DETECTION_CONFIDENCE:
                return None  # the padded path detects on the 30 s window Whisper was trained on
            language = str(token)[2:-2]  # "<|es|>"
        tokenizer, prompt, suppress = self._prompt(language)
        budget = min(_MAX_LENGTH - len(prompt), max(_MIN_TOKENS, int(_TOKENS_PER_SECOND * frames / 100)))
        result = self._model.model.generate(
            encoded, [prompt], beam_size=self._beam_size, max_length=len(prompt) + budget, return_scores=True,
            return_no_speech_prob=True, suppress_blank=True, suppress_tokens=suppress)[0]
        tokens: list[int] = result.sequences_ids[0]
        avg_logprob = result.scores[0] * len(tokens) / (len(tokens) + 1)  # as faster-whisper computes it
        if result.no_speech_prob > _NO_SPEECH_THRESHOLD and avg_logprob < _LOG_PROB_THRESHOLD:
            return Decoded("", language, sure=True)  # the padded path skips it as silence
        # Whisper closes a finished segment with a timestamp; a decode that stops without one was cut short
        # (measured: "turn off the lights in the living" and nothing more) or ran out of budget. A low average log
        # probability alone is the caller's to weigh (see the module's docstring).
        closed = bool(tokens) and tokens[-1] >= tokenizer.timestamp_begin and len(tokens) < budget
        if not closed or self._repeats(tokens, frames / 100, tokenizer):
            return None
        text: str = tokenizer.decode(tokens).strip()
        if _compression_ratio(text) > _COMPRESSION_RATIO_THRESHOLD:
            return None
        return Decoded(text, language, sure=avg_logprob >= _LOG_PROB_THRESHOLD)

    def _prompt(self, language: str) -> tuple[Any, list[int], list[int]]:
        """faster-whisper's tokenizer for transcribing ``language``, its prompt (timestamp mode: no
        ``<|notimestamps|>``) and the tokens to suppress; made once per language."""
        if language not in self._prompts:
            from faster_whisper.tokenizer import Tokenizer  # type: ignore[import-untyped]  # optional: [local] extra
            from faster_whisper.transcribe import get_suppressed_tokens  # type: ignore[import-untyped]

            tokenizer = Tokenizer(self._model.hf_tokenizer, self._multilingual, task="transcribe", language=language)
            self._prompts[language] = (tokenizer, list(tokenizer.sot_sequence),
                                       list(get_suppressed_tokens(tokenizer, [-1])))
        return self._prompts[language]

    def _repeats(self, tokens: list[int], seconds: float, tokenizer: Any) -> bool:
        """Whether the decode ran on past the speech: a segment that starts after the audio, or says the last again.

        Timestamp mode gives ``<|start|> words <|end|>`` per segment; such runs are how a too-short window loops.
        """
        first = tokenizer.timestamp_begin
        said: list[int] | None = None
        start = 0.0
        for is_time, group in itertools.groupby(tokens, key=lambda token: token >= first):
            if is_time:
                start = (list(group)[-1] - first) * 0.02  # Whisper's timestamps step by 20 ms
                continue
            words = list(group)
            if start >= seconds or words == said:
                return True
            said = words
        return False


def _silence(features: npt.NDArray[np.float32]) -> float:
    """The log-mel value digital silence has next to ``features``: Whisper's own padding, as it was trained.

    Whisper clips log10 power to 8 below the loudest frame (floor 1e-10) and maps x to (x + 4) / 4, so silence sits
    at max(-1.5, max - 2). In a trial on 108 spoken requests (8 s windows), silence padding settled more of them on
    the sized window than faster-whisper's zero features (73 against 69), and their raw transcripts had 13 % word
    error rate against 17.5 %.
    """
    return max(-1.5, float(features.max()) - 2.0) if features.size else -1.5


def _compression_ratio(text: str) -> float:
    """How well ``text`` compresses; a high ratio means a repetition loop (faster-whisper's own measure)."""
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data)) if data else 0.0
