// Server-sent events from a fetch body: the `data:` payloads, one per event, as the
// bytes arrive. Only what the OpenAI streaming format uses: data lines (several join
// with "\n"), comments and other fields ignored, events end at a blank line.
export class SseParser {
  #buffer = '';
  #data = [];

  // Feeds decoded text; returns the data of every event it completed.
  push(text) {
    this.#buffer += text;
    const events = [];
    let newline;
    while ((newline = this.#buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.#buffer.slice(0, newline);
      const skip = this.#buffer.startsWith('\r\n', newline) ? 2 : 1;
      // A lone \r at the end may be the first half of \r\n: wait for more.
      if (skip === 1 && this.#buffer[newline] === '\r' && newline + 1 === this.#buffer.length) break;
      this.#buffer = this.#buffer.slice(newline + skip);
      if (line === '') {
        if (this.#data.length) events.push(this.#data.join('\n'));
        this.#data = [];
      } else if (line.startsWith('data:')) {
        this.#data.push(line.slice(line[5] === ' ' ? 6 : 5));
      }
    }
    return events;
  }
}

// Yields each event's data from a streaming Response body.
export async function* sse_events(body) {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    yield* parser.push(decoder.decode() + '\n\n');
  } finally {
    reader.releaseLock();
  }
}
