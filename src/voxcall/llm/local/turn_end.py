"""``TurnEndJudge``: has the user finished? Judged from the words heard so far by the packaged local model.

The approach of LiveKit's text turn detector (itself a fine-tuned SmolLM), zero-shot with SmolLM2-135M: the user's
words are put in a user message of the model's chat template, left open, and the model is asked, in one forward
pass, what comes next. Two readings of that pass, made on a transcript from Whisper, which punctuates what it hears:

- ``ends``: the probability of the end-of-message token after the transcript as heard (punctuation included):
  "What's the weather in Paris?" 0.88, "I'd like to..." 0.02;
- ``can_end``: the probability that a sentence ends after its last word (a full stop, question or exclamation
  mark, or the end of the message next), read one token earlier, after the words without their final punctuation.
  Whisper writes "What is the capital of?" for a sentence cut after "of", which ``ends`` rates 0.69; ``can_end``
  rates "What is the capital of" 0.000.

With a :class:`Listener` (pipecat's Smart Turn, :mod:`voxcall.speech.smart_turn`, which the server loads when it
is installed), a third reading comes from the sound:

- ``sound``: the probability that the speaker ended the turn, from the intonation and rhythm of the last 8 s. It
  starts at the pause, on a thread of its own, while Whisper transcribes (on two cores it slows the transcript by
  about 40 ms, less than running it after would cost). Alone it calls most complete requests finished (19/20
  said by Piper) and half the cut ones too (10/20); with the words it lifts the judge's recall on complete
  requests from 60 % to 95 %, at 90 % precision (2 of 20 cut requests called finished, against none by the words
  alone; ``benchmarks/bench_turns.py``).

An utterance is :attr:`~TurnEnd.finished` when ``ends`` and ``can_end`` are both high, or when ``sound`` is high
and its last word can end a sentence; :attr:`~TurnEnd.unfinished` when its last word cannot end a sentence; and
neither (unsure) otherwise. The thresholds were measured on ``benchmarks/turn_set.py``
(complete requests and the same requests cut where a speaker pauses, said by every installed voice and transcribed
by Whisper tiny.en): see ``benchmarks/bench_turns.py``, which prints them.

The judge has its own llama.cpp server in this process (:class:`~voxcall.llm.local.embedded.EmbeddedServer`:
one slot with a small context, which keeps the chat template's system prompt, so each pause evaluates only the
user's words) and its own worker thread, so it never waits behind a reply of the answering model. The server
reports the :data:`JUDGE_CANDIDATES` likeliest next tokens; a probability is summed over those (the tokens
below them hold less than the thresholds need). Cost on two cores: about 100-160 ms a pause for the words (two
decodes), and 75 ms for the sound beside the transcription.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import re
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import httpx2
import numpy as np
import numpy.typing as npt

from voxcall.llm import catalog
from voxcall.llm.local.embedded import EmbeddedServer, ServerOptions
from voxcall.llm.local.vocabulary import Vocabulary

log = logging.getLogger(__name__)

JUDGE_MODEL = "smollm2-135m"
"""The catalog model the thresholds below were measured with."""

FINISHED_ENDS = 0.3
"""``ends`` at or above which (with ``can_end`` at or above :data:`FINISHED_CAN_END`) the user has finished."""
FINISHED_CAN_END = 0.05
"""``can_end`` below which an utterance is never called finished, whatever its punctuation says."""
UNFINISHED_CAN_END = 0.005
"""``can_end`` below which the last word cannot end a sentence: the user has not finished."""
SOUND_FINISHED = 0.6
"""``sound`` at or above which (with ``can_end`` at or above :data:`SOUND_CAN_END`) the user has finished."""
SOUND_CAN_END = 0.02
"""``can_end`` below which the sound alone never calls an utterance finished."""

SENTENCE_ENDS = frozenset({".", "?", "!", '."', '?"'})
"""Token texts (spaces stripped) that end a sentence."""
_FINAL_PUNCTUATION = re.compile(r"[\s.?!,;:…]+$")
_CONTEXT_TOKENS = 256  # the system prompt and the last words of a turn (:data:`_MAX_WORDS`), with room to spare
_MAX_WORDS = 40
_BATCH_TOKENS = 64  # the words of a pause are a few dozen tokens
_TIMEOUT_S = 30.0  # a judgment is a few dozen tokens: longer means the judge's server is stuck
JUDGE_CANDIDATES = 100
"""The likeliest next tokens the judge's server reports, over which a probability is summed."""



@dataclass(frozen=True, slots=True)
class TurnEnd:
    """The judge's reading of an utterance: ``ends`` (the message ends here) and ``can_end`` (a sentence can end
    after its last word), from the words, and ``sound`` (the speaker ended the turn; None: not heard), all
    probabilities (see the module's docstring)."""

    ends: float
    can_end: float
    sound: float | None = None

    @property
    def finished(self) -> bool:
        """The user has finished: answer after a short silence."""
        by_words = self.ends >= FINISHED_ENDS and self.can_end >= FINISHED_CAN_END
        by_sound = self.sound is not None and self.sound >= SOUND_FINISHED and self.can_end >= SOUND_CAN_END
        return by_words or by_sound

    @property
    def unfinished(self) -> bool:
        """The user has not finished: wait as long as the eagerness allows."""
        return self.can_end < UNFINISHED_CAN_END


class Listener(Protocol):
    """What hears the end of a turn in its sound (:class:`voxcall.speech.smart_turn.SmartTurn`)."""

    def probability(self, pcm16k: npt.NDArray[np.int16]) -> float:
        """How likely the turn that ``pcm16k`` (16 kHz speech ending in a pause) ends is over; blocking."""
        ...


def load_judge(sound: Listener | None = None) -> TurnEndJudge | None:
    """The judge with :data:`JUDGE_MODEL`, hearing ``sound`` too (None: the words alone); None when the judge's
    model is not installed."""
    model = catalog.entry_for(JUDGE_MODEL)
    path = catalog.installed(model) if model is not None else None
    return TurnEndJudge(path, sound=sound) if path is not None else None


class TurnEndJudge:
    """Judges whether an utterance is finished, with a GGUF chat model (the packaged SmolLM2-135M) loaded here,
    and ``sound`` (Smart Turn; None: the words alone).

    All sessions share one judge; its calls are serialised on its own worker thread, and the sound's on another.
    Raises ``OSError`` or ``ValueError`` when the model cannot be read, ``RuntimeError`` when llama.cpp cannot load
    it, ``ImportError`` without llama.cpp.
    """

    def __init__(self, model_path: Path, *, sound: Listener | None = None, threads: int = 1) -> None:
        self.sound = sound
        vocabulary = Vocabulary(model_path)
        self._vocabulary = vocabulary
        marker = "\x00"
        rendered = vocabulary.template.render([{"role": "user", "content": marker}], add_generation_prompt=False)
        self._prefix = vocabulary.tokenize(rendered.split(marker)[0], prompt_start=True)
        end = vocabulary.special_token("<|im_end|>")
        if end is None:
            raise ValueError(f"the model {model_path.name} has no <|im_end|> token to judge the end of a message by")
        self._end = np.zeros(vocabulary.n_vocab, dtype=bool)
        self._end[end] = True
        self._sentence_end = self._end | vocabulary.token_mask(lambda text: text.strip() in SENTENCE_ENDS)
        self._server = EmbeddedServer(model_path, ServerOptions(n_ctx=_CONTEXT_TOKENS, slots=1, threads=threads,
                                                                decode_threads=threads, batch=_BATCH_TOKENS,
                                                                cache_mib=0))
        self._client = httpx2.Client(base_url=self._server.url, transport=self._server.sync_transport(),
                                     timeout=_TIMEOUT_S)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="turn-end")
        self._listener = ThreadPoolExecutor(max_workers=1, thread_name_prefix="turn-end-sound")

    def listen(self, pcm16k: npt.NDArray[np.int16]) -> asyncio.Future[float] | None:
        """Start hearing how the turn so far (``pcm16k``, ending in the pause) sounds, on the sound's thread; the
        future is what :meth:`judge` takes. None without a sound model."""
        if self.sound is None:
            return None
        return asyncio.get_running_loop().run_in_executor(self._listener, self.sound.probability, pcm16k)

    async def judge(self, text: str, sound: Awaitable[float] | None = None) -> TurnEnd:
        """How finished ``text`` (the transcript of the turn so far) is, judged on the worker thread, with the
        ``sound`` :meth:`listen` started (a failure there leaves the words alone)."""
        words = await asyncio.get_running_loop().run_in_executor(self._executor, self.judge_now, text)
        if sound is None:
            return words
        try:
            heard = await sound
        except Exception:
            log.exception("hearing the end of the turn failed: the words judge alone")
            return words
        return dataclasses.replace(words, sound=heard)

    def judge_now(self, text: str) -> TurnEnd:
        """:meth:`judge` by the words, blocking, on the calling thread (one at a time: the model is not
        thread-safe)."""
        words = " ".join(text.split()[-_MAX_WORDS:])
        bare = _FINAL_PUNCTUATION.sub("", words)
        if not bare:
            return TurnEnd(ends=0.0, can_end=0.0)
        tokenize = self._vocabulary.tokenize
        bare_top = self._next_tokens(self._prefix + tokenize(bare))
        can_end = _probability(bare_top, self._sentence_end)
        # the prefix of the words stays cached: only the final punctuation is evaluated
        top = self._next_tokens(self._prefix + tokenize(words)) if bare != words else bare_top
        return TurnEnd(ends=_probability(top, self._end), can_end=can_end)

    def _next_tokens(self, prompt: list[int]) -> list[tuple[int, float]]:
        """The likeliest tokens after ``prompt`` with their probabilities, from the judge's server."""
        answer = self._client.post("/completion", json={"prompt": prompt, "n_predict": 1, "temperature": 0,
                                                        "n_probs": JUDGE_CANDIDATES, "cache_prompt": True})
        answer.raise_for_status()
        steps = answer.json().get("completion_probabilities") or [{}]
        return [(int(entry["id"]), math.exp(float(entry["logprob"]))) for entry in steps[0].get("top_logprobs", [])]

    def close(self) -> None:
        """Wait for the workers and stop the judge's server."""
        self._listener.shutdown(wait=True, cancel_futures=True)
        self._executor.shutdown(wait=True, cancel_futures=True)
        self._client.close()
        self._server.close()


def _probability(top: list[tuple[int, float]], mask: npt.NDArray[np.bool_]) -> float:
    """The probability of the tokens in ``mask`` together, among ``top``."""
    return sum(probability for token, probability in top if mask[token])
