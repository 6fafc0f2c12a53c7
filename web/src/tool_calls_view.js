// A reply's tool calls: a block per call with the function's name and arguments, and
// the reason the reply ended. The page offers no tools, so calls show only in
// conversations that have them; everything the model wrote goes in as text.

// The arguments as shown: pretty-printed JSON once the call is `complete`, else (while
// they stream, or when they are not JSON) the text as the model wrote it.
export function format_arguments(text, { complete }) {
  if (typeof text !== 'string') return '';
  if (complete) {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // Not JSON (cut short, or the model's mistake): shown as written.
    }
  }
  return text;
}

function tool_call_block(call, { complete }) {
  const block = document.createElement('div');
  block.className = 'tool-call';
  const head = document.createElement('div');
  head.className = 'tool-call-head';
  const label = document.createElement('span');
  label.className = 'tool-call-label';
  label.textContent = 'Tool call';
  const name = document.createElement('code');
  name.className = 'tool-call-name';
  name.textContent = call.function?.name || '(unnamed)';
  head.append(label, name);
  if (call.id) {
    const id = document.createElement('span');
    id.className = 'tool-call-id';
    id.textContent = call.id;
    head.append(id);
  }
  const args = document.createElement('pre');
  args.className = 'tool-call-arguments';
  args.textContent = format_arguments(call.function?.arguments, { complete });
  block.append(head, args);
  return block;
}

export function tool_calls_view() {
  const section = document.createElement('section');
  section.className = 'tool-calls';
  section.setAttribute('aria-label', 'Tool calls');
  return section;
}

// (Re)fills the section from `reply` (again on every streamed piece); hidden when the
// model called nothing.
export function fill_tool_calls(section, reply, { streaming = false } = {}) {
  const calls = Array.isArray(reply.tool_calls) ? reply.tool_calls : [];
  section.hidden = !calls.length;
  const blocks = calls.map((call) => tool_call_block(call, { complete: !streaming }));
  const finish_reason = reply.stats?.finish_reason;
  if (finish_reason) {
    const finish = document.createElement('div');
    finish.className = 'tool-calls-finish';
    finish.textContent = `Finish reason: ${finish_reason}`;
    blocks.push(finish);
  }
  section.replaceChildren(...blocks);
}
