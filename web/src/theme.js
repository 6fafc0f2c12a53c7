// Light and dark themes. 'system' follows the browser (prefers-color-scheme); the
// stylesheet reads <html data-theme>, and colors come from CSS light-dark().
const dark_query = matchMedia('(prefers-color-scheme: dark)');

export function apply_theme(theme) {
  if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}

// The theme shown now, whichever way it was chosen.
export function effective_theme(theme) {
  if (theme === 'light' || theme === 'dark') return theme;
  return dark_query.matches ? 'dark' : 'light';
}
