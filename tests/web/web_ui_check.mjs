// Drives the chat page in Debian's Chromium, through playwright-core (never a
// downloaded browser), against a running `strata serve`. One scenario per run:
//
//   node web_ui_check.mjs BASE_URL SCENARIO [SCREENSHOT_DIR]
//
// Prints "ok: CHECK" for each check passed; at the first failure prints "FAIL: ..."
// and exits 1. web_ui_browser_test.cpp starts the servers and runs the scenarios.
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';

const require = createRequire(new URL('../../tools/node/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const [base_url, scenario, screenshot_dir] = process.argv.slice(2);
const kChromium = '/usr/bin/chromium';
const kTimeoutMs = 60_000;

function check(condition, what, detail = '') {
  if (!condition) throw new Error(`${what}${detail ? ` (${detail})` : ''}`);
  console.log(`ok: ${what}`);
}

// ---- the server ----------------------------------------------------------------------

async function model_id() {
  const body = await (await fetch(`${base_url}/v1/models`)).json();
  return body.data[0].id;
}

// One series of /metrics (without labels), as a number.
async function metric(name) {
  const text = await (await fetch(`${base_url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no ${name} in /metrics`);
  return Number(line.split(' ')[1]);
}

async function poll(what, probe, timeout_ms = 10_000) {
  const deadline = Date.now() + timeout_ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// ---- the page ------------------------------------------------------------------------

// A fresh browser profile on the page. Every request the page makes is recorded, and
// page errors fail the run.
async function open_page(browser, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  const page = await context.newPage();
  page.setDefaultTimeout(kTimeoutMs);
  page.requests = [];
  page.errors = [];
  page.on('request', (request) => page.requests.push(request.url()));
  page.on('pageerror', (error) => page.errors.push(error.message));
  const response = await page.goto(base_url);
  check(response.status() === 200, 'GET / answers 200', response.status());
  await page.waitForFunction(() => document.getElementById('model').textContent !== '…');
  return page;
}

// Makes the real server's replies reproducible and as long as asked: the page's
// requests go on to the server with a seed and ignore_eos added.
async function pin_generation(page) {
  page.sent = [];
  await page.route('**/v1/chat/completions', async (route) => {
    const body = JSON.parse(route.request().postData());
    page.sent.push(body);
    await route.continue({ postData: JSON.stringify({ ...body, seed: 11, ignore_eos: true }) });
  });
}

// Answers the page's chat requests with `reply` as a stream, without the server.
async function fulfill_replies(page, reply) {
  await page.route('**/v1/chat/completions', async (route) => {
    const pieces = reply.match(/[\s\S]{1,12}/g);
    const chunk = (delta, finish = null) => `data: ${JSON.stringify({
      object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const usage = { prompt_tokens: 48, completion_tokens: pieces.length, total_tokens: 48 + pieces.length,
      prompt_tokens_details: { cached_tokens: 32 } };
    const body = chunk({ role: 'assistant', content: '' }) +
      pieces.map((piece) => chunk({ content: piece })).join('') + chunk({}, 'stop') +
      `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [], usage })}\n\ndata: [DONE]\n\n`;
    await route.fulfill({ status: 200, contentType: 'text/event-stream', body });
  });
}

// A reply of a reasoning model that calls tools, as the server streams it: thinking
// (with markup in it), the answer, then two calls whose argument pieces interleave.
const kToolCallReply = {
  reasoning: ['The user wants ', 'the weather <b>and</b> ', 'the time.\nTwo calls.'],
  answer: ['Let me look ', 'both up.'],
  calls: [
    { id: 'call_weather', name: 'get_weather', arguments: ['{"city":', '"Lisbon",', '"unit":"celsius"}'] },
    { id: 'call_time', name: 'get_time', arguments: ['{"zone":', '"Europe/Lisbon"}'] },
  ],
};

function tool_call_stream(reply) {
  const chunk = (delta, finish = null) => `data: ${JSON.stringify({
    object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const deltas = [{ role: 'assistant', content: '' },
    ...reply.reasoning.map((piece) => ({ reasoning_content: piece })),
    ...reply.answer.map((piece) => ({ content: piece }))];
  reply.calls.forEach((call, index) => deltas.push({ tool_calls: [{ index, id: call.id,
    type: 'function', function: { name: call.name, arguments: '' } }] }));
  const longest = Math.max(...reply.calls.map((call) => call.arguments.length));
  for (let i = 0; i < longest; ++i) {
    reply.calls.forEach((call, index) => {
      if (i < call.arguments.length) {
        deltas.push({ tool_calls: [{ index, function: { arguments: call.arguments[i] } }] });
      }
    });
  }
  const usage = { prompt_tokens: 30, completion_tokens: deltas.length, total_tokens: 30 + deltas.length };
  return deltas.map((delta) => chunk(delta)).join('') + chunk({}, 'tool_calls') +
    `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [], usage })}\n\ndata: [DONE]\n\n`;
}

// Answers the page's next chat request with a stream the test feeds by hand, to see
// the reply while it streams (page.route() answers a request whole). In the page:
// feed(delta, finish_reason) sends one chunk, feed_end() ends the stream.
async function hand_fed_stream(page) {
  await page.evaluate(() => {
    const real_fetch = window.fetch;
    window.fetch = (url, init) => {
      if (!String(url).endsWith('/v1/chat/completions')) return real_fetch(url, init);
      const encoder = new TextEncoder();
      const body = new ReadableStream({
        start(controller) {
          const send = (text) => controller.enqueue(encoder.encode(text));
          window.feed = (delta, finish_reason = null) => send(`data: ${JSON.stringify({
            object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason }] })}\n\n`);
          window.feed_end = () => {
            send('data: [DONE]\n\n');
            controller.close();
          };
        },
      });
      return Promise.resolve(new Response(body, { status: 200,
        headers: { 'Content-Type': 'text/event-stream' } }));
    };
  });
}

async function send(page, text) {
  await page.locator('#prompt').fill(text);
  await page.locator('#prompt').press('Enter');
}

async function wait_idle(page) {
  await page.locator('#send').waitFor({ state: 'visible' });
  await page.locator('#stop').waitFor({ state: 'hidden' });
}

const last_reply = (page) => page.locator('.message.assistant').last();

async function set_settings(page, values) {
  await page.locator('#open-settings').click();
  for (const [name, value] of Object.entries(values)) {
    await page.locator(`#settings [name="${name}"]`).fill(String(value));
  }
  await page.locator('#settings [data-action="save"]').click();
  await page.locator('#settings').waitFor({ state: 'hidden' });
}

// ---- scenarios ---------------------------------------------------------------------

const scenarios = {
  // Send a message and watch the reply stream in; its stats; Shift+Enter; the request
  // carries the settings; a second turn finds the first in the cache; regenerate;
  // edit and resend.
  async chat(browser) {
    const page = await open_page(browser);
    check(await page.locator('#model').textContent() === await model_id(),
      'the header names the model from /v1/models');
    await pin_generation(page);
    await set_settings(page, { system_prompt: 'You are terse.', temperature: 0.5, top_p: 0.9,
      max_tokens: 160 });

    const prompt = page.locator('#prompt');
    await prompt.pressSequentially('Hello');
    await prompt.press('Shift+Enter');
    await prompt.pressSequentially('Strata');
    check(await prompt.inputValue() === 'Hello\nStrata', 'Shift+Enter adds a line');
    check(await page.locator('.message').count() === 0, 'Shift+Enter does not send');

    // Record the reply's length at every change while it streams.
    await page.evaluate(() => {
      window.seen_lengths = [];
      new MutationObserver(() => {
        const body = document.querySelector('.message.assistant .bubble.streaming');
        if (body) window.seen_lengths.push(body.textContent.length);
      }).observe(document.getElementById('messages'), { childList: true, subtree: true });
    });
    await prompt.press('Enter');
    await page.locator('#stop').waitFor({ state: 'visible' });
    check(true, 'the stop button shows while the reply streams');
    await wait_idle(page);
    const lengths = await page.evaluate(() => window.seen_lengths);
    const partial = new Set(lengths.filter((n) => n > 0));
    check(partial.size >= 2, 'the reply rendered piece by piece as it streamed',
      `lengths seen: ${lengths.slice(0, 20)}`);

    const sent = page.sent[0];
    check(sent.stream === true && sent.stream_options?.include_usage === true,
      'the page asks for a stream with usage');
    check(sent.messages[0].role === 'system' && sent.messages[0].content === 'You are terse.',
      'the system prompt is sent');
    check(sent.temperature === 0.5 && sent.top_p === 0.9 && sent.max_tokens === 160,
      'temperature, top_p and max_tokens are sent', JSON.stringify(sent));
    check(sent.messages.at(-1).content === 'Hello\nStrata', 'the message is sent as typed');

    const stats = await last_reply(page).locator('.stats').textContent();
    check(/160 tokens/.test(stats), 'the footer counts the reply\'s tokens', stats);
    check(/[\d.]+ tok\/s/.test(stats) && /TTFT \d/.test(stats), 'tok/s and time to first token',
      stats);
    check(/\d+\/\d+ prompt tokens cached/.test(stats), 'cached prompt tokens', stats);
    check((await last_reply(page).locator('.bubble').textContent()).length > 0, 'the reply has text');

    await send(page, 'And again');
    await wait_idle(page);
    const second = await last_reply(page).locator('.stats').textContent();
    const [, cached] = second.match(/(\d+)\/\d+ prompt tokens cached/) ?? [];
    check(Number(cached) > 0, 'the second turn reuses the first from the KV cache', second);

    const first_reply = await last_reply(page).locator('.bubble').textContent();
    await last_reply(page).getByRole('button', { name: 'Regenerate' }).click();
    await wait_idle(page);
    check(await page.locator('.message').count() === 4, 'regenerate replaces the last reply');
    check(page.sent.length === 3 && page.sent[2].messages.at(-1).content === 'And again',
      'regenerate sends the same conversation again');
    check(first_reply.length > 0, 'regenerated reply');

    await page.locator('.message.user').first().getByRole('button', { name: 'Edit and resend' })
      .click();
    await page.locator('.edit-box').fill('Edited question');
    await page.locator('.edit-box').press('Enter');
    await wait_idle(page);
    check(await page.locator('.message').count() === 2, 'edit and resend drops the later turns');
    check(await page.locator('.message.user .bubble').textContent() === 'Edited question',
      'the edited message is shown');
    check(page.sent.at(-1).messages.at(-1).content === 'Edited question' &&
      page.sent.at(-1).messages.length === 2, 'the edited message is sent');
    check(page.errors.length === 0, 'no page errors', page.errors.join('; '));
  },

  // A reply with thinking and two tool calls, from a scripted stream (the test model
  // can do neither): the thinking collapses once the answer is there and opens on a
  // click; each call shows its name and pretty-printed arguments, with the finish
  // reason; the answer holds no thinking, markup or JSON; a later turn sends the
  // answer alone; a reload shows it all again.
  async tool_calls(browser) {
    const page = await open_page(browser);
    page.sent = [];
    await page.route('**/v1/chat/completions', async (route) => {
      page.sent.push(JSON.parse(route.request().postData()));
      await route.fulfill({ status: 200, contentType: 'text/event-stream',
        body: tool_call_stream(kToolCallReply) });
    });
    await send(page, 'Weather and time in Lisbon?');
    await wait_idle(page);

    const check_reply = async (when) => {
      const reply = last_reply(page);
      const reasoning = reply.locator('details.reasoning');
      check(await reasoning.isVisible(), `${when}: the thinking shows`);
      check(await reasoning.evaluate((details) => !details.open) &&
        !await reasoning.locator('.reasoning-text').isVisible(),
      `${when}: the thinking is collapsed once the answer is there`);
      const summary = await reasoning.locator('summary').textContent();
      check(/^Thought for /.test(summary), `${when}: its summary says how long`, summary);
      await reasoning.locator('summary').click();
      const thinking = reasoning.locator('.reasoning-text');
      check(await thinking.isVisible() &&
        await thinking.textContent() === kToolCallReply.reasoning.join(''),
      `${when}: a click shows the thinking, markup as text`);
      check(await reasoning.locator('b').count() === 0, `${when}: no element from the thinking`);

      const answer = (await reply.locator('.bubble').textContent()).trim();
      check(answer === kToolCallReply.answer.join(''), `${when}: the answer is the content alone`,
        answer);
      const calls = reply.locator('.tool-call');
      check(await calls.count() === 2, `${when}: a block per tool call`);
      for (const [index, call] of kToolCallReply.calls.entries()) {
        const block = calls.nth(index);
        check(await block.locator('.tool-call-name').textContent() === call.name,
          `${when}: call ${index} names ${call.name}`);
        const shown = await block.locator('.tool-call-arguments').textContent();
        check(shown === JSON.stringify(JSON.parse(call.arguments.join('')), null, 2),
          `${when}: call ${index} shows its arguments as pretty JSON`, shown);
      }
      check(/tool_calls/.test(await reply.locator('.tool-calls-finish').textContent()),
        `${when}: the finish reason shows`);
    };
    await check_reply('streamed');
    if (screenshot_dir) {
      mkdirSync(screenshot_dir, { recursive: true });
      await page.screenshot({ path: `${screenshot_dir}/tool-calls.png` });
    }

    await send(page, 'Thanks');
    await wait_idle(page);
    const history = page.sent[1].messages;
    check(JSON.stringify(history[1]) === JSON.stringify({ role: 'assistant',
      content: kToolCallReply.answer.join('') }),
    'the next turn sends the earlier answer without its thinking or calls', JSON.stringify(history));
    await page.reload();
    await page.locator('.message.assistant').first().waitFor();
    check(await page.locator('.message.assistant').count() === 2, 'after a reload both replies show');
    await check_reply('after a reload');

    // While it streams: the thinking shows open and grows, collapses when the answer
    // starts; a call's arguments show raw until the reply ends.
    await page.locator('#new-chat').click();
    await hand_fed_stream(page);
    await send(page, 'Think aloud');
    await page.waitForFunction(() => window.feed);
    const reasoning = last_reply(page).locator('details.reasoning');
    const thinking_shows = (text) => page.waitForFunction((expected) => {
      const details = document.querySelector('.message.assistant details.reasoning');
      return details?.open && details.querySelector('.reasoning-text').textContent === expected;
    }, text);
    await page.evaluate(() => window.feed({ reasoning_content: 'First, ' }));
    await thinking_shows('First, ');
    check(await reasoning.locator('summary').textContent() === 'Thinking…',
      'live: the thinking shows open while the model thinks');
    await page.evaluate(() => window.feed({ reasoning_content: 'then.' }));
    await thinking_shows('First, then.');
    check(true, 'live: the thinking grows as it streams');
    await page.evaluate(() => window.feed({ content: 'Done' }));
    await page.waitForFunction(() => {
      const details = document.querySelector('.message.assistant details.reasoning');
      return !details.open && /^Thought for/.test(details.querySelector('summary').textContent);
    });
    check(true, 'live: the thinking collapses when the answer starts');
    await page.evaluate(() => {
      window.feed({ tool_calls: [{ index: 0, id: 'c1', type: 'function',
        function: { name: 'lookup', arguments: '' } }] });
      window.feed({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] });
    });
    await page.waitForFunction(() =>
      document.querySelector('.message.assistant .tool-call-arguments')?.textContent === '{"q":');
    check(true, 'live: a call\'s arguments show raw while they stream');
    await reasoning.locator('summary').click();
    await page.evaluate(() => {
      window.feed({ tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] });
      window.feed({}, 'tool_calls');
      window.feed_end();
    });
    await wait_idle(page);
    check(await last_reply(page).locator('.tool-call-arguments').textContent() === '{\n  "q": "x"\n}',
      'live: the arguments are pretty-printed once the reply ends');
    check(await reasoning.evaluate((details) => details.open),
      'live: thinking the reader opened while it streamed stays open at the end');
    check(page.errors.length === 0, 'no page errors', page.errors.join('; '));
  },

  // Stop a reply mid-stream: the page closes the request and the server cancels the
  // generation, which its metrics show (a client cancel counted, nothing running, no
  // more tokens made).
  async stop(browser) {
    const page = await open_page(browser);
    await pin_generation(page);
    const tokens_before = await metric('strata_generation_tokens_total');
    const cancels_before = await metric('strata_client_cancels_total');
    await send(page, 'Tell me a long story');
    await poll('the first tokens', async () =>
      (await last_reply(page).locator('.bubble').textContent()).length > 0);
    check(await metric('strata_sequences_running') === 1, 'the server is generating');
    await page.locator('#stop').click();
    await wait_idle(page);
    check(/stopped/.test(await last_reply(page).locator('.stats').textContent()),
      'the reply is marked stopped');
    await poll('the server to cancel', async () => await metric('strata_sequences_running') === 0);
    check(await metric('strata_client_cancels_total') === cancels_before + 1,
      'the server counted the cancel');
    const made = await metric('strata_generation_tokens_total') - tokens_before;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const later = await metric('strata_generation_tokens_total') - tokens_before;
    const context = (await (await fetch(`${base_url}/v1/models`)).json()).data[0].max_model_len;
    check(later === made && made < context / 2,
      'the server cancelled: no sequence running and no more tokens generated',
      `${made} then ${later} tokens, context ${context}`);
    check(page.errors.length === 0, 'no page errors', page.errors.join('; '));
  },

  // Conversations live in the browser: after a reload the conversation is there;
  // rename and delete stick.
  async reload(browser) {
    const page = await open_page(browser);
    await pin_generation(page);
    await set_settings(page, { max_tokens: 24 });
    await send(page, 'Remember this conversation');
    await wait_idle(page);
    const reply = await last_reply(page).locator('.bubble').textContent();
    await page.reload();
    await page.locator('.message.assistant').waitFor();
    check(await page.locator('.conversation.current .conversation-title').textContent() ===
      'Remember this conversation', 'after a reload the conversation is in the sidebar');
    check(await page.locator('.message.user .bubble').textContent() === 'Remember this conversation' &&
      await last_reply(page).locator('.bubble').textContent() === reply,
    'after a reload the conversation shows its messages');

    await page.locator('.conversation.current').getByRole('button', { name: 'Rename' }).click();
    await page.locator('.rename-field').fill('Renamed chat');
    await page.locator('.rename-field').press('Enter');
    await page.reload();
    check(await page.locator('.conversation.current .conversation-title').textContent() ===
      'Renamed chat', 'a rename survives a reload');

    await page.locator('#new-chat').click();
    await send(page, 'A second conversation');
    await wait_idle(page);
    check(await page.locator('.conversation').count() === 2, 'two conversations in the sidebar');
    page.once('dialog', (dialog) => dialog.accept());
    const renamed = page.locator('.conversation', { hasText: 'Renamed chat' });
    await renamed.hover();  // its buttons show on hover
    await renamed.getByRole('button', { name: 'Delete' }).click();
    await page.reload();
    await page.locator('.conversation').first().waitFor();
    const titles = await page.locator('.conversation-title').allTextContents();
    check(titles.length === 1 && titles[0] === 'A second conversation',
      'a deleted conversation stays deleted after a reload', titles.join(', '));
    check(page.errors.length === 0, 'no page errors', page.errors.join('; '));
  },

  // A reply holding HTML shows it as text and runs nothing. The reply comes from a
  // stubbed stream, as the test model's words are random.
  async xss(browser) {
    const page = await open_page(browser);
    const dialogs = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      dialog.dismiss();
    });
    const reply = 'Look: <img src=x onerror=alert(1)> and <script>window.pwned = 1; alert(2)</script> ' +
      'and **bold** and [link](javascript:alert(3)) and <a href="javascript:alert(4)">a</a>\n\n' +
      '<div onmouseover="alert(5)">hover</div>\n\n```html\n<script>alert(6)</script>\n```\n';
    await fulfill_replies(page, reply);
    await send(page, 'Show me some HTML');
    await wait_idle(page);
    const body = last_reply(page).locator('.bubble');
    const text = await body.textContent();
    check(text.includes('<img src=x onerror=alert(1)>'), 'the <img> tag shows as text', text);
    check(text.includes('<script>window.pwned = 1; alert(2)</script>'), 'the <script> tag shows as text');
    check(await body.locator('img, script, div[onmouseover]').count() === 0,
      'no element from the reply\'s HTML was created');
    check(await body.locator('strong').textContent() === 'bold', 'markdown still renders');
    const hrefs = await body.locator('a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    check(hrefs.every((href) => href === null || !/^javascript:/i.test(href)),
      'no javascript: link', hrefs.join(', '));
    await body.locator('div.code-block').hover();
    await page.mouse.move(300, 300);
    await page.waitForTimeout(300);
    check(dialogs.length === 0, 'no alert ran', dialogs.join(', '));
    check(await page.evaluate(() => window.pwned) === undefined, 'no script from the reply ran');
    await page.reload();
    await page.locator('.message.assistant').waitFor();
    check(dialogs.length === 0 && await page.evaluate(() => window.pwned) === undefined,
      'nothing runs when the saved reply is shown again');
    check(page.errors.length === 0, 'no page errors', page.errors.join('; '));
  },

  // The Content-Security-Policy: sent with the page, blocks an injected inline script
  // and remote images; the page asks nothing of any other origin.
  async csp(browser) {
    const response = await fetch(`${base_url}/`);
    const csp = response.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'",
      "connect-src 'self'", "frame-ancestors 'none'"]) {
      check(csp.includes(directive), `the CSP has ${directive}`, csp);
    }
    check(response.headers.get('x-content-type-options') === 'nosniff', 'nosniff');
    const page = await open_page(browser);
    const own = page.requests.filter((url) => url.startsWith(`${base_url}/`));
    const foreign = page.requests.filter((url) => !url.startsWith(`${base_url}/`) && !url.startsWith('data:'));
    check(own.length >= 4 && foreign.length === 0, 'the page loads from the daemon alone',
      page.requests.join(', '));
    await page.evaluate(() => {
      window.violations = [];
      document.addEventListener('securitypolicyviolation',
        (event) => window.violations.push(`${event.effectiveDirective} ${event.blockedURI}`));
      const script = document.createElement('script');
      script.textContent = 'window.inline_ran = true;';
      document.body.append(script);
      const handler = document.createElement('div');
      handler.setAttribute('onclick', 'window.handler_ran = true');
      document.body.append(handler);
      handler.click();
      const image = document.createElement('img');
      image.src = 'https://example.com/tracker.png';
      document.body.append(image);
    });
    await page.waitForTimeout(300);
    check(await page.evaluate(() => window.inline_ran) === undefined, 'an injected inline script does not run');
    check(await page.evaluate(() => window.handler_ran) === undefined, 'an inline event handler does not run');
    const violations = await page.evaluate(() => window.violations);
    check(violations.some((v) => v.startsWith('script-src')), 'the CSP reports the inline script',
      violations.join('; '));
    check(violations.some((v) => v.startsWith('img-src')), 'the CSP blocks a remote image',
      violations.join('; '));
    check(page.errors.length === 0, 'no page errors', page.errors.join('; '));
  },

  // With --api-key: the page loads without it, asks for it, and works once it is given.
  async api_key(browser) {
    const page = await open_page(browser);
    await page.locator('#notice').waitFor();
    check(/API key/.test(await page.locator('#notice').textContent()), 'the page asks for the API key');
    await page.locator('#notice-settings').click();
    await page.locator('#settings [name="api_key"]').fill('web-ui-test-key');
    await page.locator('#settings [data-action="save"]').click();
    await page.locator('#notice').waitFor({ state: 'hidden' });
    check(await page.locator('#model').textContent() !== 'offline', 'with the key the model shows');
    await set_settings(page, { max_tokens: 8 });
    await send(page, 'Hello');
    await wait_idle(page);
    check(await last_reply(page).locator('.error').count() === 0 &&
      /8 tokens/.test(await last_reply(page).locator('.stats').textContent()),
    'with the key a reply streams');
    check(page.errors.length === 0, 'no page errors', page.errors.join('; '));
  },

  // Screenshots for review: light, dark (through the theme button) and narrow.
  async screenshots(browser) {
    mkdirSync(screenshot_dir, { recursive: true });
    const page = await open_page(browser, { colorScheme: 'light' });
    await fulfill_replies(page, [
      'Here is a small **Python** function that streams a chat reply from Strata:',
      '',
      '```python',
      'import json, urllib.request',
      '',
      'def chat(prompt: str) -> str:',
      '    """Ask the local server and return the whole reply."""',
      '    body = {"messages": [{"role": "user", "content": prompt}]}',
      '    request = urllib.request.Request(',
      '        "http://127.0.0.1:8080/v1/chat/completions",',
      '        data=json.dumps(body).encode(), method="POST")',
      '    with urllib.request.urlopen(request) as response:',
      '        return json.load(response)["choices"][0]["message"]["content"]',
      '```',
      '',
      'A few notes:',
      '- The server speaks the **OpenAI** API, so any client library works.',
      '- Cached prefixes make the second turn start faster (`cached_tokens`).',
      '',
      '> Tip: press *Stop* to cancel a long reply; the server stops generating at once.',
    ].join('\n'));
    await send(page, 'Plan a weekend in Lisbon');
    await wait_idle(page);
    await page.locator('#new-chat').click();
    await send(page, 'How do I call Strata from Python?');
    await wait_idle(page);
    await page.locator('#prompt').fill('Can it also stream?');
    await page.mouse.move(0, 0);
    await page.screenshot({ path: `${screenshot_dir}/light.png` });
    check(true, `wrote ${screenshot_dir}/light.png`);

    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const light_background = await background();
    await page.locator('#toggle-theme').click();
    check(await page.evaluate(() => document.documentElement.dataset.theme) === 'dark' &&
      await background() !== light_background, 'the theme button switches to dark');
    await page.screenshot({ path: `${screenshot_dir}/dark.png` });
    check(true, `wrote ${screenshot_dir}/dark.png`);
    await page.reload();
    check(await page.evaluate(() => document.documentElement.dataset.theme) === 'dark',
      'the theme is kept');
    await page.locator('#toggle-theme').click();

    await page.setViewportSize({ width: 390, height: 780 });
    await page.waitForFunction(() =>
      document.querySelector('.sidebar').getBoundingClientRect().right <= 0);
    check(true, 'in a narrow window the sidebar is tucked away');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    check(overflow <= 0, 'nothing overflows a narrow window', `${overflow}px`);
    await page.screenshot({ path: `${screenshot_dir}/narrow.png` });
    check(true, `wrote ${screenshot_dir}/narrow.png`);
    await page.locator('#toggle-sidebar').click();
    await page.waitForFunction(() =>
      document.querySelector('.sidebar').getBoundingClientRect().left === 0);
    check(true, 'the menu button opens the sidebar');
    await page.screenshot({ path: `${screenshot_dir}/narrow-sidebar.png` });
    check(page.errors.length === 0, 'no page errors', page.errors.join('; '));
  },
};

const run = scenarios[scenario];
if (!base_url || !run) {
  console.error(`usage: web_ui_check.mjs BASE_URL {${Object.keys(scenarios).join('|')}} [SCREENSHOT_DIR]`);
  process.exit(2);
}
// --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
const browser = await chromium.launch({ executablePath: kChromium, headless: true,
  args: ['--no-sandbox'] });
try {
  await run(browser);
  console.log(`PASS ${scenario}`);
} catch (error) {
  console.log(`FAIL: ${error.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
