// The WebSocket to voxcall's /v1/realtime or /v1/live/sessions (the same checks guard both). A browser cannot set headers on a WebSocket, so an API key travels
// as the subprotocol "openai-insecure-api-key.KEY", offered together with "realtime".

export const KEY_SUBPROTOCOL_PREFIX = "openai-insecure-api-key.";

export const PATHS = { realtime: "/v1/realtime", live: "/v1/live/sessions", webrtc: "/v1/realtime/calls" };

/** The endpoint of `protocol` ("realtime", "live" or "webrtc") on the server that served this page. */
export function defaultUrl(location, protocol = "realtime") {
  if (protocol === "webrtc") return `${location.protocol}//${location.host}${PATHS.webrtc}`;
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${PATHS[protocol]}`;
}

/**
 * One connection. States: "connecting", "open", "closed". `onevent(event)` gets each server event,
 * `onsent(event)` each client event, and `onstate(state, detail)` each change of state.
 */
export class Connection {
  constructor({ onevent, onsent, onstate }) {
    this.onevent = onevent;
    this.onsent = onsent;
    this.onstate = onstate;
    this.socket = null;
    this.state = "closed";
    this.sent = 0;
  }

  open(url, apiKey) {
    this.close();
    const protocols = ["realtime"];
    if (apiKey) protocols.push(KEY_SUBPROTOCOL_PREFIX + apiKey);
    const socket = new WebSocket(url, protocols);
    this.socket = socket;
    let opened = false;
    this.setState("connecting");
    socket.onopen = () => {
      opened = true;
      this.setState("open");
    };
    socket.onmessage = ({ data }) => {
      if (socket === this.socket) this.onevent(JSON.parse(data));
    };
    socket.onclose = ({ code, reason }) => {
      if (socket !== this.socket) return;
      this.socket = null;
      const why = opened ? `closed (code ${code}${reason ? `: ${reason}` : ""})`
        : `could not connect (code ${code}): is the server running, and is the API key right?`;
      this.setState("closed", why);
    };
  }

  close() {
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      socket.close();
      this.setState("closed", "disconnected");
    }
  }

  /** Send a client event; each gets an `event_id` so that an error can be traced to it. Returns the event as
   * sent, or null when the socket is not open. */
  send(event) {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) return null;
    const sent = { event_id: `evt_playground_${++this.sent}`, ...event };
    this.socket.send(JSON.stringify(sent));
    this.onsent(sent);
    return sent;
  }

  setState(state, detail = "") {
    this.state = state;
    this.onstate(state, detail);
  }
}

/**
 * A Realtime session over WebRTC (POST /v1/realtime/calls): the same interface as {@link Connection}. The
 * microphone goes to the server as the call's audio track and the answer comes back on the server's track, played
 * by `audioElement`; the events travel on the "oai-events" data channel. The key typed into the page is sent as
 * the bearer of the offer (a page of your own app would present a client secret its backend minted instead).
 */
export class WebRTCConnection extends Connection {
  constructor(handlers, audioElement) {
    super(handlers);
    this.audioElement = audioElement;
    this.pc = null;
    this.channel = null;
    this.microphone = null;
  }

  open(url, apiKey) {
    this.close();
    this.setState("connecting");
    this.call(url, apiKey).catch((error) => {
      this.close(false);
      this.setState("closed", `could not call: ${error.message}`);
    });
  }

  async call(url, apiKey) {
    const pc = new RTCPeerConnection();
    this.pc = pc;
    const channel = pc.createDataChannel("oai-events");
    this.channel = channel;
    channel.onopen = () => this.setState("open");
    channel.onmessage = ({ data }) => {
      if (channel === this.channel) this.onevent(JSON.parse(data));
    };
    channel.onclose = () => {
      if (channel === this.channel) this.close();
    };
    pc.ontrack = ({ streams }) => {
      this.audioElement.srcObject = streams[0];
    };
    this.microphone = await navigator.mediaDevices.getUserMedia({ audio: true });
    pc.addTrack(this.microphone.getAudioTracks()[0]);
    await pc.setLocalDescription(await pc.createOffer());
    const headers = { "Content-Type": "application/sdp" };
    if (apiKey) headers.Authorization = `Bearer ${apiKey}`;
    const reply = await fetch(url, { method: "POST", body: pc.localDescription.sdp, headers });
    if (!reply.ok) {
      const body = await reply.json().catch(() => ({}));
      throw new Error(body.error?.message || `HTTP ${reply.status}`);
    }
    await pc.setRemoteDescription({ type: "answer", sdp: await reply.text() });
  }

  /** Whether the microphone's track carries sound. */
  mute(muted) {
    for (const track of this.microphone?.getAudioTracks() || []) track.enabled = !muted;
  }

  close(notify = true) {
    const { pc, channel, microphone } = this;
    this.pc = this.channel = this.microphone = null;
    channel?.close();
    pc?.close();
    for (const track of microphone?.getTracks() || []) track.stop();
    if (pc && notify) this.setState("closed", "disconnected");
  }

  send(event) {
    if (!this.channel || this.channel.readyState !== "open") return null;
    const sent = { event_id: `evt_playground_${++this.sent}`, ...event };
    this.channel.send(JSON.stringify(sent));
    this.onsent(sent);
    return sent;
  }
}
