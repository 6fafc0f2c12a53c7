// Conversations, kept in the browser's localStorage: one key per conversation
// ("strata.chat.<id>"), so saving one never rewrites the others. A conversation:
//   { id, title, created, updated,            // times in ms since the epoch
//     messages: [{ role: 'user' | 'assistant', content, stats?,
//                  reasoning?, reasoning_ms?, tool_calls? }] }
// where an assistant message's stats are what the reply's footer shows (reply_stats.js)
// and its thinking and tool calls are as reply_builder.js builds them.
const kPrefix = 'strata.chat.';

function new_id() {
  return `${Date.now().toString(36)}-${crypto.getRandomValues(new Uint32Array(1))[0].toString(36)}`;
}

export class ConversationStore {
  // `storage`: a Web Storage object (localStorage, or a stand-in in tests).
  constructor(storage) {
    this.storage = storage;
  }

  // Every conversation, the most recently updated first. Unreadable entries are skipped.
  list() {
    const conversations = [];
    for (let i = 0; i < this.storage.length; ++i) {
      const key = this.storage.key(i);
      if (!key?.startsWith(kPrefix)) continue;
      const conversation = this.get(key.slice(kPrefix.length));
      if (conversation) conversations.push(conversation);
    }
    return conversations.sort((a, b) => b.updated - a.updated);
  }

  get(id) {
    try {
      const conversation = JSON.parse(this.storage.getItem(kPrefix + id));
      return Array.isArray(conversation?.messages) ? conversation : null;
    } catch {
      return null;
    }
  }

  create() {
    const now = Date.now();
    return { id: new_id(), title: '', created: now, updated: now, messages: [] };
  }

  // Stores the conversation; throws the browser's QuotaExceededError when storage is full.
  save(conversation) {
    conversation.updated = Date.now();
    this.storage.setItem(kPrefix + conversation.id, JSON.stringify(conversation));
  }

  remove(id) {
    this.storage.removeItem(kPrefix + id);
  }
}

// A title from the first user message: its first line, cut at a word near 60 characters.
export function title_from(text) {
  const line = text.trim().split('\n')[0].trim();
  if (line.length <= 60) return line || 'New chat';
  const cut = line.slice(0, 60);
  const space = cut.lastIndexOf(' ');
  return `${(space > 30 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
