// What the Agents SDK tests share: a RealtimeSession over the SDK's WebSocket transport to the voxcall server that
// tests/test_js_clients.py started (VOXCALL_URL), with every event on the wire recorded in both directions.
//
// Each server event whose type the SDK knows is checked against the SDK's own schema: the SDK silently ignores an
// event that fails it (it treats it as an unknown, generic event), so a voxcall event it cannot read would otherwise
// only show as a test that waits and times out.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { OpenAIRealtimeWebSocket, RealtimeSession } from '@openai/agents-realtime';
import WebSocket from 'ws';

const { realtimeServerEventSchema } = await import(
  new URL('./openaiRealtimeEvents.mjs', import.meta.resolve('@openai/agents-realtime')).href);

const KNOWN_SERVER_EVENTS = new Set(realtimeServerEventSchema.options.map((schema) => schema.shape.type.value));

export const SERVER_URL = process.env.VOXCALL_URL;
export const QUESTION_WAV = process.env.VOXCALL_QUESTION_WAV;
if (!SERVER_URL || !QUESTION_WAV) {
  throw new Error('run these tests with pytest tests/test_js_clients.py: it starts the server and sets '
    + 'VOXCALL_URL and VOXCALL_QUESTION_WAV');
}

const WAIT_MS = 60_000;

// Every frame a client sends goes through ws's send: the wire of the open session records it (the tests of a file
// run one at a time, so one wire is open at once).
let openWire = null;
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function recordedSend(data, ...rest) {
  openWire?.clientEvents.push(JSON.parse(String(data)));
  return send.call(this, data, ...rest);
};

/** An open RealtimeSession and everything that crossed its socket. */
export class Wire {
  constructor(session) {
    this.session = session;
    this.clientEvents = [];
    this.serverEvents = [];
    this.unreadable = []; // server events of a type the SDK knows that its schema refuses
    this.waiters = [];
    session.transport.on('*', (event) => this.#received(event));
  }

  #received(event) {
    this.serverEvents.push(event);
    if (KNOWN_SERVER_EVENTS.has(event.type)) {
      const parsed = realtimeServerEventSchema.safeParse(event);
      if (!parsed.success) {
        this.unreadable.push({ type: event.type, issues: parsed.error.issues });
      }
    }
    this.waiters = this.waiters.filter((waiter) => !waiter.offer(event));
  }

  /** The first server event (already received or to come) for which `predicate` holds. */
  waitFor(predicate, what = 'a server event', timeoutMs = WAIT_MS) {
    const seen = this.serverEvents.find(predicate);
    if (seen) {
      return Promise.resolve(seen);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const types = this.serverEvents.slice(-15).map((event) => event.type).join(', ');
        reject(new Error(`no ${what} within ${timeoutMs} ms; the last server events: ${types}`));
      }, timeoutMs);
      this.waiters.push({
        offer: (event) => {
          if (!predicate(event)) {
            return false;
          }
          clearTimeout(timer);
          resolve(event);
          return true;
        },
      });
    });
  }

  /** The `response.done` of the response whose text or transcript includes `text`. */
  responseSaying(text) {
    return this.waitFor((event) => event.type === 'response.done' && said(event.response).includes(text),
      `response.done saying ${JSON.stringify(text)}`);
  }

  /** The client events of `type`, in order. */
  sent(type) {
    return this.clientEvents.filter((event) => event.type === type);
  }

  /** The server events of `type`, in order. */
  received(type) {
    return this.serverEvents.filter((event) => event.type === type);
  }

  /** Fails unless voxcall answered every client event without an error and the SDK could read each event. */
  assertClean() {
    assert.deepEqual(this.received('error').map((event) => event.error), [], 'voxcall answered with errors');
    assert.deepEqual(this.unreadable, [], 'the SDK cannot read these voxcall events');
  }

  /** What the client sent, for the test's log: each event type once, and the session fields it set. */
  summary() {
    const types = [...new Set(this.clientEvents.map((event) => event.type))];
    const fields = new Set();
    for (const event of this.sent('session.update')) {
      for (const [key, value] of Object.entries(event.session)) {
        const nested = key === 'audio' ? Object.entries(value).flatMap(([io, part]) => Object.keys(part)
          .map((name) => `audio.${io}.${name}`)) : [key];
        nested.forEach((name) => fields.add(name));
      }
    }
    return `client events: ${types.join(', ')}; session fields: ${[...fields].join(', ')}`;
  }

  close() {
    this.session.close();
    if (openWire === this) {
      openWire = null;
    }
  }
}

/** A RealtimeSession for `agent` over the SDK's WebSocket transport, connected to voxcall. */
export async function connect(agent, options = {}) {
  const transport = new OpenAIRealtimeWebSocket({ url: SERVER_URL });
  const session = new RealtimeSession(agent, { transport, model: 'voxcall', ...options });
  const wire = new Wire(session);
  openWire = wire;
  await session.connect({ apiKey: 'sk-unused-on-loopback', url: SERVER_URL });
  await wire.waitFor((event) => event.type === 'session.updated', 'session.updated');
  return wire;
}

/** The text of a response's messages: their text parts and audio transcripts. */
export function said(response) {
  return (response.output ?? []).filter((item) => item.type === 'message')
    .flatMap((item) => item.content ?? []).map((part) => part.text ?? part.transcript ?? '').join(' ');
}

/** A short view of a RealtimeSession's history: [role, text] for messages, [name, arguments, output] for calls. */
export function historyOf(session) {
  return session.history.map((item) => (item.type === 'message'
    ? [item.role, item.content.map((part) => part.text ?? part.transcript ?? '').join('')]
    : [item.name, item.arguments, item.output]));
}

/** The samples of a WAV file, which must be 16-bit PCM, mono, 24 kHz (what the session's input format says). */
export function readPcm16Wav(path) {
  const wav = readFileSync(path);
  assert.equal(wav.toString('ascii', 0, 4), 'RIFF');
  assert.equal(wav.toString('ascii', 8, 12), 'WAVE');
  let format = null;
  for (let at = 12; at + 8 <= wav.length;) {
    const id = wav.toString('ascii', at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    const body = wav.subarray(at + 8, at + 8 + size);
    if (id === 'fmt ') {
      format = { code: body.readUInt16LE(0), channels: body.readUInt16LE(2), rate: body.readUInt32LE(4),
        bits: body.readUInt16LE(14) };
    } else if (id === 'data') {
      assert.deepEqual(format, { code: 1, channels: 1, rate: 24000, bits: 16 }, `${path}: not PCM16 24 kHz mono`);
      return body;
    }
    at += 8 + size + (size % 2);
  }
  throw new Error(`${path}: no data chunk`);
}

/** Streams `pcm` (PCM16 24 kHz) to the session in 100 ms chunks, a little faster than real time. */
export async function speak(session, pcm) {
  const chunk = 4800; // 100 ms
  for (let at = 0; at < pcm.length; at += chunk) {
    const part = pcm.subarray(at, at + chunk);
    session.sendAudio(part.buffer.slice(part.byteOffset, part.byteOffset + part.byteLength));
    await new Promise((resolve) => { setTimeout(resolve, 25); });
  }
}
