// The conversation list: select one, rename it in place, delete it.
import { icon_button } from './icons.js';

function rename_field(conversation, { on_rename, on_done }) {
  const input = document.createElement('input');
  input.className = 'rename-field';
  input.value = conversation.title;
  input.setAttribute('aria-label', 'Conversation name');
  let finished = false;
  const finish = (save) => {
    if (finished) return;
    finished = true;
    const title = input.value.trim();
    if (save && title && title !== conversation.title) on_rename(conversation.id, title);
    else on_done();
  };
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') finish(true);
    if (event.key === 'Escape') finish(false);
  });
  input.addEventListener('blur', () => finish(true));
  queueMicrotask(() => {
    input.focus();
    input.select();
  });
  return input;
}

// Draws `conversations` into `list`. `handlers`: { on_select(id), on_start_rename(id),
// on_rename(id, title) (also when the edit is left: same title), on_delete(id) };
// `renaming` is the id whose title is being edited, if any.
export function render_sidebar(list, conversations, { current_id, renaming, ...handlers }) {
  list.replaceChildren();
  if (!conversations.length) {
    const empty = document.createElement('p');
    empty.className = 'sidebar-empty';
    empty.textContent = 'No conversations yet.';
    list.append(empty);
    return;
  }
  for (const conversation of conversations) {
    const item = document.createElement('div');
    item.className = 'conversation';
    item.dataset.id = conversation.id;
    if (conversation.id === current_id) item.classList.add('current');
    if (conversation.id === renaming) {
      item.append(rename_field(conversation, {
        on_rename: handlers.on_rename,
        on_done: () => handlers.on_rename(conversation.id, conversation.title),
      }));
    } else {
      const open = document.createElement('button');
      open.type = 'button';
      open.className = 'conversation-title';
      open.textContent = conversation.title || 'New chat';
      open.title = conversation.title;
      open.addEventListener('click', () => handlers.on_select(conversation.id));
      const actions = document.createElement('div');
      actions.className = 'conversation-actions';
      actions.append(
        icon_button('edit', 'Rename', () => handlers.on_start_rename(conversation.id)),
        icon_button('trash', 'Delete', () => handlers.on_delete(conversation.id)));
      item.append(open, actions);
    }
    list.append(item);
  }
}
