// Markdown to DOM for the model's replies. The reply is untrusted text, so it passes
// two guards: raw HTML in it is shown as text (marked's html renderer escapes it),
// and what marked produces is sanitized by DOMPurify with a short allow-list before it
// reaches the page. The CSP (no inline script) is the third.
import { Marked } from 'marked';
import DOMPurify from 'dompurify';
import { highlight } from './code_highlight.js';

const kHtmlEscapes = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escape_html(text) {
  return String(text).replace(/[&<>"']/g, (c) => kHtmlEscapes[c]);
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    // Raw HTML from the model is text, never markup.
    html({ text }) {
      return escape_html(text);
    },
    code({ text, lang }) {
      const language = (lang || '').trim().split(/\s+/)[0];
      const { html, label } = highlight(text, language);
      return `<pre><code class="hljs" data-lang="${escape_html(label)}">${html}</code></pre>\n`;
    },
  },
});

// What marked emits for GFM, nothing more: no forms, no media, no frames, no styles.
const kSanitize = {
  ALLOWED_TAGS: [
    'a', 'blockquote', 'br', 'code', 'del', 'em', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr',
    'img', 'li', 'ol', 'p', 'pre', 'span', 'strong', 'table', 'tbody', 'td', 'th', 'thead',
    'tr', 'ul', 'input',
  ],
  ALLOWED_ATTR: ['href', 'title', 'alt', 'src', 'class', 'align', 'start', 'type', 'checked',
    'disabled', 'data-lang'],
  ALLOW_DATA_ATTR: false,
  // Links and images: web and mail addresses, fragments and this server's paths only.
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#|\/(?!\/))/i,
  // Attributes whose values are no URLs, which the regexp above must not judge.
  ADD_URI_SAFE_ATTR: ['align', 'start', 'type', 'checked', 'disabled', 'data-lang'],
  RETURN_DOM_FRAGMENT: true,
};

// Classes only from highlight.js, so a reply cannot dress itself as the page's own UI;
// inputs only as GFM's disabled task-list boxes.
DOMPurify.addHook('uponSanitizeAttribute', (node, data) => {
  if (data.attrName === 'class') {
    data.keepAttr = data.attrValue.split(/\s+/).every((c) => c === '' || c.startsWith('hljs'));
  }
  if (node.nodeName === 'INPUT' && data.attrName === 'type') {
    data.keepAttr = data.attrValue === 'checkbox';
  }
});
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.nodeName === 'INPUT') node.setAttribute('disabled', '');
  if (node.nodeName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

// A DocumentFragment holding the reply's markdown, safe to insert.
export function render_markdown(text) {
  return DOMPurify.sanitize(marked.parse(text, { async: false }), kSanitize);
}
