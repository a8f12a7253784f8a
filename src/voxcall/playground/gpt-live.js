// GPT-Live (/v1/live/sessions) for the playground: the page starts the session, streams the microphone and shows
// what the voice hears and says. The protocol has no items, turns or "done" events: a user line begins with the
// first input transcript after the voice spoke, an assistant line with the first output transcript after the user
// spoke. There is no user text event: typed text answers the open delegated task (session.commentary.append with
// its delegation_id), or, with none open, goes as commentary for the voice to speak about (delegation_id null).

import { pcm16ToFloat } from "./audio.js";

/** The session.start the page sends: PCM16 at 24 kHz both ways, the form's instructions if any. */
export function startEvent(instructions) {
  const session = { model: "gpt-live-1", audio: { format: { type: "audio/pcm", rate: 24000 } } };
  if (instructions) session.instructions = instructions;
  return { type: "session.start", session };
}

/** One GPT-Live conversation as the page shows it. `page` is the Playground (send, transcript, player, notice). */
export class LiveConversation {
  constructor(page) {
    this.page = page;
    this.lines = 0;
    this.current = null; // {role, id} of the line being written
    this.delegations = []; // open client tasks, oldest first
  }

  /** Typed text: the answer to the oldest open task, else commentary for the voice. */
  say(text) {
    const delegationId = this.delegations.shift() ?? null;
    this.page.send({ type: "session.commentary.append", content: text, delegation_id: delegationId });
    this.page.notice(delegationId ? `Answered task ${delegationId}.` : "Sent as commentary for the voice.");
  }

  audio(bytesBase64) {
    return { type: "session.input_audio.append", audio: bytesBase64 };
  }

  handlers() {
    const page = this.page;
    return {
      "session.started": (e) => {
        page.session = e.session;
        page.setReady();
      },
      "session.input_transcript.delta": (e) => {
        page.transcript.append(this.line("user"), e.delta);
        if (page.player?.playing) page.player.stop(); // the server stopped the voice: drop what is queued
      },
      "session.output_transcript.delta": (e) => page.transcript.append(this.line("assistant"), e.delta),
      "session.output_audio.delta": (e) => {
        if (!page.player) return;
        page.player.push(this.line("assistant"), pcm16ToFloat(e.delta));
        page.showActivity();
      },
      "session.delegation.created": (e) => {
        if (e.delegation.target === "client") this.delegations.push(e.delegation.id);
        page.notice(`The voice delegated a task (${e.delegation.id}): type its answer and Send.`);
      },
      error: (e) => {
        const error = e.error || {};
        page.notice(`Error${error.code ? ` (${error.code})` : ""}: ${error.message}`, true);
      },
      "session.closed": (e) => page.notice(`Session closed (${e.reason}).`),
    };
  }

  /** The id of the transcript line of `role`, a new one when the other side spoke last. */
  line(role) {
    if (this.current?.role !== role) {
      this.current = { role, id: `live_line_${++this.lines}` };
      this.page.transcript.add({ type: "message", id: this.current.id, role, content: [] });
    }
    return this.current.id;
  }
}
