import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** What one GET answered: its status code and its body as text. */
export interface TextAnswer {
  statusCode: number;
  text: string;
}

/**
 * One GET with Node's own http client, for the CLI's one-shot reads (`status`): loading undici
 * costs a short-lived command about 80 ms of start-up (BENCHMARKS.md "CLI start-up"), more than the
 * request itself. The deadline covers the whole exchange; the body is capped so a wrong --url
 * cannot fill memory.
 */
export function getText(url: string, timeoutMs: number, maxBytes = 64 * 1024 * 1024): Promise<TextAnswer> {
  return new Promise((resolve, reject) => {
    const get = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = get(url, { method: 'GET', timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) req.destroy(new Error(`answer larger than ${maxBytes} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () =>
        resolve({ statusCode: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}
