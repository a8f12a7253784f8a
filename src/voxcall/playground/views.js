// What the page shows: the transcript, the tool call cards, the per-turn timing timeline and the event log.
// Every view writes text with textContent (never HTML from the server), and says each state in words, not
// by colour alone.

/** A new element: `el("li", {class: "x", "data-id": id}, child, "text")`. */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== null && value !== undefined) node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
}

/** Keep a scrolled list at its end while it grows, unless the user scrolled up to read. */
function followEnd(list, update) {
  const atEnd = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  update();
  if (atEnd) list.scrollTop = list.scrollHeight;
}

const TEXT_PARTS = new Set(["input_text", "text", "output_text"]);

/** The conversation: user turns (typed, or spoken and transcribed) and the assistant's answers as they stream. */
export class Transcript {
  constructor(list) {
    this.list = list;
    this.entries = new Map(); // item id -> {node, text, note}
  }

  /** A message item joined the conversation. */
  add(item) {
    if (item.type !== "message" || this.entries.has(item.id)) return;
    const text = el("span", { class: "text" });
    const note = el("span", { class: "note" });
    const who = item.role === "user" ? "You" : item.role === "assistant" ? "Assistant" : item.role;
    const node = el("li", { class: `turn ${item.role}`, "data-item-id": item.id, "data-role": item.role },
      el("span", { class: "who" }, `${who}:`), " ", text, " ", note);
    this.entries.set(item.id, { node, text, note });
    const part = (item.content || [])[0];
    if (part && TEXT_PARTS.has(part.type)) text.textContent = part.text || "";
    else if (part && part.transcript) text.textContent = part.transcript;
    else if (part && part.type === "input_audio") note.textContent = "(transcribing…)";
    followEnd(this.list, () => this.list.append(node));
  }

  /** More text for the item (a transcript or text delta). */
  append(itemId, delta) {
    const entry = this.entries.get(itemId);
    if (!entry) return;
    followEnd(this.list, () => {
      entry.text.textContent += delta;
      if (entry.note.textContent === "(transcribing…)") entry.note.textContent = "";
    });
  }

  /** The item's whole text, once known. */
  set(itemId, text) {
    const entry = this.entries.get(itemId);
    if (!entry) return;
    entry.text.textContent = text;
    if (entry.note.textContent === "(transcribing…)") entry.note.textContent = "";
  }

  /** A remark after the item's text, e.g. "(interrupted after 1.2 s)". */
  note(itemId, text) {
    const entry = this.entries.get(itemId);
    if (entry) entry.note.textContent = text;
  }

  clear() {
    this.entries.clear();
    this.list.replaceChildren();
  }
}

const STATUS_WORDS = {
  streaming: "… arguments streaming",
  running: "… running",
  waiting: "? waiting for your approval",
  completed: "✓ completed",
  failed: "✗ failed",
  rejected: "⊘ rejected",
  sent: "✓ output sent",
};

/** A card per tool call: which tool, where it runs, its arguments as they stream, its round, its result (or why
 * it failed or was rejected) and how long it took. */
export class ToolCards {
  constructor(list, onapproval) {
    this.list = list;
    this.onapproval = onapproval; // (approvalRequestId, approve) => void
    this.cards = new Map(); // item id (or a made-up id for rejections) -> card
  }

  /** A function_call item: a client tool the page runs. */
  clientCall(item) {
    this.card(item.id, item.name, "client tool · runs in this page", { callId: item.call_id });
  }

  /** An mcp_call item: a server tool voxcall runs, a built-in or a module's ("voxcall") or an MCP server's. */
  serverCall(item) {
    const where = item.server_label === "voxcall" ? "server tool · voxcall (built-in or module)"
      : `server tool · MCP server “${item.server_label}”`;
    const card = this.card(item.id, item.name, where, { label: item.server_label });
    if (item.arguments) card.arguments.textContent = item.arguments;
  }

  arguments(itemId, delta) {
    const card = this.cards.get(itemId);
    if (card) card.arguments.textContent += delta;
  }

  argumentsDone(itemId, argumentsJson) {
    const card = this.cards.get(itemId);
    if (!card) return;
    card.argumentsJson = argumentsJson;
    card.arguments.textContent = pretty(argumentsJson);
  }

  status(itemId, status) {
    const card = this.cards.get(itemId);
    if (card) this.setStatus(card, status);
  }

  /** voxcall.tool_call.started: the server began running a call (its call id and round become known). */
  started(event) {
    const card = this.serverCard(event);
    if (!card) return;
    card.callId = event.call_id;
    card.startedAt = performance.now();
    card.node.dataset.callId = event.call_id;
    card.round.textContent = String(event.round);
    this.setStatus(card, "running");
  }

  /** voxcall.tool_call.completed: its result (or error), timed on the page until the server's figure comes. */
  completed(event) {
    const card = this.serverCard(event);
    if (!card) return;
    card.round.textContent = String(event.round);
    this.result(card, event.result, event.status === "ok" ? "completed" : "failed");
    if (card.startedAt !== undefined) this.duration(card, performance.now() - card.startedAt, "seen by the page");
  }

  /** response.output_item.done of an mcp_call: the final output or error (also for calls never run). */
  finish(item) {
    const card = this.cards.get(item.id);
    if (!card) return;
    if (item.error) this.result(card, item.error.message || String(item.error), "failed");
    else if (item.output !== null && item.output !== undefined) this.result(card, item.output, "completed");
  }

  /** A client tool ran in the page and its output was sent. */
  clientResult(itemId, { output, ok, ms }) {
    const card = this.cards.get(itemId);
    if (!card) return;
    this.result(card, output, ok ? "sent" : "failed");
    this.duration(card, ms, "run in the page");
  }

  /** voxcall.tool_call.rejected: a call the model botched, and why. */
  rejected(event) {
    const id = `rejected_${this.cards.size}`;
    const card = this.card(id, event.name, "rejected before it ran", {});
    card.resultLabel.textContent = "Reason";
    this.result(card, event.reason, "rejected");
  }

  /** An mcp_approval_request item: the server asks whether a call may run. */
  approval(item) {
    const card = [...this.cards.values()].reverse().find((c) => c.kind === "server" && c.name === item.name
      && c.label === item.server_label && !c.approval);
    if (!card) return;
    card.approval = item.id;
    this.setStatus(card, "waiting");
    const answer = (approve) => {
      buttons.remove();
      this.setStatus(card, approve ? "running" : "failed");
      this.onapproval(item.id, approve);
    };
    const approve = el("button", { type: "button" }, "Approve");
    const deny = el("button", { type: "button" }, "Deny");
    approve.addEventListener("click", () => answer(true));
    deny.addEventListener("click", () => answer(false));
    const buttons = el("p", { class: "approval" }, approve, " ", deny);
    card.node.append(buttons);
  }

  /** voxcall.response.timing: the server's own figure for each call that ran. */
  timing(event) {
    for (const tool of event.tools || []) {
      const card = [...this.cards.values()].find((c) => c.callId === tool.call_id);
      if (card && tool.duration_ms !== undefined) this.duration(card, tool.duration_ms, "measured by the server");
    }
  }

  clear() {
    this.cards.clear();
    this.list.replaceChildren();
  }

  // -- building and finding cards ------------------------------------------------------------------------

  card(id, name, where, extra) {
    const status = el("dd", { class: "status" });
    const round = el("dd", { class: "round" }, "–");
    const args = el("pre", { class: "arguments" });
    const resultLabel = el("dt", {}, "Result");
    const result = el("pre", { class: "result" }, "–");
    const duration = el("dd", { class: "duration" }, "–");
    const kind = extra.callId !== undefined ? "client" : extra.label !== undefined ? "server" : "rejected";
    const rounds = kind === "server" ? [el("dt", {}, "Round"), round] : []; // server tool rounds of a response
    const node = el("li", { class: `tool-card ${kind}`, "data-item-id": id, "data-kind": kind, "data-name": name },
      el("h3", {}, name),
      el("p", { class: "where" }, where),
      el("dl", {},
        el("dt", {}, "Status"), status,
        ...rounds,
        el("dt", {}, "Arguments"), el("dd", {}, args),
        resultLabel, el("dd", {}, result),
        el("dt", {}, "Duration"), duration));
    const card = { node, kind, name, status, round, arguments: args, resultLabel, result, duration, ...extra };
    this.cards.set(id, card);
    this.setStatus(card, kind === "rejected" ? "rejected" : "streaming");
    followEnd(this.list, () => this.list.append(node));
    return card;
  }

  // The card of a voxcall.tool_call.* event: by call id once known, else the first server card not yet
  // matched whose tool (as the model calls it: "calculator", or "SERVER__TOOL" for MCP) and arguments agree.
  serverCard(event) {
    const cards = [...this.cards.values()].filter((c) => c.kind === "server");
    const known = cards.find((c) => c.callId === event.call_id);
    if (known) return known;
    const named = cards.filter((c) => c.callId === undefined
      && (event.tool === c.name || event.tool === `${c.label}__${c.name}`));
    const params = event.params === undefined ? undefined : JSON.stringify(event.params);
    const same = named.find((c) => params !== undefined && c.argumentsJson !== undefined
      && compact(c.argumentsJson) === params);
    const card = same || named[0];
    if (card) card.callId = event.call_id;
    return card;
  }

  setStatus(card, status) {
    card.node.dataset.status = status;
    card.status.textContent = STATUS_WORDS[status];
  }

  result(card, text, status) {
    card.result.textContent = pretty(text);
    if (status === "failed" && card.resultLabel.textContent === "Result") card.resultLabel.textContent = "Error";
    this.setStatus(card, status);
  }

  duration(card, ms, how) {
    card.duration.textContent = `${formatMs(ms)} (${how})`;
  }
}

const STAGES = [
  ["end_of_turn", "turn confirmed", "the silence the turn detector waited for"],
  ["transcript", "transcript", "speech to text done"],
  ["llm_first_token", "first token", "the model's first output"],
  ["first_audio", "first audio", "the first audio sent"],
];

/** Per response, where the time went (voxcall.response.timing), on one axis from the end of the user's speech
 * (a spoken turn) or from the response.create: its stages in the order they happened, each drawn from the mark
 * before it (the turn detector's wait from 0: an eager answer may be transcribed before the turn is confirmed),
 * and each server tool's run and the time from its result to the next audio. The server gives tool durations,
 * not start times: a tool is placed where the page saw it start (`toolStarts`, ms on the same axis), else at 0. */
export class Timeline {
  constructor(list) {
    this.list = list;
    this.count = 0;
  }

  add(event, toolStarts = new Map()) {
    const stages = STAGES.filter(([key]) => event.timings_ms?.[key] !== undefined)
      .map(([key, label, meaning]) => ({ key, label, meaning, ms: event.timings_ms[key] }))
      .sort((a, b) => a.ms - b.ms);
    const tools = (event.tools || []).map((tool) => ({ ...tool, start: toolStarts.get(tool.call_id) }));
    const scale = Math.max(1, ...stages.map((s) => s.ms),
      ...tools.map((t) => (t.start || 0) + (t.duration_ms || 0) + (t.to_audio_ms || 0)));
    const rows = el("ol", { class: "bars" });
    let previous = 0;
    for (const stage of stages) { // each from the mark before it; the turn detector's wait from the end of speech
      const start = stage.key === "end_of_turn" ? 0 : previous;
      rows.append(this.row(`${stage.label} at ${formatMs(stage.ms)}`, stage.meaning,
        [[start, stage.ms - start, stage.key]], scale));
      previous = stage.ms;
    }
    for (const tool of tools) {
      const start = tool.start || 0;
      const run = tool.duration_ms || 0;
      const words = [tool.duration_ms !== undefined ? `ran ${formatMs(run)}` : "did not finish",
                     tool.to_audio_ms !== undefined ? `result → audio ${formatMs(tool.to_audio_ms)}` : null];
      rows.append(this.row(`tool ${tool.name}: ${words.filter(Boolean).join(", ")}`,
        tool.start === undefined ? "a server tool call (start unknown: drawn at 0)" : "a server tool call",
        [[start, run, "tool"], [start + run, tool.to_audio_ms || 0, "to_audio"]], scale));
    }
    if (!rows.childElementCount) rows.append(el("li", {}, "no stage reached"));
    this.count += 1;
    const origin = event.timings_ms?.end_of_turn !== undefined ? "spoken turn, from the end of speech"
      : "from response.create";
    const node = el("li", { class: "timing", "data-response-id": event.response_id },
      el("h3", {}, `Response ${this.count} · ${origin} `,
        el("span", { class: "hint" }, `(axis 0 to ${formatMs(scale)})`)),
      rows);
    followEnd(this.list, () => this.list.append(node));
  }

  row(words, meaning, segments, scale) {
    const track = el("span", { class: "track", "aria-hidden": "true" });
    for (const [start, length, kind] of segments) {
      if (length <= 0 && kind === "to_audio") continue;
      track.append(el("span", {
        class: `bar ${kind}`,
        style: `left:${(100 * start) / scale}%;width:${Math.max(0.5, (100 * length) / scale)}%`,
      }));
    }
    return el("li", { title: meaning }, el("span", { class: "label" }, words), track);
  }

  clear() {
    this.count = 0;
    this.list.replaceChildren();
  }
}

const AUDIO_EVENTS = new Set(["response.output_audio.delta", "input_audio_buffer.append"]);
const LOG_LIMIT = 1000;

/** Every event both ways, newest first: filtered by type, each expandable to its JSON (audio elided). Audio
 * chunks are counted but listed only on request. */
export class EventLog {
  constructor(list, filter, showAudio, counter) {
    this.list = list;
    this.filter = filter;
    this.showAudio = showAudio;
    this.counter = counter;
    this.audioHidden = 0;
    filter.addEventListener("input", () => this.refilter());
  }

  add(direction, event) {
    if (AUDIO_EVENTS.has(event.type) && !this.showAudio.checked) {
      this.audioHidden += 1;
      this.counter.textContent = `${this.audioHidden} audio chunks not listed`;
      return;
    }
    const pre = el("pre");
    const details = el("details", {},
      el("summary", {},
        el("span", { class: "direction" }, direction === "sent" ? "↑ sent" : "↓ received"), " ",
        el("code", {}, event.type), " ",
        el("time", {}, new Date().toLocaleTimeString())),
      pre);
    details.addEventListener("toggle", () => {
      if (details.open && !pre.textContent) pre.textContent = JSON.stringify(elideAudio(event), null, 2);
    });
    const node = el("li", { class: direction, "data-type": event.type }, details);
    node.hidden = !this.matches(event.type);
    this.list.prepend(node);
    if (this.list.childElementCount > LOG_LIMIT) this.list.lastElementChild.remove();
  }

  matches(type) {
    const wanted = this.filter.value.trim().toLowerCase();
    return !wanted || type.toLowerCase().includes(wanted);
  }

  refilter() {
    for (const node of this.list.children) node.hidden = !this.matches(node.dataset.type);
  }

  clear() {
    this.audioHidden = 0;
    this.counter.textContent = "";
    this.list.replaceChildren();
  }
}

function elideAudio(event) {
  const copy = { ...event };
  for (const key of ["delta", "audio"]) {
    if (AUDIO_EVENTS.has(event.type) && typeof copy[key] === "string") {
      copy[key] = `<${copy[key].length} base64 characters>`;
    }
  }
  return copy;
}

/** JSON text without spaces when it parses, else as it is. */
function compact(text) {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

/** JSON text re-indented when it parses, else as it is. */
export function pretty(text) {
  try {
    const value = JSON.parse(text);
    return typeof value === "object" && value !== null ? JSON.stringify(value, null, 2) : String(text);
  } catch {
    return String(text);
  }
}

export function formatMs(ms) {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}
