// A reply's thinking as a <details> block above its answer: open while the model
// thinks, collapsed once the answer starts, its summary saying how long the thinking
// took. The thinking is plain text (never markup) and stays with the message, shown
// again with the conversation, but never goes back to the server (chat_request.js).
import { describe_thinking } from './reply_stats.js';

export function reasoning_view() {
  const details = document.createElement('details');
  details.className = 'reasoning';
  const summary = document.createElement('summary');
  summary.className = 'reasoning-summary';
  const text = document.createElement('div');
  text.className = 'reasoning-text';
  details.append(summary, text);
  // Once the reader opens or closes it, the page stops doing so. The page's own
  // changes to `open` fire no click, so this tells the two apart.
  summary.addEventListener('click', () => {
    details.dataset.reader = 'true';
  });
  return details;
}

// (Re)fills the block from `reply` (again on every streamed piece); hidden when the
// model did not think.
export function fill_reasoning(details, reply, { streaming = false } = {}) {
  const reasoning = typeof reply.reasoning === 'string' ? reply.reasoning : '';
  details.hidden = !reasoning;
  const thinking = streaming && !Number.isFinite(reply.reasoning_ms);
  details.classList.toggle('thinking', thinking);
  details.querySelector('.reasoning-summary').textContent =
    describe_thinking(reply.reasoning_ms, { streaming });
  details.querySelector('.reasoning-text').textContent = reasoning;
  if (!details.dataset.reader) details.open = thinking;
}
