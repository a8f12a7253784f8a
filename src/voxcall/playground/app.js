// The playground: connects to voxcall's /v1/realtime, talks (microphone, push-to-talk, text), listens (gapless
// playback, barge-in with truncate), shows the transcript, tool calls, timing and events, and configures the
// session. Plain ES modules, no build step; see the README's "Playground" section.

import { Microphone, Player, WIRE_RATE, openAudio, pcm16ToFloat, toBase64 } from "./audio.js";
import { DEMO_TOOLS, runClientTool } from "./client-tools.js";
import { Connection, PATHS, WebRTCConnection, defaultUrl } from "./connection.js";
import { LiveConversation, startEvent } from "./gpt-live.js";
import { SessionForm } from "./session-form.js";
import { EventLog, Timeline, ToolCards, Transcript, el, formatMs } from "./views.js";

const $ = (id) => document.getElementById(id);

const STATES = {
  disconnected: "○ Not connected",
  connecting: "◌ Connecting…",
  connected: "◐ Connected, setting up the session…",
  ready: "● Connected",
  closed: "○ Not connected",
};
const NOTICE_LIMIT = 5;
const TEXT_FIELDS = new Set(["INPUT", "TEXTAREA", "SELECT"]); // where the space bar types rather than talks

/** When the page saw each response's first output, first audio and server tool starts. voxcall.response.timing
 * gives the tools' durations, not their start times: these place them on its axis, anchored where the page and
 * the server both saw the same moment (the first audio, else the first output). */
class ResponseClock {
  constructor() {
    this.marks = new Map(); // response id -> {output, audio, tools: Map(call id -> time)}
  }

  start(responseId) {
    this.marks.set(responseId, { tools: new Map() });
  }

  output(responseId) {
    const marks = this.marks.get(responseId);
    if (marks && marks.output === undefined) marks.output = performance.now();
  }

  audio(responseId) {
    const marks = this.marks.get(responseId);
    if (marks && marks.audio === undefined) marks.audio = performance.now();
  }

  tool(responseId, callId) {
    this.marks.get(responseId)?.tools.set(callId, performance.now());
  }

  /** The start of each server tool of the response, in ms on the timing event's axis (the marks are dropped). */
  toolStarts(timing) {
    const marks = this.marks.get(timing.response_id);
    this.marks.delete(timing.response_id);
    const starts = new Map();
    const ms = timing.timings_ms || {};
    let anchor;
    if (marks?.audio !== undefined && ms.first_audio !== undefined) {
      anchor = marks.audio - ms.first_audio;
    } else if (marks?.output !== undefined && ms.llm_first_token !== undefined) {
      anchor = marks.output - ms.llm_first_token;
    }
    if (anchor === undefined) return starts;
    for (const [callId, at] of marks.tools) starts.set(callId, Math.max(0, at - anchor));
    return starts;
  }

  clear() {
    this.marks.clear();
  }
}

class Playground {
  constructor() {
    this.transcript = new Transcript($("transcript"));
    this.cards = new ToolCards($("tool-calls"), (id, approve) => this.send({
      type: "conversation.item.create",
      item: { type: "mcp_approval_response", approval_request_id: id, approve },
    }));
    this.timeline = new Timeline($("timeline"));
    this.clock = new ResponseClock();
    this.log = new EventLog($("log"), $("log-filter"), $("log-audio"), $("log-hidden"));
    this.form = new SessionForm($("settings-form"), DEMO_TOOLS);
    this.connectionHandlers = {
      onevent: (event) => this.receive(event),
      onsent: (event) => this.recordSent(event),
      onstate: (state, detail) => this.connectionChanged(state, detail),
    };
    this.connection = new Connection(this.connectionHandlers);
    this.state = "disconnected";
    this.audio = null; // the AudioContext, made on the first user gesture that needs it
    this.player = null;
    this.mic = null;
    this.session = null; // the session as the server last described it
    this.pendingUpdate = null; // the event_id of the session.update that makes the session ready
    this.active = new Map(); // response id -> the call ids of the client tools it called
    this.lastAudioResponse = null; // the response whose audio was queued last
    this.silenced = new Set(); // responses whose audio was cut by a barge-in: their late deltas are dropped
    this.pushToTalk = false;
    this.holding = false; // push-to-talk held
    this.talkStarted = null; // the start of the push-to-talk turn, awaited by its end
    this.userSpeaking = false;
    this.sent = []; // client events (audio elided), for tests and curious readers
    this.bargeIns = []; // {item_id, audio_end_ms, dropped_ms} of each truncate sent
    this.handlers = this.eventHandlers();
    this.live = null; // the GPT-Live conversation, when the page connected with that protocol
    this.wire();
  }

  // -- the controls ----------------------------------------------------------------------------------------

  wire() {
    $("url").value = defaultUrl(window.location);
    $("protocol").addEventListener("change", () => {
      const defaults = Object.keys(PATHS).map((protocol) => defaultUrl(window.location, protocol));
      if (defaults.includes($("url").value)) $("url").value = defaultUrl(window.location, $("protocol").value);
    });
    $("connect-form").addEventListener("submit", (event) => {
      event.preventDefault();
      if (this.state === "disconnected" || this.state === "closed") this.connect();
      else this.connection.close();
    });
    $("settings-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.applySettings();
    });
    $("text-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.sendText($("text").value);
    });
    $("mic").addEventListener("click", () => this.toggleMicrophone());
    const ptt = $("ptt");
    ptt.addEventListener("pointerdown", (event) => {
      ptt.setPointerCapture(event.pointerId);
      this.startTalking();
    });
    ptt.addEventListener("pointerup", () => this.stopTalking());
    ptt.addEventListener("pointercancel", () => this.stopTalking());
    ptt.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.repeat) this.startTalking();
    });
    ptt.addEventListener("keyup", (event) => {
      if (event.key === "Enter") this.stopTalking();
    });
    document.addEventListener("keydown", (event) => {
      if (event.code !== "Space" || !this.pushToTalk || this.state !== "ready") return;
      if (TEXT_FIELDS.has(event.target.tagName)) return;
      event.preventDefault(); // a focused button would otherwise be clicked
      if (!event.repeat) this.startTalking();
    });
    document.addEventListener("keyup", (event) => {
      if (event.code === "Space" && this.holding) {
        event.preventDefault();
        this.stopTalking();
      }
    });
    $("clear").addEventListener("click", () => {
      for (const view of [this.transcript, this.cards, this.timeline, this.log]) view.clear();
    });
    this.showState("");
    this.showActivity();
  }

  async connect() {
    await this.ensureAudio();
    this.live = $("protocol").value === "live" ? new LiveConversation(this) : null;
    this.liveHandlers = this.live?.handlers();
    this.connection = $("protocol").value === "webrtc"
      ? new WebRTCConnection(this.connectionHandlers, $("call-audio")) : new Connection(this.connectionHandlers);
    this.connection.open($("url").value.trim(), $("api-key").value.trim());
  }

  /** The AudioContext and the player, made from a user gesture (browsers start audio only after one). */
  async ensureAudio() {
    try {
      this.audio = await openAudio(this.audio);
      this.player ||= new Player(this.audio, () => this.showActivity());
    } catch (error) {
      this.notice(`Error: audio is unavailable (${error.message}); text still works.`, true);
    }
  }

  get onCall() {
    return this.connection instanceof WebRTCConnection;
  }

  async toggleMicrophone() {
    if (this.onCall) { // a call's microphone is its audio track, open from the start: the button mutes it
      const on = $("mic").getAttribute("aria-pressed") !== "true";
      this.connection.mute(!on);
      $("mic").setAttribute("aria-pressed", String(on));
      $("mic").textContent = on ? "Mute microphone" : "Unmute microphone";
      return;
    }
    if (this.mic?.running) {
      this.mic.stop();
    } else {
      await this.ensureAudio();
      if (!this.audio) return;
      this.mic = new Microphone(this.audio, (bytes) => this.captured(bytes));
      try {
        await this.mic.start();
      } catch (error) {
        this.mic = null;
        this.notice(`Error: the microphone could not start: ${error.message}`, true);
      }
    }
    const on = Boolean(this.mic?.running);
    $("mic").setAttribute("aria-pressed", String(on));
    $("mic").textContent = on ? "Stop microphone" : "Start microphone";
    this.showActivity();
  }

  /** 50 ms of PCM16 24 kHz from the microphone: sent while the server listens (VAD) or the button is held. */
  captured(bytes) {
    if (this.state !== "ready" || this.onCall || (this.pushToTalk && !this.holding)) return;
    if (this.live) this.send(this.live.audio(toBase64(bytes)));
    else this.send({ type: "input_audio_buffer.append", audio: toBase64(bytes) });
  }

  /** Push-to-talk pressed: a fresh input buffer, the answer (if any) interrupted, the microphone on. */
  startTalking() {
    if (!this.pushToTalk || this.state !== "ready" || this.holding) return;
    this.holding = true;
    $("ptt").setAttribute("aria-pressed", "true");
    this.send({ type: "input_audio_buffer.clear" });
    this.talkStarted = (async () => {
      await this.bargeIn(true);
      if (!this.mic?.running) await this.toggleMicrophone();
    })();
    this.showActivity();
  }

  /** Push-to-talk released (perhaps before the microphone was on): the turn is committed and answered. */
  async stopTalking() {
    if (!this.holding) return;
    this.holding = false;
    $("ptt").setAttribute("aria-pressed", "false");
    this.showActivity();
    await this.talkStarted;
    this.send({ type: "input_audio_buffer.commit" });
    this.send({ type: "response.create" });
  }

  async sendText(text) {
    text = text.trim();
    if (!text || this.state !== "ready") return;
    $("text").value = "";
    if (this.live) {
      this.live.say(text);
      return;
    }
    await this.bargeIn(true);
    this.send({ type: "conversation.item.create",
                item: { type: "message", role: "user", content: [{ type: "input_text", text }] } });
    this.send({ type: "response.create" });
  }

  /** Send the form as a session.update; false when the form cannot be read (the reason is shown). */
  applySettings() {
    const session = this.form.read();
    if (session === null) return false;
    const sent = this.send({ type: "session.update", session });
    if (sent && this.state === "connected") this.pendingUpdate = sent.event_id;
    return sent !== null;
  }

  /** The user speaks over the answer: stop its audio at once, tell the server how much was heard
   * (conversation.item.truncate) and, when the client interrupts by itself (text, push-to-talk), cancel the
   * response. With server VAD the server cancels the response itself. */
  async bargeIn(cancel) {
    if (cancel && this.active.size) this.send({ type: "response.cancel" });
    if (cancel || this.session?.audio?.input?.turn_detection?.interrupt_response !== false) {
      for (const id of this.active.keys()) this.silenced.add(id); // its audio still in flight is not played
    }
    if (!this.player) return;
    if (this.player.playing && this.lastAudioResponse) this.silenced.add(this.lastAudioResponse);
    const { item, playedMs, droppedMs } = await this.player.stop();
    if (item === null) return;
    this.send({ type: "conversation.item.truncate", item_id: item, content_index: 0, audio_end_ms: playedMs });
    this.bargeIns.push({ item_id: item, audio_end_ms: playedMs, dropped_ms: droppedMs });
  }

  send(event) {
    return this.connection.send(event);
  }

  // -- server events -----------------------------------------------------------------------------------------

  receive(event) {
    this.log.add("received", event);
    (this.live ? this.liveHandlers : this.handlers)[event.type]?.(event);
  }

  eventHandlers() {
    const cards = this.cards;
    const transcript = this.transcript;
    return {
      "session.created": (e) => {
        this.session = e.session;
        this.form.fill(e.session);
        if (!this.applySettings()) this.setReady(); // the server's defaults, until the form is fixed
      },
      "session.updated": (e) => {
        this.session = e.session;
        this.pushToTalk = !e.session.audio?.input?.turn_detection;
        if (this.state === "connected") this.setReady();
        this.showActivity();
      },
      "voxcall.session.warning": (e) => this.notice(`Note on ${e.param}: ${e.message}`),
      error: (e) => {
        const error = e.error || {};
        this.notice(`Error${error.code ? ` (${error.code})` : ""}: ${error.message}`, true);
        if (this.state === "connected" && error.event_id === this.pendingUpdate) this.setReady();
      },
      "conversation.item.added": (e) => transcript.add(e.item),
      "conversation.item.input_audio_transcription.delta": (e) => transcript.append(e.item_id, e.delta),
      "conversation.item.input_audio_transcription.completed": (e) => transcript.set(e.item_id, e.transcript),
      "conversation.item.input_audio_transcription.failed": (e) => transcript.note(e.item_id, "(not understood)"),
      "conversation.item.truncated": (e) => transcript.note(e.item_id,
        `(interrupted: ${formatMs(e.audio_end_ms)} heard)`),
      "input_audio_buffer.speech_started": () => {
        this.userSpeaking = true;
        this.showActivity();
        this.bargeIn(false);
      },
      "input_audio_buffer.speech_stopped": () => {
        this.userSpeaking = false;
        this.showActivity();
      },
      "response.created": (e) => {
        this.active.set(e.response.id, []);
        this.clock.start(e.response.id);
        this.showActivity();
      },
      "response.output_item.added": (e) => {
        this.clock.output(e.response_id);
        if (e.item.type === "function_call") cards.clientCall(e.item);
        else if (e.item.type === "mcp_call") cards.serverCall(e.item);
        else if (e.item.type === "mcp_approval_request") cards.approval(e.item);
      },
      "response.output_item.done": (e) => {
        if (e.item.type === "mcp_call") cards.finish(e.item);
      },
      "response.output_text.delta": (e) => transcript.append(e.item_id, e.delta),
      "response.output_text.done": (e) => transcript.set(e.item_id, e.text),
      "response.output_audio_transcript.delta": (e) => transcript.append(e.item_id, e.delta),
      "response.output_audio_transcript.done": (e) => transcript.set(e.item_id, e.transcript),
      "response.output_audio.delta": (e) => {
        if (!this.player || this.silenced.has(e.response_id)) return;
        this.lastAudioResponse = e.response_id;
        this.clock.audio(e.response_id);
        this.player.push(e.item_id, pcm16ToFloat(e.delta));
        this.showActivity();
      },
      "response.function_call_arguments.delta": (e) => cards.arguments(e.item_id, e.delta),
      "response.function_call_arguments.done": (e) => {
        cards.argumentsDone(e.item_id, e.arguments);
        this.runClientCall(e);
      },
      "response.mcp_call_arguments.delta": (e) => cards.arguments(e.item_id, e.delta),
      "response.mcp_call_arguments.done": (e) => cards.argumentsDone(e.item_id, e.arguments),
      "response.mcp_call.in_progress": (e) => cards.status(e.item_id, "running"),
      "voxcall.tool_call.started": (e) => {
        this.clock.tool(e.response_id, e.call_id);
        cards.started(e);
      },
      "voxcall.tool_call.completed": (e) => cards.completed(e),
      "voxcall.tool_call.rejected": (e) => cards.rejected(e),
      "response.done": (e) => this.responseDone(e.response),
      "voxcall.response.timing": (e) => {
        this.timeline.add(e, this.clock.toolStarts(e));
        cards.timing(e);
      },
    };
  }

  /** A client tool's arguments are complete: run it in the page and send its output right away. */
  runClientCall(event) {
    const result = runClientTool(event.name, event.arguments);
    this.send({ type: "conversation.item.create",
                item: { type: "function_call_output", call_id: event.call_id, output: result.output } });
    this.cards.clientResult(event.item_id, result);
    this.active.get(event.response_id)?.push(event.call_id);
  }

  /** A response ended; if it called client tools (all answered by now), ask for the follow-up. */
  responseDone(response) {
    const calls = this.active.get(response.id) || [];
    this.active.delete(response.id);
    this.silenced.delete(response.id);
    if (response.status === "failed") {
      const reason = response.status_details?.error?.message || "no reason given";
      this.notice(`Error: the response failed: ${reason}`, true);
    }
    if (response.status === "completed" && calls.length) this.send({ type: "response.create" });
    this.showActivity();
  }

  // -- state shown -----------------------------------------------------------------------------------------

  connectionChanged(state, detail) {
    if (state === "open") state = "connected";
    if (state === "connected" && this.live) this.send(startEvent($("instructions").value.trim()));
    if (state === "connected" && this.onCall) { // the call's microphone is on from the start
      $("mic").setAttribute("aria-pressed", "true");
      $("mic").textContent = "Mute microphone";
    }
    if (state === "closed") {
      this.active.clear();
      this.clock.clear();
      this.holding = false;
      this.player?.stop();
    }
    this.state = state;
    this.showState(detail);
  }

  setReady() {
    this.state = "ready";
    this.pendingUpdate = null;
    this.showState(this.session?.id ? `session ${this.session.id}` : "");
  }

  showState(detail) {
    const status = $("connection");
    status.dataset.state = this.state;
    status.textContent = STATES[this.state] + (detail ? ` · ${detail}` : "");
    const open = this.state !== "disconnected" && this.state !== "closed";
    $("connect").textContent = open ? "Disconnect" : "Connect";
    $("url").disabled = $("api-key").disabled = $("protocol").disabled = open;
    const ready = this.state === "ready";
    for (const id of ["mic", "text", "send", "apply"]) $(id).disabled = !ready;
    this.showActivity();
  }

  showActivity() {
    const ready = this.state === "ready";
    const ptt = $("ptt");
    ptt.disabled = !(ready && this.pushToTalk);
    $("ptt-hint").textContent = this.pushToTalk ? "Hold the button, or the space bar, while you speak."
      : "Push-to-talk: choose “Push-to-talk” turn detection in the session settings.";
    let activity = "Idle";
    if (!ready) activity = "Not connected";
    else if (this.holding || this.userSpeaking) activity = "▶ You are speaking";
    else if (this.player?.playing) activity = "◀ The assistant is speaking";
    else if (this.active.size) activity = "… The assistant is thinking";
    else if (this.mic?.running) activity = this.pushToTalk ? "Microphone on: hold to talk" : "◉ Listening";
    const node = $("activity");
    if (node.textContent !== activity) node.textContent = activity;
  }

  notice(text, isError = false) {
    const list = $("notices");
    list.prepend(el("li", { class: isError ? "error" : "warning" }, text));
    while (list.childElementCount > NOTICE_LIMIT) list.lastElementChild.remove();
  }

  recordSent(event) {
    this.log.add("sent", event);
    this.sent.push(event.type === "input_audio_buffer.append" ? { type: event.type, event_id: event.event_id }
      : event);
    if (this.sent.length > 1000) this.sent.shift();
  }
}

const playground = new Playground();

/** For tests and the browser console: the page's state, read-only. */
window.voxcallPlayground = {
  get state() { return playground.state; },
  /** 24 kHz samples of answer audio played so far. */
  get playedSamples() { return playground.player ? playground.player.playedSamples : 0; },
  get playedSeconds() { return this.playedSamples / WIRE_RATE; },
  get sent() { return playground.sent; },
  get bargeIns() { return playground.bargeIns; },
  get session() { return playground.session; },
  get protocol() { return playground.live ? "live" : playground.onCall ? "webrtc" : "realtime"; },
};
