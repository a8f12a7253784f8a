// The WebSocket to voxcall's /v1/realtime or /v1/live/sessions (the same checks guard both). A browser cannot set headers on a WebSocket, so an API key travels
// as the subprotocol "openai-insecure-api-key.KEY", offered together with "realtime".

export const KEY_SUBPROTOCOL_PREFIX = "openai-insecure-api-key.";

export const PATHS = { realtime: "/v1/realtime", live: "/v1/live/sessions" };

/** The endpoint of `protocol` ("realtime" or "live") on the server that served this page. */
export function defaultUrl(location, protocol = "realtime") {
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
