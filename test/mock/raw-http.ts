import { connect, type Socket } from 'node:net';

/** A response read off a raw socket (the server closes the connection: requests say so). */
export interface RawHttpResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: any;
}

export function parseRawResponse(raw: Buffer): RawHttpResponse {
  const text = raw.toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  const head = split === -1 ? text : text.slice(0, split);
  const body = split === -1 ? '' : text.slice(split + 4);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let json: unknown;
  try {
    json = body ? JSON.parse(body) : undefined;
  } catch {
    json = undefined;
  }
  return { status: Number(statusLine.split(' ')[1] ?? 0), headers, text: body, json };
}

/** Opens a TCP connection to the host and port of `baseUrl`. */
export async function openSocket(baseUrl: string, localAddress?: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect({ host: hostname, port: Number(port), ...(localAddress ? { localAddress } : {}) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return socket;
}

/** Everything the server sends until it closes the connection (bounded by `timeoutMs`). */
export function readUntilClosed(socket: Socket, timeoutMs = 15_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server did not close the connection within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined); // a reset after the response still counts as closed
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
}

/**
 * Sends exactly these bytes (header lines as given, so repeated or malformed headers reach the
 * server as written) and reads the response. `Connection: close` is added so the server ends it.
 */
export async function rawHttp(
  baseUrl: string,
  head: string[],
  body: Buffer | string = '',
  opts: { localAddress?: string } = {},
): Promise<RawHttpResponse> {
  const socket = await openSocket(baseUrl, opts.localAddress);
  const done = readUntilClosed(socket);
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  socket.write(
    [...head, 'Connection: close', ...(bytes.length ? [`Content-Length: ${bytes.length}`] : [])].join(
      '\r\n',
    ) + '\r\n\r\n',
  );
  if (bytes.length) socket.write(bytes);
  return parseRawResponse(await done);
}
