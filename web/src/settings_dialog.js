// The settings dialog: system prompt, sampling, API key. Reads and writes the form
// fields named after the settings (see index.html).
const kFields = ['system_prompt', 'temperature', 'top_p', 'max_tokens', 'api_key'];

export function setup_settings_dialog(dialog, { get_settings, on_save }) {
  const field = (name) => dialog.querySelector(`[name="${name}"]`);
  const close = () => dialog.close();

  dialog.querySelector('[data-action="cancel"]').addEventListener('click', close);
  // Save, or Enter in a field: handled here, never submitted anywhere.
  dialog.querySelector('form').addEventListener('submit', (event) => {
    event.preventDefault();
    const values = {};
    for (const name of kFields) values[name] = field(name).value;
    on_save(values);
    close();
  });
  // A click on the backdrop (outside the panel) closes without saving.
  dialog.addEventListener('click', (event) => {
    if (event.target === dialog) close();
  });

  return {
    open() {
      const settings = get_settings();
      for (const name of kFields) field(name).value = settings[name] ?? '';
      dialog.showModal();
      field('system_prompt').focus();
    },
  };
}
