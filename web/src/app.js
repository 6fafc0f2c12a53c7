// The chat page: wires the conversation store, the sidebar, the message list, the
// composer and the settings to the daemon's API. One reply streams at a time.
import { ApiError, list_models } from './api.js';
import { generate_reply } from './chat_request.js';
import { fill_reply, message_editor, message_view } from './message_view.js';
import { load_settings, save_settings } from './settings.js';
import { setup_settings_dialog } from './settings_dialog.js';
import { render_sidebar } from './sidebar.js';
import { ConversationStore, title_from } from './store.js';
import { apply_theme, effective_theme } from './theme.js';

const $ = (id) => document.getElementById(id);
const ui = {
  app: $('app'),
  list: $('conversation-list'),
  messages: $('messages'),
  model: $('model'),
  prompt: $('prompt'),
  composer: $('composer'),
  send: $('send'),
  stop: $('stop'),
  notice: $('notice'),
  notice_text: $('notice-text'),
  notice_settings: $('notice-settings'),
};

const store = new ConversationStore(localStorage);
const state = {
  settings: load_settings(localStorage),
  model: '',             // the served model's id, from /v1/models
  current: null,         // the conversation shown (saved once it has a message)
  editing: -1,           // index of the user message being edited
  renaming: null,        // id of the conversation being renamed
  generation: null,      // { controller, conversation, reply, view } while a reply streams
};

// ---- drawing -----------------------------------------------------------------------

function draw_sidebar() {
  render_sidebar(ui.list, store.list(), {
    current_id: state.current?.id,
    renaming: state.renaming,
    on_select: (id) => {
      select_conversation(id);
      ui.app.classList.remove('sidebar-open');
    },
    on_start_rename: (id) => {
      state.renaming = id;
      draw_sidebar();
    },
    on_rename: (id, title) => {
      state.renaming = null;
      const conversation = live_conversation(id);
      if (conversation && conversation.title !== title) {
        conversation.title = title;
        persist(conversation);
      }
      draw_sidebar();
    },
    on_delete: (id) => delete_conversation(id),
  });
}

function near_bottom() {
  const m = ui.messages;
  return m.scrollHeight - m.scrollTop - m.clientHeight < 80;
}

function scroll_to_bottom() {
  ui.messages.scrollTop = ui.messages.scrollHeight;
}

function empty_state() {
  const welcome = document.createElement('div');
  welcome.className = 'welcome';
  const title = document.createElement('h1');
  title.textContent = 'What can I help with?';
  const model = document.createElement('p');
  model.textContent = state.model ? `Chatting with ${state.model}, served locally by Strata.`
    : 'Served locally by Strata.';
  welcome.append(title, model);
  return welcome;
}

function draw_messages() {
  const conversation = state.current;
  const messages = conversation?.messages ?? [];
  const views = [];
  const last = messages.length - 1;
  messages.forEach((message, index) => {
    const streaming = state.generation?.reply === message;
    if (index === state.editing) {
      views.push(message_editor(message.content, {
        on_send: (text) => edit_and_resend(index, text),
        on_cancel: () => {
          state.editing = -1;
          draw_messages();
        },
      }));
      return;
    }
    const idle = !state.generation;
    const actions = { copy: () => navigator.clipboard?.writeText(message.content) };
    if (message.role === 'user' && idle) actions.edit = () => start_edit(index);
    if (message.role === 'assistant' && index === last && idle) actions.regenerate = regenerate;
    const view = message_view(message, { actions, streaming });
    if (streaming) state.generation.view = view;
    views.push(view);
  });
  ui.messages.replaceChildren(...(views.length ? views : [empty_state()]));
  ui.messages.classList.toggle('empty', !views.length);
}

function draw_composer() {
  const busy = state.generation !== null;
  ui.send.hidden = busy;
  ui.stop.hidden = !busy;
  ui.send.disabled = !ui.prompt.value.trim();
}

// Redraws the streaming reply once per frame, however many pieces arrived.
let frame_pending = false;
function draw_streaming_reply() {
  if (frame_pending) return;
  frame_pending = true;
  requestAnimationFrame(() => {
    frame_pending = false;
    const generation = state.generation;
    if (!generation?.view || generation.conversation !== state.current) return;
    const follow = near_bottom();
    fill_reply(generation.view, generation.reply, { streaming: true });
    if (follow) scroll_to_bottom();
  });
}

// A line above the messages ('' hides it), with a Settings button when they can fix it.
function show_notice(text, { settings = false } = {}) {
  ui.notice_text.textContent = text;
  ui.notice.hidden = !text;
  ui.notice_settings.hidden = !settings;
}

// ---- conversations -----------------------------------------------------------------

// The conversation with this id: the object in use when it is shown or streaming
// (so that changes to it are not lost when the stream ends), else the stored one.
function live_conversation(id) {
  if (id === state.current?.id) return state.current;
  if (id === state.generation?.conversation.id) return state.generation.conversation;
  return store.get(id);
}

// Saves a conversation; a full storage is reported, not fatal.
function persist(conversation) {
  try {
    store.save(conversation);
  } catch (error) {
    show_notice(`Could not save the conversation: ${error.message}`);
  }
}

function select_conversation(id) {
  const conversation = live_conversation(id);
  if (!conversation) return;
  state.current = conversation;
  state.editing = -1;
  location.hash = id;
  draw_sidebar();
  draw_messages();
  scroll_to_bottom();
}

function new_conversation() {
  state.current = store.create();
  state.editing = -1;
  history.replaceState(null, '', location.pathname);
  draw_sidebar();
  draw_messages();
  ui.app.classList.remove('sidebar-open');
  ui.prompt.focus();
}

function delete_conversation(id) {
  const conversation = store.get(id);
  if (!confirm(`Delete “${conversation?.title || 'New chat'}”?`)) return;
  if (state.generation?.conversation.id === id) state.generation.controller.abort();
  store.remove(id);
  if (state.current?.id === id) new_conversation();
  else draw_sidebar();
}

// ---- generation --------------------------------------------------------------------

async function generate() {
  const conversation = state.current;
  const reply = { role: 'assistant', content: '' };
  conversation.messages.push(reply);
  persist(conversation);
  state.generation = { controller: new AbortController(), conversation, reply, view: null };
  draw_sidebar();
  draw_messages();
  draw_composer();
  scroll_to_bottom();

  await generate_reply(conversation, reply, {
    settings: state.settings,
    model: state.model,
    signal: state.generation.controller.signal,
    on_update: draw_streaming_reply,
  });

  const reasoning = state.generation.view?.querySelector('.reasoning');
  const reader_opened = Boolean(reasoning?.dataset.reader && reasoning.open);
  state.generation = null;
  if (store.get(conversation.id)) persist(conversation);  // unless deleted meanwhile
  if (conversation === state.current) {
    const follow = near_bottom();
    draw_messages();
    // The finished reply's view replaces the streaming one: thinking the reader
    // opened while it streamed stays open.
    const shown = ui.messages.lastElementChild?.querySelector('.reasoning');
    if (reader_opened && shown) shown.open = true;
    if (follow) scroll_to_bottom();
  }
  draw_sidebar();
  draw_composer();
}

function send() {
  const text = ui.prompt.value;
  if (!text.trim() || state.generation) return;
  ui.prompt.value = '';
  resize_prompt();
  if (!state.current) state.current = store.create();
  const conversation = state.current;
  if (!conversation.title) conversation.title = title_from(text);
  conversation.messages.push({ role: 'user', content: text });
  if (location.hash.slice(1) !== conversation.id) location.hash = conversation.id;
  generate();
}

function regenerate() {
  const messages = state.current.messages;
  if (state.generation || messages.at(-1)?.role !== 'assistant') return;
  messages.pop();
  generate();
}

function start_edit(index) {
  state.editing = index;
  draw_messages();
}

function edit_and_resend(index, text) {
  if (!text.trim() || state.generation) return;
  state.editing = -1;
  const messages = state.current.messages;
  messages.splice(index, messages.length - index, { role: 'user', content: text });
  generate();
}

function stop() {
  state.generation?.controller.abort();
}

// ---- the model and settings ----------------------------------------------------------

async function load_model() {
  try {
    const models = await list_models({ api_key: state.settings.api_key });
    state.model = models[0] ?? '';
    ui.model.textContent = state.model || 'no model';
    ui.model.title = state.model;
    show_notice('');
  } catch (error) {
    state.model = '';
    ui.model.textContent = 'offline';
    if (error instanceof ApiError && error.status === 401) {
      show_notice('This server needs an API key: enter it in Settings.', { settings: true });
    } else {
      show_notice(`Cannot reach the server: ${error.message}`);
    }
  }
  if (!state.current?.messages.length) draw_messages();
}

const settings_dialog = setup_settings_dialog($('settings'), {
  get_settings: () => state.settings,
  on_save: (values) => {
    const key_changed = values.api_key.trim() !== state.settings.api_key;
    save_settings(localStorage, { ...state.settings, ...values });
    state.settings = load_settings(localStorage);
    if (key_changed) load_model();
  },
});

function toggle_theme() {
  const next = effective_theme(state.settings.theme) === 'dark' ? 'light' : 'dark';
  state.settings = { ...state.settings, theme: next };
  save_settings(localStorage, state.settings);
  apply_theme(next);
}

// ---- the composer --------------------------------------------------------------------

function resize_prompt() {
  ui.prompt.style.height = 'auto';
  ui.prompt.style.height = `${Math.min(ui.prompt.scrollHeight, 240)}px`;
  draw_composer();
}

ui.prompt.addEventListener('input', resize_prompt);
ui.prompt.addEventListener('keydown', (event) => {
  // Enter sends; Shift+Enter is a new line; Enter that ends an IME composition is neither.
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send();
  }
});
ui.composer.addEventListener('submit', (event) => {
  event.preventDefault();
  send();
});
ui.stop.addEventListener('click', stop);
$('new-chat').addEventListener('click', new_conversation);
$('open-settings').addEventListener('click', () => settings_dialog.open());
$('toggle-theme').addEventListener('click', toggle_theme);
$('toggle-sidebar').addEventListener('click', () => ui.app.classList.toggle('sidebar-open'));
$('scrim').addEventListener('click', () => ui.app.classList.remove('sidebar-open'));
ui.notice_settings.addEventListener('click', () => settings_dialog.open());
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && state.generation) stop();
});

// ---- start ---------------------------------------------------------------------------

apply_theme(state.settings.theme);
const opened = location.hash.slice(1);
state.current = (opened && store.get(opened)) || store.create();
draw_sidebar();
draw_messages();
draw_composer();
scroll_to_bottom();
load_model();
ui.prompt.focus();
