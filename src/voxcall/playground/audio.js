// Audio in and out of the page: the microphone as PCM16 24 kHz chunks, and a player for the answer's
// PCM16 24 kHz deltas. Both run in AudioWorklets (worklets.js); this side only moves buffers and keeps count.

export const WIRE_RATE = 24000;

/** The base64 text of `bytes` (a Uint8Array), as the protocol carries audio. */
export function toBase64(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}

/** Little-endian PCM16 samples from base64 `text`, as floats in [-1, 1). */
export function pcm16ToFloat(text) {
  const binary = atob(text);
  const view = new DataView(new ArrayBuffer(binary.length));
  for (let i = 0; i < binary.length; i++) view.setUint8(i, binary.charCodeAt(i));
  const samples = new Float32Array(binary.length >> 1);
  for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(2 * i, true) / 0x8000;
  return samples;
}

/** One AudioContext for the page, made (or resumed) from a user gesture, with the worklets loaded. */
export async function openAudio(existing) {
  const context = existing || new AudioContext();
  if (!existing) await context.audioWorklet.addModule(new URL("./worklets.js", import.meta.url));
  if (context.state === "suspended") await context.resume();
  return context;
}

/** The answer's audio: queued per item, played without gaps, stopped at once by `stop()`. */
export class Player {
  constructor(context, onchange) {
    this.node = new AudioWorkletNode(context, "voxcall-playback", { numberOfInputs: 0, outputChannelCount: [1] });
    this.node.connect(context.destination);
    this.playedSamples = 0; // 24 kHz samples played since the page loaded
    this.playing = false;
    this.onchange = onchange;
    this.waiting = []; // the resolvers of pending stop() calls, oldest first (each clear is answered in order)
    this.node.port.onmessage = ({ data }) => {
      this.playedSamples = data.played;
      if (data.type === "cleared") {
        this.playing = false;
        this.waiting.shift()?.(data);
      } else {
        this.playing = data.playing;
      }
      this.onchange?.(this);
    };
  }

  /** Queue the samples (24 kHz floats) of `item` after whatever is queued. */
  push(item, samples) {
    this.playing = true;
    this.node.port.postMessage({ type: "push", item, samples }, [samples.buffer]);
  }

  /** Stop now and drop what is queued; resolves to `{item, playedMs, droppedMs}`: the item that was playing
   * (null if none), how much of it was heard, and how much queued audio was dropped unheard. */
  stop() {
    const ms = (samples) => Math.floor((samples * 1000) / WIRE_RATE);
    return new Promise((resolve) => {
      this.waiting.push((data) => resolve({ item: data.item, playedMs: ms(data.itemPlayed),
                                            droppedMs: ms(data.dropped) }));
      this.node.port.postMessage({ type: "clear" });
    });
  }
}

/** The microphone: each 50 ms of PCM16 24 kHz goes to `onchunk(Uint8Array)` while it runs. */
export class Microphone {
  constructor(context, onchunk) {
    this.context = context;
    this.onchunk = onchunk;
    this.stream = null;
    this.source = null;
    this.node = null;
  }

  get running() {
    return this.stream !== null;
  }

  async start() {
    this.stream = await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true },
    });
    this.source = this.context.createMediaStreamSource(this.stream);
    this.node = new AudioWorkletNode(this.context, "voxcall-capture", { numberOfOutputs: 0 });
    this.node.port.onmessage = ({ data }) => this.onchunk(new Uint8Array(data));
    this.source.connect(this.node);
  }

  stop() {
    this.stream?.getTracks().forEach((track) => track.stop());
    this.source?.disconnect();
    if (this.node) this.node.port.onmessage = null;
    this.stream = this.source = this.node = null;
  }
}
