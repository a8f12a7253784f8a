// examples/agents_sdk.mjs: the OpenAI Agents SDK for JavaScript talking to voxcall.
// cd examples && npm install && node agents_sdk.mjs [ws://127.0.0.1:8765/v1/realtime]
import { OpenAIRealtimeWebSocket, RealtimeAgent, RealtimeSession, tool } from '@openai/agents-realtime';
import { z } from 'zod';

const url = process.argv[2] ?? 'ws://127.0.0.1:8765/v1/realtime';

const calculator = tool({
  name: 'calculator',
  description: 'Do arithmetic.',
  parameters: z.object({ op: z.enum(['add', 'sub', 'mul', 'div']), a: z.number(), b: z.number() }),
  execute: async ({ op, a, b }) => String({ add: a + b, sub: a - b, mul: a * b, div: a / b }[op]),
});
const agent = new RealtimeAgent({ name: 'Assistant', instructions: 'Answer briefly.', tools: [calculator] });
const session = new RealtimeSession(agent, {
  transport: new OpenAIRealtimeWebSocket({ url }),
  config: { outputModalities: ['text'] },            // ['audio'] (the default) when the server speaks
  automaticallyTriggerResponseForMcpToolCalls: false, // voxcall answers after its own tools by itself
});

session.transport.on('output_text_delta', ({ delta }) => process.stdout.write(delta)); // the answer as it streams
session.transport.on('audio_transcript_delta', ({ delta }) => process.stdout.write(delta)); // (spoken answers)
session.on('agent_tool_end', (context, agent, tool, result) => console.log(`\n  [${tool.name} → ${result}]`));
session.transport.on('turn_done', ({ response }) => {
  if (!response.output.some((item) => item.type === 'function_call')) { // no tool left to run: the answer is done
    console.log();
    session.close();
  }
});

try {
  await session.connect({ apiKey: 'unused-on-loopback', url }); // any key, unless the server is given keys
} catch (error) {
  console.error(`cannot connect to ${url}: ${error.message}`);
  process.exit(1);
}
session.sendMessage('what is 12 times 8');
