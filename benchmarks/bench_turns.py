"""End of turn: how soon voxcall answers a user who has finished, and whether it waits for one who has not.

``voxcall serve --speech`` (its embedded defaults: Silero VAD, Whisper tiny.en, the default local model, Piper)
runs in its own process; this process plays the users, as ``bench_voice.py`` does (fresh sessions, 3–4 client
tools declared each, speech streamed in real time in 20–40 ms chunks, silence around it). The set is
``turn_set.py``: complete requests, and the same requests cut where a speaker pauses and said with a silence there
before the rest. Every clip is said under each turn detection side by side (one clip to every setting in turn, so
that the machine's load falls on all of them alike):

- ``server_vad`` with ``silence_duration_ms`` 500 (the default), and ``semantic_vad`` with each eagerness;
- complete requests: end of speech → first answer audio, median and p90;
- cut requests, under ``semantic_vad`` auto with a 400 ms pause and low with a 700 ms one: answers started before
  the end of the whole sentence (early answers; the target is none).

With ``--baseline SRC`` (the ``src`` folder of another checkout, for instance the commit before a change), a second
server runs that code beside the first, and every complete clip is also said to it under ``server_vad`` 500: the
two ``server_vad`` figures are then measured side by side.

Then, without a server, the judge alone (:class:`voxcall.llm.local.turn_end.TurnEndJudge`): every clip of the set
cut 100 ms into the silence after its words (where an eager turn transcribes), transcribed by Whisper and judged;
printed: how often a complete request is called finished (recall) and how often what is called finished is
complete (precision), how often each side is called unfinished (the eagerness's longest wait), and the judge's cost
per pause of the words. With Smart Turn installed (``voxcall models install smart-turn-v3.2``), the figures of the
sound alone and of the words and sound together (as the server judges) follow.

    python benchmarks/bench_turns.py [--voices all|piper] [--entries 20] [--llm scripted|default] \\
        [--baseline SRC]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from _server import VoxcallServe, cpu_seconds, percentile, verdict
from bench_voice import CHUNK_MS, Measure, measure, run_session, session_tools, voice_server
from turn_set import PAUSES_MS, TURNS
from voice_set import RATE, Clip, speak, speak_paused, voices
from voxcall.audio.codec import resample
from voxcall.core.hearing.turn_detection import EAGERNESS_TURN_END
from voxcall.speech import smart_turn

TARGET_MEDIAN_S = 0.45
TARGET_P90_S = 0.65
MAX_TOKENS = 48
PAUSE_MS = 100
"""Where an eager turn transcribes: this far into the silence after the words (``session.eager_turn_ms``)."""

SETTINGS: dict[str, dict[str, Any]] = {
    "server_vad 500": {"type": "server_vad", "silence_duration_ms": 500},
    **{f"semantic {eagerness}": {"type": "semantic_vad", "eagerness": eagerness}
       for eagerness in ("auto", "medium", "high", "low")},
}
"""The turn detections compared, by label."""
BASELINE = "server_vad 500 baseline"
"""The label of the ``--baseline`` server's sessions."""


def baseline_server(src: str, llm: str) -> VoxcallServe:
    """``voxcall serve`` run from the checkout whose ``src`` folder is ``src`` (first on ``PYTHONPATH``)."""
    if not (Path(src) / "voxcall" / "__init__.py").is_file():
        raise SystemExit(f"--baseline {src}: not a src folder holding voxcall")
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(Path(src).resolve())
    try:
        return voice_server(llm)
    finally:
        if previous is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = previous


def cut_clip(complete: str, cut: str, pause_ms: int, voice: Any) -> Clip:
    """``complete`` said with ``pause_ms`` of silence after the words ``cut``."""
    return speak_paused(cut, complete[len(cut):].strip(), pause_ms, voice)


async def run_all(url: str, baseline: str | None, settings: dict[str, dict[str, Any]], complete: list[Clip],
                  cut: dict[str, list[Clip]],
                  rng: random.Random) -> tuple[dict[str, list[Measure]], dict[str, list[Measure]]]:
    """A warm-up session (on each server), then each complete clip under every setting in turn (and to the
    ``baseline`` server under server_vad), in a shuffled order, then each cut clip under its eagerness; prints a
    line per session."""
    async def one(clip: Clip, label: str, turns: dict[str, Any], at: str = url) -> Measure:
        outcome = await run_session(at, clip, label, session_tools(rng), rng.choice(CHUNK_MS), MAX_TOKENS, turns)
        m = measure(outcome)
        total = f"{m.first_audio:5.2f} s" if m.first_audio is not None else " none  "
        flags = (" EARLY" if m.early else "") + (f" error={m.error}" if m.error else "")
        stages = " ".join(f"{name} {m.milestones[name]:.2f}" for name in ("speech_stopped", "transcript",
                                                                          "response.created") if name in m.milestones)
        print(f"  [{label:15}] {total}  ({stages})  {m.voice:18} {m.transcript!r}{flags}", flush=True)
        return m

    await one(complete[0], "warm-up", SETTINGS["semantic auto"])
    answered: dict[str, list[Measure]] = {label: [] for label in settings}
    if baseline is not None:
        await one(complete[0], "warm-up", SETTINGS["server_vad 500"], baseline)
        answered[BASELINE] = []
    for clip in complete:
        order: list[tuple[str, dict[str, Any], str]] = [(label, turns, url) for label, turns in settings.items()]
        if baseline is not None:
            order.append((BASELINE, SETTINGS["server_vad 500"], baseline))
        rng.shuffle(order)  # a new order for every clip: no setting always follows the same one
        for label, turns, at in order:
            answered[label].append(await one(clip, label, turns, at))
    early: dict[str, list[Measure]] = {eagerness: [] for eagerness in cut}
    for eagerness, clips in cut.items():
        for clip in clips:
            label = f"cut {PAUSES_MS[eagerness]} ms {eagerness}"
            early[eagerness].append(await one(clip, label, {"type": "semantic_vad", "eagerness": eagerness}))
    return answered, early


def judge_alone(clips: list[tuple[bool, Clip]]) -> None:
    """Transcribe each clip 100 ms into the silence after its words and judge it; print the judge's figures: the
    words alone, the sound alone (Smart Turn, when installed) and the two together, as the server judges."""
    from voxcall.llm.local.turn_end import SOUND_FINISHED, TurnEnd, load_judge
    from voxcall.speech import get_whisper

    judge = load_judge(smart_turn.load())
    if judge is None:
        print("the judge: its model is not installed (voxcall models install smollm2-135m)")
        return
    stt = get_whisper(None)
    verdicts: dict[bool, list[TurnEnd]] = {True: [], False: []}
    costs: list[float] = []
    for complete, clip in clips:
        said = clip.pcm[:clip.speech_ends[0] + 1]
        pcm = resample(np.concatenate([said, np.zeros(RATE * PAUSE_MS // 1000, np.int16)]), RATE, 16_000)
        heard = stt.hear(pcm, language="en", partial=False)
        assert heard is not None  # only a partial may be unsettled
        started = time.perf_counter()
        words = judge.judge_now(heard.text.strip())
        costs.append(time.perf_counter() - started)
        sound = judge.sound.probability(pcm) if judge.sound is not None else None
        verdicts[complete].append(dataclasses.replace(words, sound=sound))
    judge.close()

    def called(finished: Callable[[TurnEnd], bool]) -> dict[bool, list[bool]]:
        return {side: [finished(verdict) for verdict in verdicts[side]] for side in (True, False)}

    print(f"the judge alone ({len(verdicts[True])} complete, {len(verdicts[False])} cut, 100 ms into the pause):")
    print_finished("words", called(lambda v: dataclasses.replace(v, sound=None).finished))
    if judge.sound is None:
        print(f"  sound: Smart Turn is not installed (voxcall models install {smart_turn.NAME})")
    else:
        print_finished(f"sound (≥ {SOUND_FINISHED})", called(lambda v: (v.sound or 0.0) >= SOUND_FINISHED))
        print_finished("words and sound", called(lambda v: v.finished))
    unfinished = called(lambda v: v.unfinished)
    print(f"  unfinished: cut requests {sum(unfinished[False])}/{len(verdicts[False])}, complete requests "
          f"{sum(unfinished[True])}/{len(verdicts[True])} (these wait the eagerness's maximum)")
    print(f"  cost per pause of the words (transcript → verdict): median {statistics.median(costs) * 1000:.0f} ms, "
          f"p90 {percentile(costs, 90) * 1000:.0f} ms")


def print_finished(label: str, finished: dict[bool, list[bool]]) -> None:
    """Recall (complete requests called finished) and precision (of those called finished, the complete ones)."""
    right, wrong = sum(finished[True]), sum(finished[False])
    precision = f"{right / (right + wrong):.0%}" if right + wrong else "n/a"
    print(f"  {label:25} finished: recall {right}/{len(finished[True])} = {right / len(finished[True]):.0%}, "
          f"precision {precision}, cut requests called finished {wrong}/{len(finished[False])}")


def report(answered: dict[str, list[Measure]], early: dict[str, list[Measure]], cpu: float) -> list[bool]:
    """End of speech → first audio per setting and early answers on the cut sets; the verdicts."""
    verdicts = []
    print("end of speech → first audio, complete requests (median / p90, s):")
    for label, measures in answered.items():
        totals = [m.first_audio for m in measures if m.first_audio is not None]
        stopped = [m.milestones["speech_stopped"] for m in measures if "speech_stopped" in m.milestones]
        missing = len(measures) - len(totals)
        line = f"  {label:23} {statistics.median(totals):6.3f} / {percentile(totals, 90):6.3f}" if totals else \
            f"  {label:23} no answer audio"
        if stopped:
            line += f"   speech_stopped {statistics.median(stopped):6.3f} / {percentile(stopped, 90):6.3f}"
        if missing:
            line += f"   ({missing} without answer audio)"
        if label == "semantic auto" and totals:
            ok_median = statistics.median(totals) <= TARGET_MEDIAN_S and not missing
            ok_p90 = percentile(totals, 90) <= TARGET_P90_S and not missing
            line += (f"   targets median ≤ {TARGET_MEDIAN_S} {verdict(ok_median)}, p90 ≤ {TARGET_P90_S} "
                     f"{verdict(ok_p90)}")
            verdicts += [ok_median, ok_p90]
        print(line)
    for eagerness, measures in early.items():
        count = sum(m.early or m.early_audio for m in measures)
        print(f"cut requests, {PAUSES_MS[eagerness]} ms pause, semantic {eagerness}: early answers "
              f"{count}/{len(measures)}   target 0   {verdict(count == 0)}")
        verdicts.append(count == 0)
    print(f"server CPU: {cpu:.1f} s over the run")
    return verdicts


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--voices", choices=["all", "piper"], default="all", help="every installed voice, or Piper")
    parser.add_argument("--entries", type=int, default=len(TURNS), help="entries of the set to say")
    parser.add_argument("--llm", default="default", choices=["default", "scripted"], help="the server's backend")
    parser.add_argument("--seed", type=int, default=9, help="seed of chunk sizes and tool choices")
    parser.add_argument("--eagerness", default="auto,medium,high,low",
                        help="the semantic_vad eagerness levels to compare with server_vad 500 (comma-separated)")
    parser.add_argument("--judge-only", action="store_true", help="only the judge alone, no server")
    parser.add_argument("--baseline", metavar="SRC", help="the src folder of another voxcall checkout: its server "
                        "answers the complete clips under server_vad 500 beside this one's")
    args = parser.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"
    rng = random.Random(args.seed)
    all_voices = voices(espeak=args.voices == "all")
    entries = TURNS[:args.entries]
    print(f"voices: {', '.join(name for name, _ in all_voices)}; {len(entries)} entries; silences by eagerness "
          f"(finished / unsure / unfinished, ms): "
          + ", ".join(f"{e} {s.finished}/{s.unsure}/{s.unfinished}" for e, s in EAGERNESS_TURN_END.items()),
          flush=True)
    complete = [speak(text, voice) for text, _ in entries for voice in all_voices]
    cut = {eagerness: [cut_clip(text, words, pause, voice) for text, words in entries for voice in all_voices]
           for eagerness, pause in PAUSES_MS.items()}
    verdicts: list[bool] = []
    if not args.judge_only:
        server = voice_server(args.llm)
        baseline = baseline_server(args.baseline, args.llm) if args.baseline else None
        try:
            before = cpu_seconds(server.pid)
            settings = {label: turns for label, turns in SETTINGS.items()
                        if turns["type"] == "server_vad" or turns["eagerness"] in args.eagerness.split(",")}
            answered, early = asyncio.run(run_all(server.url, baseline.url if baseline else None, settings, complete,
                                                  cut, rng))
            cpu = cpu_seconds(server.pid) - before
        finally:
            server.stop()
            if baseline is not None:
                baseline.stop()
        print(f"\n=== end of turn (llm {args.llm}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs) ===")
        verdicts = report(answered, early, cpu)
    judge_alone([(True, clip) for clip in complete] + [(False, clip) for clip in cut["auto"]])
    if verdicts:
        print(f"targets met: {sum(verdicts)}/{len(verdicts)}")


if __name__ == "__main__":
    main()
