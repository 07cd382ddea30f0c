import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One page of the bound-endpoints listing as it crossed the proxy. */
export interface ListingPage {
  endpoints: unknown[];
  next_page_uri: string | null;
  [k: string]: unknown;
}

/**
 * The network between one controller and the management API, as a test controls it: a plain
 * forwarding proxy on loopback that can cut the path (every connection reset, new ones refused),
 * rewrite pages of the bound-endpoints listing (a faulty API or middlebox), and put an extra
 * notification into the open event streams. The API behind it is untouched.
 */
export interface ApiProxy {
  url: string;
  cut(on: boolean): void;
  /** Rewrites the next listing pages: `page` is the page's index in its listing (0 = first). */
  rewrite(fn: ((page: ListingPage, index: number) => ListingPage) | undefined): void;
  /** Listing pages that crossed the proxy. */
  readonly pagesServed: number;
  /**
   * Answers `GET /endpoints/{id}` itself (something in between: a bare 404, an HTML page) instead
   * of forwarding it; undefined forwards again.
   */
  answerEndpointGets(answer: { status: number; contentType: string; body: string } | undefined): void;
  /** `GET /endpoints/{id}` requests that crossed the proxy. */
  readonly endpointGets: number;
  /** Writes one SSE frame into every open notification stream; resolves with how many got it. */
  inject(frame: string): number;
  close(): Promise<void>;
}

export async function startApiProxy(target: string): Promise<ApiProxy> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  const streams = new Set<ServerResponse>();
  let cutOff = false;
  let rewriter: ((page: ListingPage, index: number) => ListingPage) | undefined;
  let pagesServed = 0;
  let endpointAnswer: { status: number; contentType: string; body: string } | undefined;
  let endpointGets = 0;

  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const path = req.url ?? '/';
    const listing = req.method === 'GET' && /\/bound_endpoints(\?|$)/.test(path);
    const events = /\/events(\?|$)/.test(path);
    if (req.method === 'GET' && /^\/endpoints\/[^/?]+(\?|$)/.test(path)) {
      endpointGets++;
      if (endpointAnswer) {
        res.writeHead(endpointAnswer.status, { 'content-type': endpointAnswer.contentType });
        res.end(endpointAnswer.body);
        return;
      }
    }
    const up = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path,
        headers: req.headers,
      },
      (ur) => {
        if (!listing || ur.statusCode !== 200) {
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          if (events) {
            streams.add(res);
            res.on('close', () => streams.delete(res));
          }
          ur.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        ur.on('data', (c: Buffer) => chunks.push(c));
        ur.on('end', () => {
          let body = Buffer.concat(chunks).toString('utf8');
          pagesServed++;
          if (rewriter) {
            const index = new URL(path, 'http://x').searchParams.has('before_id') ? 1 : 0;
            body = JSON.stringify(rewriter(JSON.parse(body) as ListingPage, index));
          }
          const headers = { ...ur.headers, 'content-length': String(Buffer.byteLength(body)) };
          res.writeHead(200, headers);
          res.end(body);
        });
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  };

  const server = createServer((req, res) => {
    if (cutOff) {
      req.socket.destroy();
      return;
    }
    forward(req, res);
  });
  server.on('connection', (s) => {
    if (cutOff) {
      s.destroy();
      return;
    }
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    cut(on) {
      cutOff = on;
      if (on) for (const s of sockets) s.destroy();
    },
    rewrite(fn) {
      rewriter = fn;
    },
    get pagesServed() {
      return pagesServed;
    },
    answerEndpointGets(answer) {
      endpointAnswer = answer;
    },
    get endpointGets() {
      return endpointGets;
    },
    inject(frame) {
      for (const s of streams) s.write(frame);
      return streams.size;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
