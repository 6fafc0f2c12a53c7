// A fetch() that sends every request to one Unix socket, for the official SDKs (both
// take a `fetch` option): the URL's path and query go over the socket, its host is
// ignored. Streams the response body as it arrives, so server-sent events work.
import http from 'node:http';
import { Readable } from 'node:stream';

export function unixSocketFetch(socketPath) {
  return async (input, init = {}) => {
    const url = new URL(typeof input === 'string' ? input : input.url);
    const headers = Object.fromEntries(new Headers(init.headers ?? {}).entries());
    const body = init.body == null ? null : Buffer.from(
        typeof init.body === 'string' ? init.body : await new Response(init.body).arrayBuffer());
    if (body) headers['content-length'] = String(body.length);
    return await new Promise((resolve, reject) => {
      const request = http.request({
        socketPath,
        path: url.pathname + url.search,
        method: init.method ?? 'GET',
        headers,
        signal: init.signal ?? undefined,
      }, (response) => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : String(value));
        }
        const noBody = response.statusCode === 204 || response.statusCode === 304;
        resolve(new Response(noBody ? null : Readable.toWeb(response), {
          status: response.statusCode,
          statusText: response.statusMessage,
          headers: responseHeaders,
        }));
      });
      request.on('error', reject);
      request.end(body ?? undefined);
    });
  };
}
