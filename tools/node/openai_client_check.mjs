// Talks to a running `strata serve` with the official `openai` npm package, the
// way an application would, and prints one JSON summary of what it saw.
//
//   node tools/node/openai_client_check.mjs http://127.0.0.1:PORT
//
// Every check that fails is listed in the summary's "failures"; the exit status
// is 0 only when there are none (2 for a usage error). Driven by
// tests/service/serve/serve_openai_client_test.cpp, which also reads the summary.
import OpenAI from 'openai';
import { VERSION } from 'openai/version';

const base = process.argv[2];
if (!base) {
  console.error('usage: node openai_client_check.mjs http://127.0.0.1:PORT');
  process.exit(2);
}

const client = new OpenAI({
  baseURL: `${base.replace(/\/+$/, '')}/v1`,
  apiKey: 'sk-local',
  maxRetries: 0,
  timeout: 60_000,
});

const failures = [];
const summary = { sdk_version: VERSION, failures };

function check(condition, what) {
  if (!condition) failures.push(what);
  return condition;
}

const isCount = (v) => Number.isInteger(v) && v >= 0;

function checkUsage(usage, where, maxCompletion) {
  if (!check(usage && typeof usage === 'object', `${where}: usage missing`)) return;
  check(isCount(usage.prompt_tokens) && usage.prompt_tokens > 0, `${where}: usage.prompt_tokens`);
  check(isCount(usage.completion_tokens) && usage.completion_tokens >= 1 &&
            usage.completion_tokens <= maxCompletion,
        `${where}: usage.completion_tokens ${usage.completion_tokens} not in [1, ${maxCompletion}]`);
  check(usage.total_tokens === usage.prompt_tokens + usage.completion_tokens,
        `${where}: usage.total_tokens != prompt + completion`);
  check(isCount(usage.prompt_tokens_details?.cached_tokens),
        `${where}: usage.prompt_tokens_details.cached_tokens`);
}

// Runs one named step; an exception is a failure of that step, not of the script.
async function step(name, body) {
  try {
    summary[name] = await body();
  } catch (e) {
    failures.push(`${name}: threw ${e?.constructor?.name}: ${e?.message}`);
    summary[name] = null;
  }
}

let model = null;

await step('models', async () => {
  const ids = [];
  for await (const m of client.models.list()) {
    ids.push(m.id);
    check(m.object === 'model', `models: object is ${m.object}`);
    check(typeof m.owned_by === 'string', 'models: owned_by');
    check(Number.isInteger(m.created), 'models: created');
  }
  check(ids.length >= 1, 'models: empty list');
  model = ids[0];
  return ids;
});
model ??= 'unknown';

await step('chat', async () => {
  const r = await client.chat.completions.create({
    model,
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello.' },
    ],
    max_tokens: 8,
    seed: 11,
  });
  check(r.object === 'chat.completion', `chat: object ${r.object}`);
  check(typeof r.id === 'string' && r.id.length > 0, 'chat: id');
  check(r.model === model, `chat: model ${r.model}`);
  check(r.choices.length === 1, 'chat: one choice');
  const choice = r.choices[0];
  check(choice.message.role === 'assistant', 'chat: role');
  check(typeof choice.message.content === 'string', 'chat: content is not a string');
  check(['stop', 'length'].includes(choice.finish_reason),
        `chat: finish_reason ${choice.finish_reason}`);
  checkUsage(r.usage, 'chat', 8);
  return {
    content: choice.message.content,
    finish_reason: choice.finish_reason,
    usage: r.usage,
  };
});

await step('chat_stream', async () => {
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'Count to three.' }],
    max_tokens: 12,
    seed: 5,
    stream: true,
    stream_options: { include_usage: true },
  });
  let content = '';
  let chunks = 0;
  let finishReasons = [];
  let usageChunks = 0;
  let lastChunk = null;
  let role = null;
  for await (const chunk of stream) {
    chunks++;
    lastChunk = chunk;
    check(chunk.object === 'chat.completion.chunk', `chat_stream: object ${chunk.object}`);
    if (chunk.usage) usageChunks++;
    for (const c of chunk.choices) {
      if (c.delta?.role) role = c.delta.role;
      if (typeof c.delta?.content === 'string') content += c.delta.content;
      if (c.finish_reason) finishReasons.push(c.finish_reason);
    }
  }
  check(chunks >= 3, `chat_stream: only ${chunks} chunks`);
  check(role === 'assistant', 'chat_stream: no assistant role delta');
  check(finishReasons.length === 1, `chat_stream: ${finishReasons.length} finish_reasons`);
  check(usageChunks === 1, `chat_stream: ${usageChunks} chunks with usage`);
  check(lastChunk && lastChunk.choices.length === 0,
        'chat_stream: the last chunk does not have empty choices');
  checkUsage(lastChunk?.usage, 'chat_stream', 12);
  // The same request whole: the same seed gives the same text.
  const whole = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'Count to three.' }],
    max_tokens: 12,
    seed: 5,
  });
  check(whole.choices[0].message.content === content,
        'chat_stream: concatenated deltas differ from the non-streamed reply');
  return {
    chunks,
    content,
    finish_reason: finishReasons[0] ?? null,
    usage: lastChunk?.usage ?? null,
  };
});

await step('completion', async () => {
  const r = await client.completions.create({
    model,
    prompt: 'Once upon a time',
    max_tokens: 6,
    seed: 1,
  });
  check(r.object === 'text_completion', `completion: object ${r.object}`);
  check(typeof r.choices[0].text === 'string', 'completion: text is not a string');
  check(['stop', 'length'].includes(r.choices[0].finish_reason),
        `completion: finish_reason ${r.choices[0].finish_reason}`);
  checkUsage(r.usage, 'completion', 6);
  return { text: r.choices[0].text, finish_reason: r.choices[0].finish_reason, usage: r.usage };
});

await step('completion_stream', async () => {
  const request = { model, prompt: 'Once upon a time', max_tokens: 6, seed: 1 };
  const stream = await client.completions.create({
    ...request,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let chunks = 0;
  let finishReasons = [];
  let usage = null;
  for await (const chunk of stream) {
    chunks++;
    check(chunk.object === 'text_completion', `completion_stream: object ${chunk.object}`);
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      text += c.text ?? '';
      if (c.finish_reason) finishReasons.push(c.finish_reason);
    }
  }
  check(finishReasons.length === 1, `completion_stream: ${finishReasons.length} finish_reasons`);
  checkUsage(usage, 'completion_stream', 6);
  const whole = await client.completions.create(request);
  check(whole.choices[0].text === text,
        'completion_stream: concatenated text differs from the non-streamed reply');
  return { chunks, text, finish_reason: finishReasons[0] ?? null, usage };
});

await step('logprobs', async () => {
  const r = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'Hi' }],
    max_tokens: 4,
    logprobs: true,
    top_logprobs: 3,
  });
  const content = r.choices[0].logprobs?.content;
  if (!check(Array.isArray(content), 'logprobs: choices[0].logprobs.content is not an array')) {
    return null;
  }
  check(content.length === r.usage.completion_tokens,
        `logprobs: ${content.length} entries for ${r.usage.completion_tokens} tokens`);
  for (const entry of content) {
    check(typeof entry.token === 'string', 'logprobs: token');
    check(typeof entry.logprob === 'number' && entry.logprob <= 0, 'logprobs: logprob');
    check(Array.isArray(entry.bytes), 'logprobs: bytes');
    check(Array.isArray(entry.top_logprobs) && entry.top_logprobs.length === 3,
          `logprobs: ${entry.top_logprobs?.length} top_logprobs, want 3`);
    for (const alt of entry.top_logprobs ?? []) {
      check(typeof alt.token === 'string' && typeof alt.logprob === 'number' &&
                Array.isArray(alt.bytes),
            'logprobs: top_logprobs entry shape');
    }
    const best = Math.max(...(entry.top_logprobs ?? []).map((alt) => alt.logprob));
    check(best >= entry.logprob - 1e-4, 'logprobs: the sampled token beats every top entry');
  }
  // The legacy completions shape: logprobs is a count.
  const legacy = await client.completions.create({
    model,
    prompt: 'Hi',
    max_tokens: 3,
    logprobs: 3,
  });
  const lp = legacy.choices[0].logprobs;
  check(lp && Array.isArray(lp.tokens) && lp.tokens.length === legacy.usage.completion_tokens,
        'logprobs: completions tokens');
  check(Array.isArray(lp?.token_logprobs) && lp.token_logprobs.length === lp.tokens.length,
        'logprobs: completions token_logprobs');
  check(Array.isArray(lp?.top_logprobs) &&
            lp.top_logprobs.every((t) => t && typeof t === 'object' &&
                                         Object.keys(t).length >= 1 &&
                                         Object.keys(t).length <= 4),
        'logprobs: completions top_logprobs');
  check(Array.isArray(lp?.text_offset) && lp.text_offset.length === lp.tokens.length,
        'logprobs: completions text_offset');
  return { entries: content.length, top: content[0]?.top_logprobs?.length ?? 0 };
});

// Errors: what the SDK throws, not only the status.
async function expectError(name, Class, status, call) {
  try {
    await call();
    failures.push(`${name}: no error thrown`);
    return null;
  } catch (e) {
    check(e instanceof Class, `${name}: threw ${e?.constructor?.name}, want ${Class.name}`);
    check(e.status === status, `${name}: status ${e.status}, want ${status}`);
    return {
      class: e?.constructor?.name ?? null,
      status: e.status ?? null,
      type: e.type ?? null,
      code: e.code ?? null,
      param: e.param ?? null,
      message: e.error?.message ?? e.message ?? null,
    };
  }
}

await step('unknown_model', () =>
  expectError('unknown_model', OpenAI.NotFoundError, 404, () =>
    client.chat.completions.create({
      model: 'no-such-model',
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 2,
    })));

await step('bad_temperature', async () => {
  const seen = await expectError('bad_temperature', OpenAI.BadRequestError, 400, () =>
    client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 2,
      temperature: -1,
    }));
  check(seen?.param === 'temperature', `bad_temperature: param ${seen?.param}`);
  return seen;
});

await step('bad_temperature_stream', async () => {
  // A request refused before streaming starts is a plain error, even with stream: true.
  const seen = await expectError('bad_temperature_stream', OpenAI.BadRequestError, 400, () =>
    client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 2,
      temperature: -1,
      stream: true,
    }));
  check(seen?.param === 'temperature', `bad_temperature_stream: param ${seen?.param}`);
  return seen;
});

summary.ok = failures.length === 0;
console.log(JSON.stringify(summary));
process.exit(summary.ok ? 0 : 1);
