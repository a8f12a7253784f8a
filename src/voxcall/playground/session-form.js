// The session settings form: filled from the session the server describes, read back into the `session` of a
// session.update (instructions, voice, turn detection, output modalities, tools).

import { WIRE_RATE } from "./audio.js";

const PCM = { type: "audio/pcm", rate: WIRE_RATE };

export class SessionForm {
  constructor(form, demoTools) {
    this.form = form;
    this.demoTools = demoTools;
    this.fields = form.elements;
    this.error = form.querySelector("[data-role=error]");
    this.restoreTools();
    form.querySelector("[data-role=demo-tools]").addEventListener("click", () => this.restoreTools());
    this.fields["turn-detection"].addEventListener("change", () => this.showSilence());
  }

  restoreTools() {
    this.fields.tools.value = JSON.stringify(this.demoTools, null, 2);
  }

  /** Show what the server says the session is (the tools editor keeps what the user wrote). */
  fill(session) {
    this.fields.instructions.value = session.instructions || "";
    const output = session.audio?.output || {};
    if (output.voice) this.fields.voice.value = output.voice;
    const detection = session.audio?.input?.turn_detection;
    this.fields["turn-detection"].value = detection ? detection.type : "none";
    if (detection?.silence_duration_ms) this.fields["silence-ms"].value = detection.silence_duration_ms;
    this.fields.modality.value = (session.output_modalities || ["audio"])[0];
    this.showSilence();
  }

  showSilence() {
    this.fields["silence-ms"].disabled = this.fields["turn-detection"].value !== "server_vad";
  }

  /** The `session` of a session.update from the form; null (and the reason shown) when the tools JSON is bad. */
  read() {
    let tools;
    try {
      tools = JSON.parse(this.fields.tools.value || "[]");
      if (!Array.isArray(tools)) throw new Error("the tools must be a JSON array");
    } catch (error) {
      this.error.textContent = `Tools: ${error.message}`;
      this.fields.tools.setAttribute("aria-invalid", "true");
      return null;
    }
    this.error.textContent = "";
    this.fields.tools.removeAttribute("aria-invalid");
    const kind = this.fields["turn-detection"].value;
    const turnDetection = kind === "none" ? null
      : kind === "server_vad" ? { type: "server_vad", silence_duration_ms: Number(this.fields["silence-ms"].value) }
        : { type: kind };
    const session = {
      type: "realtime",
      output_modalities: [this.fields.modality.value],
      audio: {
        input: { format: PCM, turn_detection: turnDetection },
        output: { format: PCM, voice: this.fields.voice.value.trim() || undefined },
      },
      tools,
      tool_choice: "auto",
    };
    const instructions = this.fields.instructions.value.trim();
    if (instructions) session.instructions = instructions;
    return session;
  }
}
