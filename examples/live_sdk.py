# examples/live_sdk.py: the official openai SDK over GPT-Live, a spoken question and a task the voice hands to the app
# (python examples/live_sdk.py QUESTION.wav [BASE_URL]; the WAV: 16-bit mono, any rate; the server: voxcall serve)
import asyncio
import base64
import sys
import wave

import numpy as np
from openai import AsyncOpenAI
from openai.resources.live.live import AsyncLiveConnection

WAV = sys.argv[1]
BASE_URL = sys.argv[2] if len(sys.argv) > 2 else "http://127.0.0.1:8765/v1"
RATE = 24000                 # the session's audio: PCM16 mono at 24 kHz, both ways
CHUNK = RATE * 20 // 1000    # 20 ms per append, as a microphone delivers it
QUIET_S = 2.0                # GPT-Live has no "done" event: the answer is over when the voice has been quiet this long


def read_question(path: str) -> np.ndarray:
    """The WAV's samples at 24 kHz, with 1.5 s of silence after them so that the server's VAD ends the turn."""
    with wave.open(path) as wav:
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), np.int16)
        rate = wav.getframerate()
    pcm = np.interp(np.arange(len(pcm) * RATE // rate) * rate / RATE, np.arange(len(pcm)), pcm).astype(np.int16)
    return np.concatenate([pcm, np.zeros(RATE * 3 // 2, np.int16)])


def look_up(task: str) -> str:
    """The application's side of a delegated task (GPT-Live sends no task text: the app reads the transcript)."""
    return "Sunny and 21 degrees in Paris." if "weather" in task.lower() else "The application cannot do that."


async def speak(conn: AsyncLiveConnection, pcm: np.ndarray) -> None:
    """Stream ``pcm`` in real time, one 20 ms append at a time."""
    for offset in range(0, len(pcm), CHUNK):
        await conn.session.input_audio.append(audio=base64.b64encode(pcm[offset:offset + CHUNK].tobytes()).decode())
        await asyncio.sleep(0.02)


async def main() -> None:
    client = AsyncOpenAI(base_url=BASE_URL, api_key="unused-on-loopback")
    async with client.live.connect() as conn:
        await conn.session.start(session={"model": "gpt-live-1",
                                          "audio": {"format": {"type": "audio/pcm", "rate": 24000}}})
        speaking = asyncio.create_task(speak(conn, read_question(WAV)))
        heard, said, audio = "", "", 0
        answered = spoken_since = False                        # the app answered; the voice spoke since
        while True:
            try:
                event = await asyncio.wait_for(conn.recv(), QUIET_S if spoken_since else None)
            except TimeoutError:
                break                                           # the voice has said the task's answer
            if event.type == "error":
                raise SystemExit(f"error: {event.error.message}")
            elif event.type == "session.input_transcript.delta":
                heard += event.delta                            # what the server heard the user say
            elif event.type == "session.output_transcript.delta":
                said += event.delta                             # what the voice says, with its audio
                spoken_since = answered
            elif event.type == "session.output_audio.delta":
                audio += len(base64.b64decode(event.delta)) // 2
            elif event.type == "session.delegation.created":    # the voice hands the task to the app
                await conn.session.commentary.append(content=look_up(heard), delegation_id=event.delegation.id)
                answered = True
        await speaking
        print(f"you › {heard.strip()}\nvoice › {said.strip()}\n({audio / RATE:.1f} s of audio)")
        await conn.session.close()


asyncio.run(main())
