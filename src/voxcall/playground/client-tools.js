// The client-side tools the page itself implements. They are offered to the model in the session's tools
// (the JSON editor starts with them); when the model calls one, the page runs it, sends the output as a
// function_call_output item and asks for the follow-up with response.create: the client tool loop.

export const DEMO_TOOLS = [
  {
    type: "function",
    name: "get_local_time",
    description: "Get the current local time of the user's device.",
    parameters: { type: "object", properties: {}, required: [] },
  },
  {
    type: "function",
    name: "set_page_color",
    description: "Set the background colour of the playground page.",
    parameters: {
      type: "object",
      properties: { color: { type: "string", description: "A CSS colour, e.g. \"lightblue\" or \"#ffeedd\"." } },
      required: ["color"],
    },
  },
];

const IMPLEMENTATIONS = {
  get_local_time() {
    const now = new Date();
    const time = now.toLocaleTimeString("en-US", { hour: "numeric", minute: "2-digit" });
    return `${time} (${Intl.DateTimeFormat().resolvedOptions().timeZone})`;
  },
  set_page_color({ color }) {
    if (typeof color !== "string" || !CSS.supports("color", color)) {
      throw new Error(`${JSON.stringify(color)} is not a CSS colour`);
    }
    document.documentElement.style.setProperty("--page-color", color);
    return `the page is now ${color}`;
  },
};

/** Run the client tool `name` on `argumentsJson`: `{output, ok, ms}`. A tool the page does not implement,
 * unreadable arguments or a failing tool give an error output, so the model is always answered. */
export function runClientTool(name, argumentsJson) {
  const started = performance.now();
  let output;
  let ok = false;
  try {
    const implementation = Object.hasOwn(IMPLEMENTATIONS, name) ? IMPLEMENTATIONS[name] : null;
    if (!implementation) throw new Error(`the playground does not implement the tool ${name}`);
    output = String(implementation(argumentsJson ? JSON.parse(argumentsJson) : {}));
    ok = true;
  } catch (error) {
    output = JSON.stringify({ error: error.message });
  }
  return { output, ok, ms: performance.now() - started };
}
