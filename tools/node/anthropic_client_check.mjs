// Talks to a running `strata serve` with the official `@anthropic-ai/sdk` npm package,
// the way an application would, and prints one JSON summary of what it saw.
//
//   node tools/node/anthropic_client_check.mjs http://127.0.0.1:PORT
//   node tools/node/anthropic_client_check.mjs unix:/run/strata/strata.sock
//
// Every check that fails is listed in the summary's "failures"; the exit status is 0
// only when there are none (2 for a usage error). Driven by
// tests/service/serve/serve_sdk_clients_test.cpp, which also reads the summary.
import Anthropic from '@anthropic-ai/sdk';
import { VERSION } from '@anthropic-ai/sdk/version';
import { CheckSummary, clientTarget } from './sdk_check.mjs';

const target = process.argv[2];
const model = process.argv[3];
if (!target || !model) {
  console.error('usage: node anthropic_client_check.mjs http://127.0.0.1:PORT|unix:PATH MODEL');
  process.exit(2);
}
const client = new Anthropic({
  ...clientTarget(target, ''),
  apiKey: 'sk-local',
  maxRetries: 0,
  timeout: 60_000,
});

const run = new CheckSummary({ sdk_version: VERSION });
const { summary, failures } = run;
const check = run.check.bind(run);
const step = run.step.bind(run);

const isCount = (v) => Number.isInteger(v) && v >= 0;
const textOf = (message) =>
  message.content.filter((b) => b.type === 'text').map((b) => b.text).join('');

function checkMessage(m, where, maxTokens) {
  check(m.type === 'message', `${where}: type ${m.type}`);
  check(m.role === 'assistant', `${where}: role ${m.role}`);
  check(typeof m.id === 'string' && m.id.startsWith('msg_'), `${where}: id ${m.id}`);
  check(m.model === model, `${where}: model ${m.model}`);
  check(Array.isArray(m.content), `${where}: content is not an array`);
  for (const block of m.content) {
    check(['text', 'thinking', 'tool_use'].includes(block.type), `${where}: block ${block.type}`);
  }
  check(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use'].includes(m.stop_reason),
        `${where}: stop_reason ${m.stop_reason}`);
  check(isCount(m.usage?.input_tokens), `${where}: usage.input_tokens`);
  check(isCount(m.usage?.cache_read_input_tokens), `${where}: usage.cache_read_input_tokens`);
  check(m.usage.input_tokens + m.usage.cache_read_input_tokens > 0, `${where}: no input tokens`);
  check(isCount(m.usage?.output_tokens) && m.usage.output_tokens >= 1 &&
            m.usage.output_tokens <= maxTokens,
        `${where}: usage.output_tokens ${m.usage?.output_tokens} not in [1, ${maxTokens}]`);
}

const conversation = {
  model,
  max_tokens: 12,
  temperature: 0,
  system: 'Answer briefly.',
  messages: [{ role: 'user', content: 'Name three rivers.' }],
};

await step('create', async () => {
  const m = await client.messages.create(conversation);
  checkMessage(m, 'create', 12);
  return { text: textOf(m), stop_reason: m.stop_reason, usage: m.usage };
});

await step('stream', async () => {
  const stream = client.messages.stream(conversation);
  const types = [];
  let deltas = '';
  stream.on('streamEvent', (event) => {
    types.push(event.type);
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
      deltas += event.delta.text;
    }
  });
  const final = await stream.finalMessage();
  checkMessage(final, 'stream', 12);
  check(types[0] === 'message_start', `stream: first event ${types[0]}`);
  check(types.at(-1) === 'message_stop', `stream: last event ${types.at(-1)}`);
  check(types.filter((t) => t === 'content_block_start').length ===
            types.filter((t) => t === 'content_block_stop').length,
        'stream: blocks opened and closed differ');
  check(deltas === textOf(final), 'stream: text deltas differ from the final message');
  check(summary.create === null || textOf(final) === summary.create.text,
        'stream: greedy stream differs from the greedy whole reply');
  return { events: types.length, text: textOf(final), stop_reason: final.stop_reason };
});

await step('stop_sequence', async () => {
  // Greedy decoding repeats itself: a word from the middle of the reply ends it early.
  const words = (summary.create?.text ?? '').split(/\s+/).filter((w) => w.length >= 3);
  if (words.length < 2) return { skipped: 'the reply has too few words' };
  const stop = words[1];
  const m = await client.messages.create({ ...conversation, stop_sequences: [stop] });
  checkMessage(m, 'stop_sequence', 12);
  check(m.stop_reason === 'stop_sequence', `stop_sequence: stop_reason ${m.stop_reason}`);
  check(m.stop_sequence === stop, `stop_sequence: stop_sequence ${m.stop_sequence}`);
  check(!textOf(m).includes(stop), 'stop_sequence: the stop string was sent');
  return { stop, text: textOf(m) };
});

const tools = [{
  name: 'get_weather',
  description: 'The weather in a city.',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['C', 'F'] } },
    required: ['city'],
  },
}];
const toolConversation = {
  model,
  max_tokens: 8,
  temperature: 0,
  tools,
  messages: [
    { role: 'user', content: 'What is the weather in Lyon?' },
    { role: 'assistant', content: [
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Lyon' } },
    ] },
    { role: 'user', content: [
      { type: 'tool_result', tool_use_id: 'toolu_01', content: '18 C, sunny' },
    ] },
  ],
};

await step('tools_round_trip', async () => {
  const m = await client.messages.create(toolConversation);
  checkMessage(m, 'tools_round_trip', 8);
  return { stop_reason: m.stop_reason, blocks: m.content.map((b) => b.type) };
});

await step('count_tokens', async () => {
  const plain = await client.messages.countTokens({
    model, system: conversation.system, messages: conversation.messages,
  });
  check(isCount(plain.input_tokens) && plain.input_tokens > 0, 'count_tokens: input_tokens');
  const usage = summary.create?.usage;
  check(!usage || plain.input_tokens === usage.input_tokens + usage.cache_read_input_tokens,
        `count_tokens: ${plain.input_tokens} differs from the reply's input tokens`);
  const { max_tokens, temperature, ...countable } = toolConversation;
  const withTools = await client.messages.countTokens(countable);
  const { tools: _, ...noTools } = countable;
  const withoutTools = await client.messages.countTokens(noTools);
  return {
    input_tokens: plain.input_tokens,
    with_tools: withTools.input_tokens,
    without_tools: withoutTools.input_tokens,
  };
});

async function expectError(name, request, stream = false) {
  await step(name, async () => {
    try {
      if (stream) {
        for await (const _ of await client.messages.create({ ...request, stream: true })) { /* */ }
      } else {
        await client.messages.create(request);
      }
      failures.push(`${name}: no error`);
      return null;
    } catch (e) {
      return { class: e?.constructor?.name, status: e?.status ?? null, type: e?.type ?? null,
               message: e?.apiMessage ?? null };
    }
  });
}

await expectError('unknown_model', { ...conversation, model: 'no-such-model' });
await expectError('missing_max_tokens', { model, messages: conversation.messages });
await expectError('bad_temperature_stream', { ...conversation, temperature: 7 }, true);

run.finish();
