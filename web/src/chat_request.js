// Streams one reply into a conversation: builds the request from the messages before
// the reply and the settings, and fills the reply's parts, stats and error.
import { stream_chat } from './api.js';
import { ReplyBuilder } from './reply_builder.js';
import { ReplyClock } from './reply_stats.js';

// What of an earlier reply goes back to the server: its answer alone.
//  - The thinking is dropped: reasoning models' chat templates (Qwen3, DeepSeek-R1)
//    leave earlier turns' thinking out of the prompt anyway, DeepSeek's own API
//    refuses it in requests, and sent back it would only cost prompt tokens.
//  - The tool calls are dropped: the page offers no tools, so it has no results to
//    send after them, and a call without its result is an invalid conversation.
function sent_message(message) {
  return { role: message.role, content: message.content };
}

// The OpenAI request for everything before `reply` in the conversation.
export function chat_request(conversation, reply, { settings, model }) {
  const messages = [];
  if (settings.system_prompt.trim()) {
    messages.push({ role: 'system', content: settings.system_prompt });
  }
  for (const message of conversation.messages) {
    if (message === reply) break;
    // A failed reply, or one with only thinking or calls: no answer to send.
    if (message.role === 'assistant' && !message.content) continue;
    messages.push(sent_message(message));
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
// `on_update()` is called after each piece lands in the reply (its answer, thinking
// or tool calls). Never throws: errors end up in reply.error, a stop in
// reply.stats.stopped.
export async function generate_reply(conversation, reply, { settings, model, signal, on_update }) {
  const clock = new ReplyClock();
  const builder = new ReplyBuilder(reply);
  try {
    const { usage, finish_reason } = await stream_chat(
      chat_request(conversation, reply, { settings, model }),
      {
        api_key: settings.api_key,
        signal,
        on_delta: (delta) => {
          if (!builder.add(delta)) return;
          clock.on_delta();
          on_update();
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
  } finally {
    builder.finish();
  }
}
