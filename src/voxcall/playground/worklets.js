// The playground's two AudioWorklet processors, loaded into the AudioContext's rendering thread:
//
// - "voxcall-capture" turns the microphone (at the device's rate) into PCM16 at 24 kHz, the format the session
//   asks the server for, and posts it to the page in 50 ms chunks;
// - "voxcall-playback" plays the answer's 24 kHz PCM gaplessly at the device's rate, stops at once when told,
//   and reports how many samples it has played (in all, and of the item it is playing) so a barge-in can tell
//   the server how much of the answer the user actually heard.

const WIRE_RATE = 24000; // samples per second on the wire, both ways
const CHUNK = WIRE_RATE / 20; // 50 ms of captured audio per message
const PROGRESS_QUANTA = 8; // a progress report every 8 render quanta (~21 ms at 48 kHz) while playing

class CaptureProcessor extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = WIRE_RATE / sampleRate; // output samples per input sample
    this.phase = 0;
    this.sum = 0;
    this.count = 0;
    this.last = 0;
    this.chunk = new Int16Array(CHUNK);
    this.filled = 0;
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (channel) {
      for (let i = 0; i < channel.length; i++) this.take(channel[i]);
    }
    return true;
  }

  // Each output sample is the mean of the input samples it spans: a box filter, enough against aliasing for
  // speech going from 44.1 or 48 kHz down to 24 kHz.
  take(x) {
    this.sum += x;
    this.count += 1;
    this.phase += this.step;
    while (this.phase >= 1) {
      this.phase -= 1;
      if (this.count) {
        this.last = Math.max(-1, Math.min(1, this.sum / this.count));
        this.sum = 0;
        this.count = 0;
      }
      this.emit(this.last);
    }
  }

  emit(value) {
    this.chunk[this.filled++] = value < 0 ? value * 0x8000 : value * 0x7fff;
    if (this.filled === CHUNK) {
      this.port.postMessage(this.chunk.buffer, [this.chunk.buffer]);
      this.chunk = new Int16Array(CHUNK);
      this.filled = 0;
    }
  }
}

class PlaybackProcessor extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = WIRE_RATE / sampleRate; // source samples per output sample
    this.queue = []; // {item, samples: Float32Array at 24 kHz}, oldest first
    this.index = 0; // the next sample of queue[0]
    this.frac = 0; // position between queue[0].samples[index] and the sample after it
    this.played = 0; // 24 kHz samples played since the page loaded
    this.item = null; // the item whose samples were played last
    this.itemPlayed = 0; // how many of them
    this.quanta = 0;
    this.wasPlaying = false;
    this.port.onmessage = ({ data }) => {
      if (data.type === "push") this.queue.push({ item: data.item, samples: data.samples });
      else if (data.type === "clear") this.clear();
    };
  }

  // Drop everything queued at once and say what was being played, how much of it was heard and how much of the
  // queue was dropped unheard.
  clear() {
    const head = this.queue[0];
    const item = head ? head.item : null;
    const itemPlayed = head && head.item === this.item ? this.itemPlayed : 0;
    const dropped = this.queue.reduce((sum, chunk) => sum + chunk.samples.length, 0) - this.index;
    this.queue = [];
    this.index = 0;
    this.frac = 0;
    this.port.postMessage({ type: "cleared", item, itemPlayed, dropped, played: this.played });
  }

  process(inputs, outputs) {
    const out = outputs[0][0];
    for (let i = 0; i < out.length; i++) {
      const head = this.queue[0];
      if (!head) {
        out[i] = 0;
        continue;
      }
      const a = head.samples[this.index];
      const next = this.index + 1 < head.samples.length ? head.samples[this.index + 1] : this.queue[1]?.samples[0];
      const b = next === undefined ? a : next;
      out[i] = a + (b - a) * this.frac; // linear interpolation up to the device's rate
      this.frac += this.step;
      while (this.frac >= 1 && this.queue.length) {
        this.frac -= 1;
        this.advance();
      }
      if (!this.queue.length) this.frac = 0;
    }
    this.report();
    return true;
  }

  advance() {
    const head = this.queue[0];
    if (head.item !== this.item) {
      this.item = head.item;
      this.itemPlayed = 0;
    }
    this.itemPlayed += 1;
    this.played += 1;
    this.index += 1;
    if (this.index >= head.samples.length) {
      this.queue.shift();
      this.index = 0;
    }
  }

  report() {
    const playing = this.queue.length > 0;
    this.quanta += 1;
    if ((playing && this.quanta % PROGRESS_QUANTA === 0) || playing !== this.wasPlaying) {
      this.port.postMessage({ type: "progress", playing, played: this.played, item: this.item,
                              itemPlayed: this.itemPlayed });
    }
    this.wasPlaying = playing;
  }
}

registerProcessor("voxcall-capture", CaptureProcessor);
registerProcessor("voxcall-playback", PlaybackProcessor);
