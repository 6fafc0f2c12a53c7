// The numbers under a reply: tokens, decode speed, time to first token and how many
// prompt tokens the server found in its KV cache.
//
// A reply's stats, as stored with the message:
//   { completion_tokens, prompt_tokens, cached_tokens,   // from the server's usage; null if none
//     chunks,                                           // deltas received: answer,
//                                                       // thinking or tool calls
//     ttft_ms,                                          // request sent → first delta
//     decode_ms,                                        // first delta → last delta
//     stopped, finish_reason }

// Measures one streamed reply; `finish()` gives its stats.
export class ReplyClock {
  constructor() {
    this.sent = performance.now();
    this.first = null;
    this.last = null;
    this.chunks = 0;
  }

  on_delta() {
    this.last = performance.now();
    if (this.first === null) this.first = this.last;
    ++this.chunks;
  }

  finish({ usage = null, finish_reason = null, stopped = false } = {}) {
    return {
      completion_tokens: usage?.completion_tokens ?? null,
      prompt_tokens: usage?.prompt_tokens ?? null,
      cached_tokens: usage?.prompt_tokens_details?.cached_tokens ?? null,
      chunks: this.chunks,
      ttft_ms: this.first === null ? null : this.first - this.sent,
      decode_ms: this.first === null ? null : this.last - this.first,
      stopped,
      finish_reason,
    };
  }
}

// Under this, a reply arrived in one piece (one network read): no rate to measure.
const kMinDecodeMs = 10;

// Tokens per second while decoding: the tokens after the first, over the time after it.
export function tokens_per_second(stats) {
  const tokens = stats.completion_tokens ?? stats.chunks;
  if (!(stats.decode_ms >= kMinDecodeMs) || tokens < 2) return null;
  return (tokens - 1) / (stats.decode_ms / 1000);
}

function format_ms(ms) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

// The footer's parts, e.g. ["128 tokens", "45.2 tok/s", "TTFT 85 ms", "32/40 prompt cached"].
// Without usage (a stopped reply) the token count is the chunks seen, marked "≈".
export function describe_stats(stats) {
  const parts = [];
  if (stats.completion_tokens !== null) {
    parts.push(`${stats.completion_tokens} tokens`);
  } else if (stats.chunks) {
    parts.push(`≈${stats.chunks} tokens`);
  }
  const rate = tokens_per_second(stats);
  if (rate !== null) parts.push(`${rate.toFixed(1)} tok/s`);
  if (stats.ttft_ms !== null) parts.push(`TTFT ${format_ms(stats.ttft_ms)}`);
  if (stats.cached_tokens !== null && stats.prompt_tokens !== null) {
    parts.push(`${stats.cached_tokens}/${stats.prompt_tokens} prompt tokens cached`);
  }
  if (stats.stopped) parts.push('stopped');
  else if (stats.finish_reason === 'length') parts.push('max tokens reached');
  return parts;
}

// The summary line of a reply's thinking: how long it took, or that it goes on.
// `reasoning_ms`: undefined while the model is still thinking (`streaming`), or when
// the time is unknown.
export function describe_thinking(reasoning_ms, { streaming = false } = {}) {
  if (!Number.isFinite(reasoning_ms)) return streaming ? 'Thinking…' : 'Thoughts';
  if (reasoning_ms < 1000) return 'Thought for less than a second';
  const seconds = Math.round(reasoning_ms / 1000);
  return `Thought for ${seconds} s`;
}
