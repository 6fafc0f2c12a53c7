// One message of the conversation as DOM: the user's text, or the model's reply (its
// thinking, its answer as sanitized markdown, its tool calls) with its stats and
// actions underneath.
import { icon, icon_button } from './icons.js';
import { render_markdown } from './markdown.js';
import { fill_reasoning, reasoning_view } from './reasoning_view.js';
import { describe_stats } from './reply_stats.js';
import { fill_tool_calls, tool_calls_view } from './tool_calls_view.js';

// Gives each code block a bar with its language and a copy button. Runs on the
// sanitized fragment, so these buttons are the page's own, never the model's.
function add_code_bars(fragment) {
  for (const pre of fragment.querySelectorAll('pre')) {
    const code = pre.querySelector('code');
    const bar = document.createElement('div');
    bar.className = 'code-bar';
    const label = document.createElement('span');
    label.textContent = code?.dataset.lang || 'text';
    const copy = document.createElement('button');
    copy.type = 'button';
    copy.className = 'code-copy';
    copy.append(icon('copy'), ' Copy');
    copy.addEventListener('click', () => {
      navigator.clipboard?.writeText(code?.textContent ?? '').then(() => {
        copy.replaceChildren(icon('check'), ' Copied');
        setTimeout(() => copy.replaceChildren(icon('copy'), ' Copy'), 1500);
      });
    });
    bar.append(label, copy);
    pre.before(bar);
    const wrapper = document.createElement('div');
    wrapper.className = 'code-block';
    bar.before(wrapper);
    wrapper.append(bar, pre);
  }
  return fragment;
}

// Fills the parts of a reply's view (from message_view) with `reply` (again on every
// streamed piece). A finished reply with thinking or calls but no answer shows no
// empty answer.
export function fill_reply(article, reply, { streaming = false } = {}) {
  fill_reasoning(article.querySelector('.reasoning'), reply, { streaming });
  const body = article.querySelector('.bubble');
  body.replaceChildren(add_code_bars(render_markdown(reply.content)));
  body.hidden = !reply.content && !streaming && Boolean(reply.reasoning || reply.tool_calls?.length);
  fill_tool_calls(article.querySelector('.tool-calls'), reply, { streaming });
}

function stats_line(stats) {
  const line = document.createElement('div');
  line.className = 'stats';
  for (const part of describe_stats(stats)) {
    const span = document.createElement('span');
    span.textContent = part;
    line.append(span);
  }
  return line;
}

// `actions`: { copy, edit, regenerate } callbacks; those left out show no button.
// `streaming`: the reply is still arriving (no footer yet).
export function message_view(message, { actions = {}, streaming = false } = {}) {
  const article = document.createElement('article');
  article.className = `message ${message.role}`;
  const body = document.createElement('div');
  body.className = message.role === 'assistant' ? 'bubble markdown' : 'bubble';
  if (message.role === 'assistant') {
    if (streaming) body.classList.add('streaming');
    article.append(reasoning_view(), body, tool_calls_view());
    fill_reply(article, message, { streaming });
  } else {
    body.textContent = message.content;
    article.append(body);
  }
  if (message.error) {
    const error = document.createElement('div');
    error.className = 'error';
    error.setAttribute('role', 'alert');
    error.textContent = message.error;
    article.append(error);
  }
  if (streaming) return article;

  const footer = document.createElement('footer');
  footer.className = 'message-footer';
  if (message.stats) footer.append(stats_line(message.stats));
  const buttons = document.createElement('div');
  buttons.className = 'actions';
  if (actions.copy) buttons.append(icon_button('copy', 'Copy', actions.copy));
  if (actions.edit) buttons.append(icon_button('edit', 'Edit and resend', actions.edit));
  if (actions.regenerate) {
    buttons.append(icon_button('regenerate', 'Regenerate', actions.regenerate));
  }
  footer.append(buttons);
  article.append(footer);
  return article;
}

// A user message being edited: a text box with Send and Cancel.
export function message_editor(text, { on_send, on_cancel }) {
  const article = document.createElement('article');
  article.className = 'message user editing';
  const box = document.createElement('textarea');
  box.className = 'edit-box';
  box.value = text;
  box.rows = Math.min(12, text.split('\n').length + 1);
  box.setAttribute('aria-label', 'Edit message');
  const send = document.createElement('button');
  send.type = 'button';
  send.className = 'button primary';
  send.textContent = 'Send';
  send.addEventListener('click', () => on_send(box.value));
  const cancel = document.createElement('button');
  cancel.type = 'button';
  cancel.className = 'button';
  cancel.textContent = 'Cancel';
  cancel.addEventListener('click', on_cancel);
  box.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      on_send(box.value);
    } else if (event.key === 'Escape') {
      on_cancel();
    }
  });
  const row = document.createElement('div');
  row.className = 'edit-actions';
  row.append(cancel, send);
  article.append(box, row);
  queueMicrotask(() => box.focus());
  return article;
}
