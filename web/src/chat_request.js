// Streams one reply into a conversation: builds the request from the messages before
// the reply and the settings, and fills the reply's content, stats and error.
import { stream_chat } from './api.js';
import { ReplyClock } from './reply_stats.js';

// The OpenAI request for everything before `reply` in the conversation.
export function chat_request(conversation, reply, { settings, model }) {
  const messages = [];
  if (settings.system_prompt.trim()) {
    messages.push({ role: 'system', content: settings.system_prompt });
  }
  for (const message of conversation.messages) {
    if (message === reply) break;
    if (message.role === 'assistant' && !message.content) continue;  // a failed reply
    messages.push({ role: message.role, content: message.content });
  }
  const request = {
    messages,
    temperature: settings.temperature,
    top_p: settings.top_p,
  };
  if (settings.max_tokens) request.max_tokens = settings.max_tokens;
  if (model) request.model = model;
  return request;
}

// Generates `reply` (an assistant message, already in the conversation).
// `on_text()` is called after each piece lands in reply.content. Never throws:
// errors end up in reply.error, a stop in reply.stats.stopped.
export async function generate_reply(conversation, reply, { settings, model, signal, on_text }) {
  const clock = new ReplyClock();
  try {
    const { usage, finish_reason } = await stream_chat(
      chat_request(conversation, reply, { settings, model }),
      {
        api_key: settings.api_key,
        signal,
        on_text: (text) => {
          reply.content += text;
          clock.on_text();
          on_text();
        },
      });
    reply.stats = clock.finish({ usage, finish_reason });
  } catch (error) {
    if (error.name === 'AbortError') {
      reply.stats = clock.finish({ stopped: true });
    } else {
      reply.stats = clock.chunks ? clock.finish() : undefined;
      reply.error = error.status === 401
        ? 'The server needs an API key: enter it in Settings.'
        : `Error: ${error.message}`;
    }
  }
}
