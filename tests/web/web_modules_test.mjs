// The chat page's DOM-free modules under node's test runner: the SSE parser, the
// reply builder, the conversation store, the settings, the reply stats and the
// formatting of tool-call arguments.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { SseParser } from '../../web/src/sse.js';
import { ConversationStore, title_from } from '../../web/src/store.js';
import { kDefaults, load_settings, normalize_settings, save_settings } from '../../web/src/settings.js';
import { describe_stats, describe_thinking, tokens_per_second } from '../../web/src/reply_stats.js';
import { chat_request, generate_reply } from '../../web/src/chat_request.js';
import { ReplyBuilder } from '../../web/src/reply_builder.js';
import { format_arguments } from '../../web/src/tool_calls_view.js';

// localStorage's interface over a Map.
class MemoryStorage {
  #items = new Map();
  get length() { return this.#items.size; }
  key(i) { return [...this.#items.keys()][i] ?? null; }
  getItem(key) { return this.#items.has(key) ? this.#items.get(key) : null; }
  setItem(key, value) { this.#items.set(key, String(value)); }
  removeItem(key) { this.#items.delete(key); }
}

test('SSE: events split anywhere, joined data lines, CRLF, comments', () => {
  const parser = new SseParser();
  const text = ': comment\r\ndata: {"a":1}\r\n\r\ndata:x\ndata: y\n\nevent: ping\ndata: [DONE]\n\n';
  const events = [];
  for (const c of text) events.push(...parser.push(c));
  assert.deepEqual(events, ['{"a":1}', 'x\ny', '[DONE]']);
});

test('SSE: a lone CR ends a line only once the next character shows it is not CRLF', () => {
  const parser = new SseParser();
  assert.deepEqual(parser.push('data: a\r'), []);
  assert.deepEqual(parser.push('\r'), []);
  assert.deepEqual(parser.push('data: b\r\n'), ['a']);
  assert.deepEqual(parser.push('\r\n'), ['b']);
});

test('store: save, list newest first, get, remove; bad entries skipped', async () => {
  const storage = new MemoryStorage();
  const store = new ConversationStore(storage);
  const first = store.create();
  first.title = 'first';
  first.messages.push({ role: 'user', content: 'hi' });
  store.save(first);
  await new Promise((resolve) => setTimeout(resolve, 5));
  const second = store.create();
  second.title = 'second';
  store.save(second);
  storage.setItem('strata.chat.broken', '{not json');
  storage.setItem('strata.settings', '{}');
  assert.deepEqual(store.list().map((c) => c.title), ['second', 'first']);
  assert.deepEqual(store.get(first.id).messages, [{ role: 'user', content: 'hi' }]);
  store.remove(second.id);
  assert.deepEqual(store.list().map((c) => c.title), ['first']);
  assert.notEqual(first.id, second.id);
});

test('titles: first line, cut near 60 characters at a word', () => {
  assert.equal(title_from('  Hello there\nsecond line'), 'Hello there');
  assert.equal(title_from('\n\n'), 'New chat');
  const long = title_from('word '.repeat(30));
  assert.ok(long.length <= 61 && long.endsWith('word…'), long);
});

test('settings: defaults, ranges, round trip', () => {
  assert.deepEqual(normalize_settings(null), kDefaults);
  const s = normalize_settings({ temperature: '0.3', top_p: 7, max_tokens: '', theme: 'dark',
    api_key: ' k ', system_prompt: 'Be brief.' });
  assert.equal(s.temperature, 0.3);
  assert.equal(s.top_p, kDefaults.top_p);
  assert.equal(s.max_tokens, null);
  assert.equal(s.theme, 'dark');
  assert.equal(s.api_key, 'k');
  const storage = new MemoryStorage();
  save_settings(storage, { ...s, max_tokens: '300.4' });
  assert.equal(load_settings(storage).max_tokens, 300);
  storage.setItem('strata.settings', 'garbage');
  assert.deepEqual(load_settings(storage), kDefaults);
});

test('request: system prompt, history up to the reply, failed replies left out', () => {
  const reply = { role: 'assistant', content: '' };
  const conversation = { messages: [
    { role: 'user', content: 'a' }, { role: 'assistant', content: '' },
    { role: 'user', content: 'b' }, reply, { role: 'user', content: 'later' }] };
  const settings = { ...kDefaults, system_prompt: 'sys', max_tokens: 5 };
  const request = chat_request(conversation, reply, { settings, model: 'm' });
  assert.deepEqual(request.messages.map((m) => m.content), ['sys', 'a', 'b']);
  assert.equal(request.max_tokens, 5);
  assert.equal(request.model, 'm');
  const unlimited = chat_request(conversation, reply, { settings: kDefaults, model: '' });
  assert.equal('max_tokens' in unlimited, false);
  assert.equal('model' in unlimited, false);
  assert.equal(unlimited.messages[0].content, 'a');
});

test('stats: decode rate, cache line, stopped replies counted by chunks', () => {
  const stats = { completion_tokens: 11, prompt_tokens: 40, cached_tokens: 32, chunks: 11,
    ttft_ms: 85, decode_ms: 500, stopped: false, finish_reason: 'length' };
  assert.equal(tokens_per_second(stats), 20);
  assert.deepEqual(describe_stats(stats),
    ['11 tokens', '20.0 tok/s', 'TTFT 85 ms', '32/40 prompt tokens cached', 'max tokens reached']);
  const stopped = { ...stats, completion_tokens: null, prompt_tokens: null, cached_tokens: null,
    chunks: 3, ttft_ms: 1500, stopped: true };
  assert.deepEqual(describe_stats(stopped), ['≈3 tokens', '4.0 tok/s', 'TTFT 1.50 s', 'stopped']);
  assert.equal(tokens_per_second({ ...stats, decode_ms: 2 }), null, 'all in one read: no rate');
});

// A clock the test moves by hand, in ms.
function manual_clock() {
  const clock = { ms: 0 };
  clock.now = () => clock.ms;
  return clock;
}

test('reply builder: thinking, then the answer; each part apart, thinking timed', () => {
  const clock = manual_clock();
  const reply = { role: 'assistant', content: '' };
  const builder = new ReplyBuilder(reply, clock.now);
  assert.equal(builder.add({ role: 'assistant', content: '' }), false, 'a role-only delta adds nothing');
  clock.ms = 100;
  assert.equal(builder.add({ reasoning_content: 'The user greets. ' }), true);
  clock.ms = 900;
  assert.equal(builder.add({ reasoning_content: 'Reply <b>kindly</b>.' }), true);
  assert.equal(reply.content, '');
  assert.equal(reply.reasoning_ms, undefined, 'still thinking');
  clock.ms = 2600;
  assert.equal(builder.add({ content: 'Hello', reasoning_content: null }), true);
  clock.ms = 3000;
  builder.add({ content: ' there.' });
  builder.finish();
  assert.equal(reply.content, 'Hello there.');
  assert.equal(reply.reasoning, 'The user greets. Reply <b>kindly</b>.');
  assert.equal(reply.reasoning_ms, 2500, 'from the first thought to the first word of the answer');
  assert.equal('tool_calls' in reply, false);
});

test('reply builder: thinking cut short by a stop ends at finish', () => {
  const clock = manual_clock();
  const reply = { role: 'assistant', content: '' };
  const builder = new ReplyBuilder(reply, clock.now);
  builder.add({ reasoning_content: 'Hmm' });
  clock.ms = 4200;
  builder.finish();
  assert.equal(reply.reasoning_ms, 4200);
  assert.equal(reply.content, '');
});

test('reply builder: interleaved fragments of two tool calls', () => {
  const reply = { role: 'assistant', content: '' };
  const builder = new ReplyBuilder(reply, () => 0);
  const deltas = [
    { reasoning_content: 'Two lookups.' },
    { content: 'Checking both.' },
    { tool_calls: [{ index: 0, id: 'call_a', type: 'function',
      function: { name: 'get_weather', arguments: '' } }] },
    { tool_calls: [{ index: 0, function: { arguments: '{"city": ' } }] },
    { tool_calls: [{ index: 1, id: 'call_b', type: 'function',
      function: { name: 'get_time', arguments: '' } }] },
    { tool_calls: [{ index: 1, function: { arguments: '{"zone":' } },
      { index: 0, function: { arguments: '"Lisbon"' } }] },
    { tool_calls: [{ index: 0, function: { arguments: '}' } }] },
    { tool_calls: [{ index: 1, function: { arguments: ' "UTC"}' } }] },
  ];
  for (const delta of deltas) assert.equal(builder.add(delta), true, JSON.stringify(delta));
  builder.finish();
  assert.deepEqual(reply.tool_calls, [
    { index: 0, id: 'call_a', type: 'function',
      function: { name: 'get_weather', arguments: '{"city": "Lisbon"}' } },
    { index: 1, id: 'call_b', type: 'function',
      function: { name: 'get_time', arguments: '{"zone": "UTC"}' } },
  ]);
  assert.equal(reply.content, 'Checking both.', 'no call and no thinking in the answer');
  assert.doesNotMatch(reply.content, /[{}<>]|get_weather|Two lookups/);
  assert.equal(reply.reasoning, 'Two lookups.');
});

test('reply builder: calls arriving out of order sort by index; junk is ignored', () => {
  const reply = { role: 'assistant', content: '' };
  const builder = new ReplyBuilder(reply, () => 0);
  builder.add({ tool_calls: [{ index: 1, id: 'b', function: { name: 'second', arguments: '{}' } }] });
  builder.add({ tool_calls: [{ index: 0, id: 'a', function: { name: 'first', arguments: '[]' } }] });
  assert.deepEqual(reply.tool_calls.map((c) => c.function.name), ['first', 'second']);
  for (const junk of [null, 'text', 7, { content: 5 }, { tool_calls: 'x' }, { tool_calls: [null] },
    { reasoning_content: { a: 1 } }, { tool_calls: [{ index: 0, function: { arguments: 3 } }] }]) {
    assert.equal(builder.add(junk), false, JSON.stringify(junk));
  }
  assert.equal(reply.content, '');
  assert.equal('reasoning' in reply, false);
  assert.equal(reply.tool_calls[0].function.arguments, '[]');
});

test('request: earlier thinking and tool calls never go back to the server', () => {
  const reply = { role: 'assistant', content: '' };
  const conversation = { messages: [
    { role: 'user', content: 'a' },
    { role: 'assistant', content: 'answer', reasoning: 'secret thoughts', reasoning_ms: 900,
      tool_calls: [{ index: 0, id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      stats: { finish_reason: 'tool_calls' } },
    { role: 'user', content: 'b' },
    { role: 'assistant', content: '', reasoning: 'only thoughts' },
    { role: 'user', content: 'c' }, reply] };
  const request = chat_request(conversation, reply, { settings: kDefaults, model: '' });
  assert.deepEqual(request.messages, [
    { role: 'user', content: 'a' }, { role: 'assistant', content: 'answer' },
    { role: 'user', content: 'b' }, { role: 'user', content: 'c' }]);
  assert.doesNotMatch(JSON.stringify(request), /thoughts|tool_calls|reasoning/);
});

test('tool-call arguments: pretty once complete, raw while streaming or not JSON', () => {
  assert.equal(format_arguments('{"city":"Lisbon","days":[1,2]}', { complete: true }),
    '{\n  "city": "Lisbon",\n  "days": [\n    1,\n    2\n  ]\n}');
  assert.equal(format_arguments('{"city":"Lis', { complete: false }), '{"city":"Lis');
  assert.equal(format_arguments('{"city":"Lis', { complete: true }), '{"city":"Lis');
  assert.equal(format_arguments('{"a":1}', { complete: false }), '{"a":1}');
  assert.equal(format_arguments(undefined, { complete: true }), '');
});

test('thinking summary: live, timed, unknown', () => {
  assert.equal(describe_thinking(undefined, { streaming: true }), 'Thinking…');
  assert.equal(describe_thinking(undefined), 'Thoughts');
  assert.equal(describe_thinking(400), 'Thought for less than a second');
  assert.equal(describe_thinking(2500), 'Thought for 3 s');
  assert.equal(describe_thinking(61_000), 'Thought for 61 s');
});

test('generate: a streamed reply with thinking, an answer and two calls, through the SSE', async (t) => {
  const chunk = (delta, finish_reason = null) =>
    `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason }] })}\n\n`;
  const body = chunk({ role: 'assistant', content: '' }) +
    chunk({ reasoning_content: 'Think <i>first</i>.' }) + chunk({ content: 'Calling.' }) +
    chunk({ tool_calls: [{ index: 0, id: 'x', type: 'function', function: { name: 'f', arguments: '' } }] }) +
    chunk({ tool_calls: [{ index: 1, id: 'y', type: 'function', function: { name: 'g', arguments: '' } }] }) +
    chunk({ tool_calls: [{ index: 1, function: { arguments: '{"b":2}' } }] }) +
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] }) +
    chunk({}, 'tool_calls') + 'data: [DONE]\n\n';
  let sent = null;
  t.mock.method(globalThis, 'fetch', async (url, init) => {
    sent = JSON.parse(init.body);
    return new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
  });
  const reply = { role: 'assistant', content: '' };
  const conversation = { messages: [{ role: 'user', content: 'go' }, reply] };
  let updates = 0;
  await generate_reply(conversation, reply, { settings: kDefaults, model: '', signal: undefined,
    on_update: () => ++updates });
  assert.equal(sent.stream, true);
  assert.equal(reply.error, undefined);
  assert.equal(reply.content, 'Calling.');
  assert.equal(reply.reasoning, 'Think <i>first</i>.');
  assert.ok(Number.isFinite(reply.reasoning_ms));
  assert.deepEqual(reply.tool_calls.map((c) => [c.id, c.function.name, c.function.arguments]),
    [['x', 'f', '{"a":1}'], ['y', 'g', '{"b":2}']]);
  assert.equal(reply.stats.finish_reason, 'tool_calls');
  assert.equal(updates, 6, 'one update per delta that added something');
  assert.equal(reply.stats.chunks, 6);
});
