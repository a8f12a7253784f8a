// The OpenAI Agents SDK for JavaScript (@openai/agents-realtime) against voxcall: a RealtimeSession over the SDK's
// WebSocket transport, with a function tool the SDK runs itself. The server runs the scripted backend with
// script.yaml beside this file; tests/test_js_clients.py starts it and runs `node --test tests/js/`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RealtimeAgent, tool } from '@openai/agents-realtime';
import { z } from 'zod';
import { QUESTION_WAV, connect, historyOf, readPcm16Wav, speak } from './harness.mjs';

const TIMEOUT_MS = 120_000;
const STORY_START = 'Once upon a time, a small robot lived in a lighthouse by the sea.';

/** A calculator the SDK executes; every call's arguments are pushed to `calls`. */
function calculator(calls) {
  return tool({
    name: 'calculator',
    description: 'Do arithmetic.',
    parameters: z.object({ op: z.enum(['add', 'sub', 'mul', 'div']), a: z.number(), b: z.number() }),
    execute: async ({ op, a, b }) => {
      calls.push({ op, a, b });
      return String({ add: a + b, sub: a - b, mul: a * b, div: a / b }[op]);
    },
  });
}

function assistant(calls) {
  return new RealtimeAgent({ name: 'Assistant', instructions: 'Answer briefly.', tools: [calculator(calls)] });
}

test('a text turn: the SDK runs the tool, sends its output, and the assistant answers with it', { timeout: TIMEOUT_MS },
  async (t) => {
    const calls = [];
    const wire = await connect(assistant(calls), { config: { outputModalities: ['text'] } });
    try {
      wire.session.sendMessage('what is 12 times 8');
      await wire.responseSaying('The answer is 96.');
      assert.deepEqual(calls, [{ op: 'mul', a: 12, b: 8 }]);
      assert.deepEqual(historyOf(wire.session), [
        ['user', 'what is 12 times 8'],
        ['assistant', 'Let me work that out.'],
        ['calculator', '{"op":"mul","a":12,"b":8}', '96'],
        ['assistant', 'The answer is 96.'],
      ]);
      const [output] = wire.sent('conversation.item.create').filter((e) => e.item.type === 'function_call_output');
      const call = wire.received('response.function_call_arguments.done')[0];
      assert.equal(output.item.call_id, call.call_id);
      assert.equal(wire.sent('response.create').length, 2); // the question, then the follow-up after the output
      wire.assertClean();
      t.diagnostic(wire.summary());
    } finally {
      wire.close();
    }
  });

test('an audio turn from a WAV file: heard, transcribed, the tool runs and the answer is spoken',
  { timeout: TIMEOUT_MS }, async (t) => {
    const calls = [];
    const wire = await connect(assistant(calls)); // the SDK's defaults: audio out, semantic_vad turn detection
    let audioBytes = 0;
    wire.session.on('audio', (event) => { audioBytes += event.data.byteLength; });
    try {
      const [updated] = wire.received('session.updated');
      assert.equal(updated.session.audio.input.turn_detection.type, 'semantic_vad');
      await speak(wire.session, readPcm16Wav(QUESTION_WAV));
      await wire.responseSaying('The answer is 96.');
      assert.deepEqual(calls, [{ op: 'mul', a: 12, b: 8 }]);
      for (const type of ['input_audio_buffer.speech_started', 'input_audio_buffer.speech_stopped',
        'input_audio_buffer.committed', 'conversation.item.input_audio_transcription.completed']) {
        assert.equal(wire.received(type).length, 1, type);
      }
      // The SDK reads the user's item back after its transcript: voxcall answers with the item, transcript included.
      const { item_id: heardId, transcript } = wire.received('conversation.item.input_audio_transcription.completed')[0];
      assert.ok(wire.sent('conversation.item.retrieve').some((event) => event.item_id === heardId));
      const retrieved = await wire.waitFor((e) => e.type === 'conversation.item.retrieved' && e.item.id === heardId,
        'the retrieved user item');
      assert.equal(retrieved.item.content[0].transcript, transcript);
      const [question, ...rest] = historyOf(wire.session);
      assert.deepEqual(question, ['user', transcript]);
      assert.deepEqual(rest.slice(1), [['calculator', '{"op":"mul","a":12,"b":8}', '96'],
        ['assistant', 'The answer is 96.']]);
      assert.ok(audioBytes > 24000, `only ${audioBytes} bytes of spoken answer`); // over half a second
      wire.assertClean();
      t.diagnostic(wire.summary());
    } finally {
      wire.close();
    }
  });

test('interrupt(): the response is cancelled, its audio stops, the transcript is cut, and the talk goes on',
  { timeout: TIMEOUT_MS }, async (t) => {
    const calls = [];
    const wire = await connect(assistant(calls));
    let interrupted = false;
    const stopped = new Promise((resolve) => { wire.session.on('audio_interrupted', resolve); });
    wire.session.on('audio', () => {
      if (!interrupted) {
        interrupted = true;
        wire.session.interrupt(); // as an app does when its user starts talking over the answer
      }
    });
    try {
      wire.session.sendMessage('tell me a story');
      const done = await wire.waitFor((e) => e.type === 'response.done', 'response.done');
      await stopped;
      assert.equal(done.response.status, 'cancelled');
      assert.equal(done.response.status_details.reason, 'client_cancelled');
      const after = wire.serverEvents.slice(wire.serverEvents.indexOf(done));
      assert.ok(!after.some((e) => e.type === 'response.output_audio.delta' && e.response_id === done.response.id),
        'audio of the cancelled response came after its response.done');
      const [truncate] = wire.sent('conversation.item.truncate');
      const truncated = await wire.waitFor((e) => e.type === 'conversation.item.truncated', 'the truncation');
      assert.deepEqual([truncated.item_id, truncated.audio_end_ms], [truncate.item_id, truncate.audio_end_ms]);
      const retrieved = await wire.waitFor((e) => e.type === 'conversation.item.retrieved'
        && e.item.id === truncate.item_id, 'the retrieved truncated item');
      const heard = retrieved.item.content[0].transcript;
      assert.ok(STORY_START.startsWith(heard) && heard.length < STORY_START.length,
        `the transcript should be cut to what was heard, it is ${JSON.stringify(heard)}`);
      wire.session.sendMessage('what is 12 times 8');
      await wire.responseSaying('The answer is 96.');
      assert.deepEqual(calls, [{ op: 'mul', a: 12, b: 8 }]);
      wire.assertClean();
      t.diagnostic(wire.summary());
    } finally {
      wire.close();
    }
  });

test('a handoff: the SDK switches agents with session.update and the new agent answers', { timeout: TIMEOUT_MS },
  async (t) => {
    const billing = new RealtimeAgent({ name: 'Billing', handoffDescription: 'Questions about bills.',
      instructions: 'You handle billing.' });
    const agent = new RealtimeAgent({ name: 'Assistant', instructions: 'Answer briefly.', handoffs: [billing] });
    const wire = await connect(agent, { config: { outputModalities: ['text'] } });
    const handoffs = [];
    wire.session.on('agent_handoff', (context, from, to) => handoffs.push([from.name, to.name]));
    try {
      wire.session.sendMessage('I have a billing question');
      await wire.responseSaying('Billing here. What can I do for you?');
      assert.deepEqual(handoffs, [['Assistant', 'Billing']]);
      const updated = wire.received('session.updated').at(-1);
      assert.equal(updated.session.instructions, 'You handle billing.');
      assert.deepEqual(updated.session.tools, []);
      assert.deepEqual(historyOf(wire.session).map(([who]) => who),
        ['user', 'assistant', 'transfer_to_Billing', 'assistant']);
      wire.assertClean();
      t.diagnostic(wire.summary());
    } finally {
      wire.close();
    }
  });

test('updateHistory(): an edited message is deleted and created again in its place', { timeout: TIMEOUT_MS },
  async (t) => {
    const wire = await connect(assistant([]), { config: { outputModalities: ['text'] } });
    try {
      wire.session.sendMessage('hello');
      await wire.responseSaying('Sorry, I only know a few phrases.');
      const [question] = wire.session.history;
      wire.session.updateHistory((history) => history.map((item) => (item.itemId === question.itemId
        ? { ...item, content: [{ type: 'input_text', text: 'hello again' }] } : item)));
      const added = await wire.waitFor((e) => e.type === 'conversation.item.added' && e.item.id === question.itemId
        && e.item.content[0].text === 'hello again', 'the edited item');
      assert.equal(added.previous_item_id, null); // still first
      wire.session.transport.sendEvent({ type: 'conversation.item.retrieve', item_id: question.itemId });
      const retrieved = await wire.waitFor((e) => e.type === 'conversation.item.retrieved', 'the edited item');
      assert.equal(retrieved.item.content[0].text, 'hello again');
      assert.deepEqual(historyOf(wire.session), [['user', 'hello again'],
        ['assistant', 'Sorry, I only know a few phrases.']]);
      wire.assertClean();
      t.diagnostic(wire.summary());
    } finally {
      wire.close();
    }
  });

test("voxcall's server tools: an MCP call the user approves runs in the server and its answer follows at once",
  { timeout: TIMEOUT_MS }, async (t) => {
    // voxcall continues a response after its own tools ran, so the SDK must not ask for another one.
    const wire = await connect(new RealtimeAgent({ name: 'Assistant', instructions: 'Answer briefly.' }),
      { config: { outputModalities: ['text'] }, automaticallyTriggerResponseForMcpToolCalls: false });
    const approvals = [];
    wire.session.on('tool_approval_requested', (context, agent, request) => {
      approvals.push(request.approvalItem.rawItem.name);
      wire.session.approve(request.approvalItem);
    });
    try {
      wire.session.sendMessage('what time is it');
      const done = await wire.responseSaying('I looked at the clock.');
      assert.deepEqual(approvals, ['get_current_time']);
      assert.deepEqual(done.response.output.map((item) => item.type),
        ['message', 'mcp_call', 'mcp_approval_request', 'message']);
      const [, call, request] = done.response.output;
      assert.deepEqual([call.type, call.server_label, call.name], ['mcp_call', 'time', 'get_current_time']);
      assert.match(call.output, /UTC|\+00:00/);
      const [answer] = wire.sent('conversation.item.create').filter((e) => e.item.type === 'mcp_approval_response');
      assert.deepEqual([answer.item.approval_request_id, answer.item.approve], [request.id, true]);
      assert.equal(wire.sent('response.create').length, 1);
      assert.deepEqual(historyOf(wire.session).map(([who]) => who), // the call and its approval request
        ['user', 'assistant', 'get_current_time', 'get_current_time', 'assistant']);
      wire.assertClean();
      t.diagnostic(wire.summary());
    } finally {
      wire.close();
    }
  });
