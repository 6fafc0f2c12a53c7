// The user's settings, kept in localStorage: the system prompt, sampling, the API key
// (only needed when the server was started with one) and the theme.
const kKey = 'strata.settings';

export const kDefaults = Object.freeze({
  system_prompt: '',
  temperature: 0.8,
  top_p: 0.95,
  max_tokens: null,  // null: as many as the context has room for
  api_key: '',
  theme: 'system',  // 'system' | 'light' | 'dark'
});

// Numbers outside these ranges (or left empty) fall back to the defaults.
const kRanges = {
  temperature: [0, 2],
  top_p: [0, 1],
  max_tokens: [1, 1 << 20],
};

export function normalize_settings(raw) {
  const out = { ...kDefaults };
  if (typeof raw?.system_prompt === 'string') out.system_prompt = raw.system_prompt;
  if (typeof raw?.api_key === 'string') out.api_key = raw.api_key.trim();
  if (['system', 'light', 'dark'].includes(raw?.theme)) out.theme = raw.theme;
  for (const [name, [low, high]] of Object.entries(kRanges)) {
    const value = Number(raw?.[name]);
    if (raw?.[name] !== '' && raw?.[name] != null && Number.isFinite(value) && value >= low &&
        value <= high) {
      out[name] = name === 'max_tokens' ? Math.round(value) : value;
    }
  }
  return out;
}

export function load_settings(storage) {
  try {
    return normalize_settings(JSON.parse(storage.getItem(kKey)));
  } catch {
    return { ...kDefaults };
  }
}

export function save_settings(storage, settings) {
  storage.setItem(kKey, JSON.stringify(normalize_settings(settings)));
}
