"""One xiaozhi device's session: its messages and microphone as the session's commands, the session's events as what
the device shows and plays.

:class:`DeviceSession` is the protocol's codec over a hosted session (:mod:`voxcall.serving.host`), its speech played
by a :class:`~voxcall.xiaozhi.playout.DeviceSpeech`:

- ``hello``: answered at once with the session's id and the audio the server sends; a device that serves MCP tools
  has them listed (:class:`~voxcall.xiaozhi.device_mcp.DeviceMcp`) and offered to the model beside the agent's server
  tools (:mod:`voxcall.xiaozhi.device_tools`);
- ``listen``/``start``: the microphone is heard from now on (its Opus decoded per packet: 20, 40 or 60 ms), the turn's
  end found as the mode says (``manual``: by the user, else by the server's turn detection, ``semantic_vad``
  included); ``listen``/``stop``: what was said is committed and answered, and the microphone is no longer heard;
  audio outside a listening window is dropped;
- ``listen``/``detect``: the wake word opens the conversation (answered only with ``xiaozhi.greet_on_wake``); any
  other text is a user turn, typed;
- ``abort``, and in realtime mode the user's voice over the device's: the speech stops, the response is cancelled
  and its message cut to what the device played (the core truncates, :mod:`voxcall.core.playout`);
- events: the user's words (``stt``), each response's speech (``tts`` ``start``, ``sentence_start``, 60 ms packets,
  ``stop``) and face (``llm``: :mod:`voxcall.xiaozhi.emotions`); while a tool runs, a device sent nothing for
  ``xiaozhi.keepalive_seconds`` is sent the ``thinking`` face, so its 120 s silence timeout never ends the channel.

A turn that arrives while the device's tools are being listed waits for them (at most :data:`TOOLS_WAIT` seconds), so
the model can use them from the first request. Everything the session is given goes through its inbox, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from voxcall.config import XiaozhiSettings
from voxcall.core.commands import (
    AddItem,
    AppendAudio,
    Cancel,
    ClearAudio,
    ClearOutputAudio,
    CommitAudio,
    Respond,
    UpdateSettings,
)
from voxcall.core.conversation.items import MessageItem
from voxcall.core.errors import SessionError
from voxcall.core.events import (
    CallState,
    Event,
    OutputAudio,
    ResponseCreated,
    ResponseDone,
    SpokenClause,
    ToolCallMoved,
    TranscriptCompleted,
)
from voxcall.core.tools.toolbox import Toolbox
from voxcall.serving.frames import Message, json_text
from voxcall.serving.host import CloseConnection, Hosted, SessionHost
from voxcall.xiaozhi import messages
from voxcall.xiaozhi.agent import DeviceAgent
from voxcall.xiaozhi.device_mcp import DeviceError, DeviceMcp
from voxcall.xiaozhi.device_tools import offer
from voxcall.xiaozhi.emotions import THINKING, face_of
from voxcall.xiaozhi.messages import Abort, Hello, Listen, ListenMode, Mcp, MessageError, Ping, read_message
from voxcall.xiaozhi.opus import DECODED_RATE, Microphone, OpusError
from voxcall.xiaozhi.playout import DeviceSpeech

log = logging.getLogger(__name__)

TOOLS_WAIT = 3.0
"""Seconds a typed turn waits for the device's tools to be listed before it is answered without them."""

Frame = Message | bytes
"""What the device is sent: a JSON message (a text frame) or an Opus packet (a binary frame)."""


@dataclasses.dataclass(frozen=True)
class DeviceLink:
    """How the session reaches its device: ``send_text`` and ``send_bytes`` write frames, ``close`` ends the
    connection; ``vision_url`` is where the device's camera tool may send its photo."""

    send_text: Callable[[str], Awaitable[None]]
    send_bytes: Callable[[bytes], Awaitable[None]]
    close: CloseConnection
    vision_url: str


class DeviceSession:
    """One device and its session; :meth:`greet` its ``hello``, :meth:`receive` each frame after it, :meth:`close`."""

    def __init__(self, host: SessionHost, link: DeviceLink, agent: DeviceAgent, device_id: str) -> None:
        settings = host.shared.settings
        self._options: XiaozhiSettings = settings.xiaozhi
        self._link = link
        self._agent = agent
        self._device_id = device_id
        self._speech = DeviceSpeech(self._send, self._options.sample_rate)
        self._toolbox: Toolbox = agent.toolbox(host.shared.toolbox, settings)
        self._tool_timeout = self._options.tool_timeout or settings.tools.timeout
        self._tool_timeouts = settings.tools.timeouts
        self.hosted: Hosted[Frame] = host.open(self, protocol="xiaozhi", close=link.close, playout=self._speech,
                                               toolbox=self._toolbox)
        self.session = self.hosted.session
        self._base = agent.settings(self.session.settings)
        self._mcp = DeviceMcp(self._send_mcp, vision_url=link.vision_url, vision_token="")
        self._mode: ListenMode | None = None  # listening now, in this mode (None: not listening)
        self._turns_mode: ListenMode = "auto"  # the mode the session's turn detection is set for
        self._microphone = Microphone()
        self._bad_packets = 0  # audio packets that could not be heard
        self._tools_listed = asyncio.Event()
        self._faced: set[str] = set()  # responses whose face was shown
        self._running: set[str] = set()  # tool calls running now
        self._busy = asyncio.Event()  # set while a tool call runs
        self._last_sent = 0.0  # when (event loop time) the device was last sent something
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Start the session with the agent's settings, its writers, and its feed."""
        await self.hosted.start()
        self._speech.start()
        self.hosted.submit(UpdateSettings(self._base))
        self._last_sent = asyncio.get_running_loop().time()
        self._spawn(self.hosted.feed(), "feed")
        self._spawn(self._keep_alive(), "keepalive")

    async def greet(self, data: str | bytes) -> bool:
        """The device's first frame, which must be its ``hello`` in binary protocol 1: answered, and its tools
        listed when it has some. False (logged) when it is not."""
        try:
            hello = read_message(data) if isinstance(data, str) else None
        except MessageError as exc:
            log.warning("xiaozhi %s: the first message is unreadable: %s", self._device_id, exc)
            return False
        if not isinstance(hello, Hello) or hello.version != messages.BINARY_PROTOCOL:
            why = "no hello" if not isinstance(hello, Hello) else f"binary protocol {hello.version}"
            log.warning("xiaozhi %s: refused: %s (voxcall speaks binary protocol %d)", self._device_id, why,
                        messages.BINARY_PROTOCOL)
            return False
        if hello.aec:
            log.info("xiaozhi %s: the device asks for server-side echo cancellation, which voxcall does not do",
                     self._device_id)
        await self.hosted.send(messages.server_hello(self.session.id, self._options.sample_rate))
        if hello.mcp:
            self._spawn(self._list_tools(), "tools")
        else:
            self._tools_listed.set()
        log.info("xiaozhi %s: session %s (agent %s; microphone %d Hz, %d ms packets)", self._device_id,
                 self.session.id, self._agent.name or "default", hello.audio.sample_rate, hello.audio.frame_duration)
        return True

    async def receive(self, data: str | bytes) -> None:
        """Handle one frame from the device (after its ``hello``); one that cannot be read is logged and skipped."""
        if isinstance(data, bytes):
            await self._heard(data)
            return
        try:
            message = read_message(data)
        except MessageError as exc:
            log.warning("xiaozhi %s: skipped a message: %s", self._device_id, exc)
            return
        if isinstance(message, Listen):
            await self._listen(message)
        elif isinstance(message, Abort):
            await self.hosted.put(self._interrupt)
        elif isinstance(message, Mcp):
            self._mcp.received(message.payload)
        elif isinstance(message, Ping):
            await self.hosted.send(messages.PONG)
        elif isinstance(message, Hello):  # again: answered again
            await self.hosted.send(messages.server_hello(self.session.id, self._options.sample_rate))
        else:
            log.debug("xiaozhi %s: ignored a %r message", self._device_id, message.kind)

    async def close(self) -> None:
        """The device is gone: stop the session and everything it runs."""
        self._mcp.close()
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks)
        await self._speech.close()
        await self.hosted.close()

    # -- what the device says -------------------------------------------------------------------------------------

    async def _heard(self, packet: bytes) -> None:
        if self._mode is None:
            return  # the microphone outside a listening window (a wake word's audio, a late packet)
        try:
            pcm = self._microphone.decode(packet)
        except OpusError as exc:
            self._bad_packets += 1
            if self._bad_packets & (self._bad_packets - 1) == 0:  # the 1st, 2nd, 4th, 8th …: a flood logs little
                log.warning("xiaozhi %s: skipped an audio packet (%d so far): %s", self._device_id,
                            self._bad_packets, exc)
            return
        await self.hosted.put(AppendAudio(pcm, DECODED_RATE))

    async def _listen(self, listen: Listen) -> None:
        if listen.state == "start":
            assert listen.mode is not None
            if listen.mode != self._turns_mode:
                self._turns_mode = listen.mode
                turns = self._agent.turn_detection(self._base, listen.mode)
                self._base = dataclasses.replace(self._base, turn_detection=turns)
                await self.hosted.put(UpdateSettings(self._base))
            self._mode, self._microphone = listen.mode, Microphone()
            await self.hosted.put(ClearAudio())
        elif listen.state == "stop":
            self._mode = None
            await self.hosted.put(self._said)
        elif self._wake_word(listen.text):
            log.info("xiaozhi %s: wake word %r", self._device_id, listen.text)
            if self._options.greet_on_wake:
                await self.hosted.put(lambda: self._typed(listen.text))
        elif listen.text.strip():
            await self.hosted.send(messages.stt(listen.text))
            await self.hosted.put(lambda: self._typed(listen.text))

    def _wake_word(self, text: str) -> bool:
        said = _plain(text)
        return any(said == _plain(word) for word in self._options.wake_words)

    async def _said(self) -> None:
        """The user let go of the button (or stopped listening): what they said is a turn, answered."""
        try:
            await self.session.apply(CommitAudio())
            await self.session.apply(Respond())
        except SessionError as exc:
            log.info("xiaozhi %s: listen/stop: %s", self._device_id, exc.message)

    async def _typed(self, text: str) -> None:
        """A typed turn: it stops the device's speech, and is answered (once the device's tools are listed)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(TOOLS_WAIT):
                await self._tools_listed.wait()
        await self._interrupt()
        try:
            await self.session.apply(AddItem(MessageItem.of_text("user", text)))
            await self.session.apply(Respond())
        except SessionError as exc:
            log.info("xiaozhi %s: a typed turn: %s", self._device_id, exc.message)

    async def _interrupt(self) -> None:
        """The user stops the device's speech: it is cut to what was played, and the response is cancelled."""
        try:
            await self.session.apply(ClearOutputAudio())
            if self.session.responses.visible is not None:
                await self.session.apply(Cancel())
        except SessionError as exc:
            log.info("xiaozhi %s: abort: %s", self._device_id, exc.message)

    # -- the device's tools ---------------------------------------------------------------------------------------

    async def _list_tools(self) -> None:
        try:
            tools = await self._mcp.discover()
            names = offer(self._toolbox, tools, self._call_tool, timeout=self._tool_timeout,
                          timeouts=self._tool_timeouts, hidden=self._options.hidden_tools)
            log.info("xiaozhi %s: device tools: %s", self._device_id,
                     ", ".join(f"{name} ({device})" for name, device in names.items()) or "none")
        except (DeviceError, TimeoutError) as exc:
            log.warning("xiaozhi %s: the device's tools could not be listed: %s", self._device_id,
                        exc or type(exc).__name__)
        finally:
            self._tools_listed.set()

    async def _call_tool(self, name: str, arguments: Any) -> str:
        """Call a device tool (its deadline is the tool registry's)."""
        return await self._mcp.call(name, arguments, None)

    async def _send_mcp(self, payload: Message) -> None:
        await self.hosted.send(messages.mcp(payload))

    async def _keep_alive(self) -> None:
        """While a tool runs, the device is sent something at least every ``keepalive_seconds``."""
        loop = asyncio.get_running_loop()
        every = self._options.keepalive_seconds
        while True:
            if not self._running:
                self._busy.clear()
                await self._busy.wait()
            wait = self._last_sent + every - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            self._last_sent = loop.time()
            await self.hosted.send(messages.llm(THINKING))

    # -- the session's way out (the host's codec) -----------------------------------------------------------------

    def encode(self, ev: Event) -> Frame | None:
        """What the device must be sent for ``ev``; speech goes to the paced playout instead."""
        if isinstance(ev, OutputAudio):
            self._speech.capture(ev)
        elif isinstance(ev, SpokenClause):
            if ev.response_id not in self._faced:
                self._faced.add(ev.response_id)
                self._speech.say(ev.response_id, messages.llm(face_of(ev.text)))
            self._speech.say(ev.response_id, messages.sentence_start(ev.text))
        elif isinstance(ev, ResponseCreated):
            self._speech.begin(ev.response.id)
        elif isinstance(ev, ResponseDone):
            self._faced.discard(ev.response.id)
            self._speech.flush(ev.response.id)
        elif isinstance(ev, TranscriptCompleted) and ev.transcript:
            return messages.stt(ev.transcript)
        elif isinstance(ev, ToolCallMoved):
            self._track(ev)
        return None

    def _track(self, moved: ToolCallMoved) -> None:
        if moved.state is CallState.RUNNING:
            self._running.add(moved.call_id)
            self._busy.set()
            self._speech.say(moved.response_id, messages.llm(THINKING))
        elif moved.state is not CallState.PROPOSED:
            self._running.discard(moved.call_id)

    async def write(self, message: Frame) -> None:
        """Write one frame to the device."""
        if isinstance(message, bytes):
            await self._link.send_bytes(message)
        else:
            await self._link.send_text(json_text(message))
        self._last_sent = asyncio.get_running_loop().time()

    async def refused(self, error: SessionError) -> None:
        """A command failed: the protocol has no error message; the log has it."""
        log.info("xiaozhi %s: %s", self._device_id, error.message)

    async def _send(self, frame: Frame) -> None:
        await self.hosted.send(frame)

    def _spawn(self, work: Coroutine[Any, Any, None], what: str) -> None:
        self._tasks.append(asyncio.create_task(work, name=f"voxcall-xiaozhi-{what}-{self.session.id}"))


def _plain(text: str) -> str:
    """``text`` without case, spaces or punctuation (how wake words are compared)."""
    return "".join(char for char in text.casefold() if char.isalnum())
