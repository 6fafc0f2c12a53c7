// Talks to a running `strata serve` through the official `openai` npm package's
// Responses API (responses.create and responses.stream), the way an application would,
// and prints one JSON summary of what it saw.
//
//   node tools/node/openai_responses_check.mjs http://127.0.0.1:PORT MODEL
//   node tools/node/openai_responses_check.mjs unix:/run/strata/strata.sock MODEL
//
// Every check that fails is listed in the summary's "failures"; the exit status is 0
// only when there are none (2 for a usage error). Driven by
// tests/service/serve/serve_openai_responses_test.cpp, which also reads the summary.
import OpenAI from 'openai';
import { VERSION } from 'openai/version';
import { CheckSummary, clientTarget } from './sdk_check.mjs';

const target = process.argv[2];
const model = process.argv[3];
if (!target || !model) {
  console.error('usage: node openai_responses_check.mjs http://127.0.0.1:PORT|unix:PATH MODEL');
  process.exit(2);
}
const client = new OpenAI({
  ...clientTarget(target, '/v1'),
  apiKey: 'sk-local',
  maxRetries: 0,
  timeout: 60_000,
});

const run = new CheckSummary({ sdk_version: VERSION });
const { summary, failures } = run;
const check = run.check.bind(run);
const step = run.step.bind(run);

const isCount = (v) => Number.isInteger(v) && v >= 0;

function checkResponse(r, where, maxTokens) {
  check(r.object === 'response', `${where}: object ${r.object}`);
  check(typeof r.id === 'string' && r.id.startsWith('resp_'), `${where}: id ${r.id}`);
  check(r.model === model, `${where}: model ${r.model}`);
  check(['completed', 'incomplete'].includes(r.status), `${where}: status ${r.status}`);
  check(r.status !== 'incomplete' || r.incomplete_details?.reason === 'max_output_tokens',
        `${where}: incomplete without the reason`);
  check(Array.isArray(r.output), `${where}: output is not an array`);
  for (const item of r.output) {
    check(['message', 'reasoning', 'function_call'].includes(item.type),
          `${where}: output item ${item.type}`);
  }
  check(typeof r.output_text === 'string', `${where}: output_text`);
  check(isCount(r.usage?.input_tokens) && r.usage.input_tokens > 0, `${where}: usage.input_tokens`);
  check(isCount(r.usage?.output_tokens) && r.usage.output_tokens >= 1 &&
            r.usage.output_tokens <= maxTokens,
        `${where}: usage.output_tokens ${r.usage?.output_tokens}`);
  check(r.usage?.total_tokens === r.usage?.input_tokens + r.usage?.output_tokens,
        `${where}: usage.total_tokens`);
}

const request = {
  model,
  instructions: 'Answer briefly.',
  input: 'Name three rivers.',
  max_output_tokens: 12,
  temperature: 0,
  store: false,
};

await step('create', async () => {
  const r = await client.responses.create(request);
  checkResponse(r, 'create', 12);
  return { text: r.output_text, status: r.status, usage: r.usage };
});

await step('stream', async () => {
  const stream = client.responses.stream(request);
  const types = [];
  const sequence = [];
  let deltas = '';
  for await (const event of stream) {
    types.push(event.type);
    sequence.push(event.sequence_number);
    if (event.type === 'response.output_text.delta') deltas += event.delta;
  }
  const final = await stream.finalResponse();
  checkResponse(final, 'stream', 12);
  check(types[0] === 'response.created', `stream: first event ${types[0]}`);
  check(['response.completed', 'response.incomplete'].includes(types.at(-1)),
        `stream: last event ${types.at(-1)}`);
  check(sequence.every((n, i) => n === i), 'stream: sequence numbers are not 0, 1, 2, ...');
  check(deltas === final.output_text, 'stream: text deltas differ from output_text');
  check(summary.create === null || final.output_text === summary.create.text,
        'stream: greedy stream differs from the greedy whole reply');
  return { events: types.length, text: final.output_text, status: final.status };
});

await step('function_call_round_trip', async () => {
  const r = await client.responses.create({
    model,
    max_output_tokens: 8,
    temperature: 0,
    tools: [{
      type: 'function',
      name: 'get_weather',
      description: 'The weather in a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      strict: false,
    }],
    input: [
      { role: 'user', content: 'What is the weather in Lyon?' },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather',
        arguments: '{"city": "Lyon"}' },
      { type: 'function_call_output', call_id: 'call_1', output: '18 C, sunny' },
    ],
    reasoning: { effort: 'low' },
  });
  checkResponse(r, 'function_call_round_trip', 8);
  check(r.tools?.[0]?.name === 'get_weather', 'function_call_round_trip: tools not echoed');
  return { status: r.status, items: r.output.map((i) => i.type) };
});

async function expectError(name, body) {
  await step(name, async () => {
    try {
      await client.responses.create(body);
      failures.push(`${name}: no error`);
      return null;
    } catch (e) {
      return { class: e?.constructor?.name, status: e?.status ?? null, param: e?.param ?? null,
               code: e?.code ?? null };
    }
  });
}

await expectError('previous_response_id', { ...request, previous_response_id: 'resp_123' });
await expectError('unknown_model', { ...request, model: 'no-such-model' });

run.finish();
