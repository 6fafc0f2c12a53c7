// The daemon's OpenAI-compatible API, as the page uses it: the model list and one
// streamed chat completion. Same origin only (the CSP allows nothing else); the API
// key, when the server wants one, comes from the settings.
import { sse_events } from './sse.js';

export class ApiError extends Error {
  constructor(message, { status = 0, code = '' } = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

function headers_for(api_key) {
  const headers = { 'Content-Type': 'application/json' };
  if (api_key) headers.Authorization = `Bearer ${api_key}`;
  return headers;
}

// An ApiError from an OpenAI error body ({"error": {"message", "code"}}) or the status.
async function error_from(response) {
  let message = `${response.status} ${response.statusText}`;
  let code = '';
  try {
    const body = await response.json();
    message = body?.error?.message || message;
    code = body?.error?.code || '';
  } catch {
    // Not JSON: the status line says enough.
  }
  return new ApiError(message, { status: response.status, code });
}

// The ids of the served models, first the default.
export async function list_models({ api_key }) {
  const response = await fetch('/v1/models', { headers: headers_for(api_key) });
  if (!response.ok) throw await error_from(response);
  const body = await response.json();
  return (body.data || []).map((model) => model.id);
}

// Streams one chat completion. `on_delta(delta)` gets each choice's delta as it comes
// (pieces of content, reasoning_content and tool_calls; reply_builder.js merges them);
// resolves to { finish_reason, usage } (usage from stream_options.include_usage, null
// when the server sent none). Aborting `signal` closes the connection, which
// makes the server cancel the generation; the promise then rejects with an AbortError.
export async function stream_chat(request, { api_key, signal, on_delta }) {
  const response = await fetch('/v1/chat/completions', {
    method: 'POST',
    headers: headers_for(api_key),
    body: JSON.stringify({ ...request, stream: true, stream_options: { include_usage: true } }),
    signal,
  });
  if (!response.ok) throw await error_from(response);
  let finish_reason = null;
  let usage = null;
  for await (const data of sse_events(response.body)) {
    if (data === '[DONE]') break;
    const chunk = JSON.parse(data);
    if (chunk.error) throw new ApiError(chunk.error.message, { code: chunk.error.code || '' });
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices || []) {
      if (choice.delta) on_delta(choice.delta);
      if (choice.finish_reason) finish_reason = choice.finish_reason;
    }
  }
  return { finish_reason, usage };
}
