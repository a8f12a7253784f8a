"""The follow-up that relays a tool's result, written from the result itself.

After a tool result a tiny model is not to be trusted to say it: SmolLM2-135M answered "You're welcome" to 7 of 8
results in ``benchmarks/bench_local_tools.py``, and demonstrations that taught it to relay cost correct first
calls; and when a reply was opened with the result, it went on with "You're welcome" or a recomputed (wrong)
value. So the follow-up is not left to the model: :func:`relayed_reply` writes it from the outputs (the text as
it is, JSON as "key value" pairs, a bare value as "It's 96."; text in Chinese, Japanese or Korean as it is, with
its own full stop: "晴，28度。", never "It's 晴，28度."). A voice user who asked a question hears the answer, at once:
nothing is generated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from voxcall.language import language_of, spaced

MAX_RELAYED_CHARS = 240
"""Longer outputs are cut at a sentence (or word) boundary before this many characters: the rest is the
model's to summarize, or the client's to show."""

_MARKUP = re.compile(r"[`*#_>|\[\]{}<]+")  # marks nobody says, and the way into code or tool syntax
_SPACES = re.compile(r"\s+")


def relayed_reply(outputs: Sequence[str]) -> str:
    """The reply to tool ``outputs`` (one per result, in order): each said in words as a sentence, joined as their
    scripts join sentences; "" when there is nothing to say."""
    reply = ""
    for sentence in filter(None, map(_sentence, outputs)):
        reply += spaced(reply, sentence)
    return reply


def _sentence(output: str) -> str:
    text = _spoken(_decoded(output.strip()))
    if not text:
        return ""
    if len(text) > MAX_RELAYED_CHARS:
        cut = text[:MAX_RELAYED_CHARS]
        end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
        text = cut[:end + 1] if end > 0 else cut.rsplit(" ", 1)[0]
    language = language_of(text)  # Chinese, Japanese, Korean: the English wrapper and full stop would be foreign
    if " " not in text and language is None:
        text = f"It's {text}"
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?。！？" else text + ("。" if language in ("zh", "ja") else ".")


def _decoded(output: str) -> Any:
    """JSON outputs as their value, anything else as the text."""
    if output[:1] in ('{', '[', '"') or output in ("true", "false"):
        try:
            return json.loads(output)
        except ValueError:
            pass
    return output


def _spoken(value: Any) -> str:
    """A value as words: objects as "key value" pairs, lists joined, nothing a voice would read as markup."""
    if isinstance(value, dict):
        text = ", ".join(f"{str(key).replace('_', ' ')} {_spoken(v)}" for key, v in value.items()
                         if v not in (None, "", [], {}))
    elif isinstance(value, list):
        text = ", ".join(_spoken(v) for v in value)
    elif isinstance(value, bool):
        text = "yes" if value else "no"
    else:
        text = str(value)
    return _SPACES.sub(" ", _MARKUP.sub(" ", text)).strip(" ,;:")
