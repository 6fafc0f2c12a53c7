// The chat page's DOM-free modules under node's test runner: the SSE parser, the
// conversation store, the settings and the reply stats.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { SseParser } from '../../web/src/sse.js';
import { ConversationStore, title_from } from '../../web/src/store.js';
import { kDefaults, load_settings, normalize_settings, save_settings } from '../../web/src/settings.js';
import { describe_stats, tokens_per_second } from '../../web/src/reply_stats.js';
import { chat_request } from '../../web/src/chat_request.js';

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
