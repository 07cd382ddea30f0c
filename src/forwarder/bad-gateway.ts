/**
 * Pure: the answer an `http://` endpoint's client gets when the data path fails before the first
 * response byte: `502 Bad Gateway` naming the ERR_7xx code and its one-line meaning (docs/errors.md),
 * instead of a bare reset that says nothing. The whole response is sent and the connection ends
 * (`Connection: close`): a complete error answer, not a cut stream.
 */
import { codeTitle } from './url-health.js';

export function badGatewayResponse(code: string | undefined, fallback: string): Buffer {
  const meaning = codeTitle(code) ?? fallback;
  const body = `${code ? `${code}: ` : ''}${meaning}\n`;
  const head = [
    'HTTP/1.1 502 Bad Gateway',
    'Content-Type: text/plain; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...(code ? [`X-Binding-Error: ${code}`] : []),
    '',
    '',
  ].join('\r\n');
  return Buffer.from(head + body, 'utf8');
}
