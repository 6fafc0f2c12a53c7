// What the SDK check scripts (*_check.mjs) share: where the client connects, and one
// summary of named steps whose failed checks are listed in summary.failures.
import { unixSocketFetch } from './unix_socket_fetch.mjs';

// Client options for `target`: http://127.0.0.1:PORT, or unix:PATH (the socket, with any
// host in the URLs). `path` is the API's base path ('/v1' for openai, '' for anthropic).
export function clientTarget(target, path) {
  if (!target.startsWith('unix:')) return { baseURL: target.replace(/\/+$/, '') + path };
  return { baseURL: 'http://strata' + path, fetch: unixSocketFetch(target.slice('unix:'.length)) };
}

export class CheckSummary {
  constructor(fields) {
    this.failures = [];
    this.summary = { ...fields, failures: this.failures };
  }

  // Records `what` as a failure unless `condition` holds; returns the condition.
  check(condition, what) {
    if (!condition) this.failures.push(what);
    return condition;
  }

  // Runs one named step into summary[name]; an exception fails that step only.
  async step(name, body) {
    try {
      this.summary[name] = await body();
    } catch (e) {
      this.failures.push(`${name}: threw ${e?.constructor?.name}: ${e?.message}`);
      this.summary[name] = null;
    }
  }

  // Prints the summary as the last line and exits: 0 only without failures.
  finish() {
    console.log(JSON.stringify(this.summary));
    process.exit(this.failures.length === 0 ? 0 : 1);
  }
}
