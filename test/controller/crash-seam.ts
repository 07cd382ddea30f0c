import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A kill -9 seen from the API server: a transparent proxy in front of kubesim through which one
 * controller talks. Armed with `k`, it forwards that controller's writes of Services and
 * ConfigMaps until the k-th has reached the API server, then cuts every connection and refuses
 * every later request, lease renewals included. The process object lives on, but nothing it does
 * reaches the cluster again: exactly what a successor finds after a crash at that instant.
 */
export interface CrashSeam {
  url: string;
  /** Counts writes from now on; dies once the k-th has reached the API server (Infinity: never). */
  arm(k: number): void;
  /** Writes counted since `arm`. */
  readonly writes: number;
  readonly dead: boolean;
  close(): Promise<void>;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A write of a pass: Services and the install record, not the Lease or Events. */
function isPassWrite(req: http.IncomingMessage): boolean {
  const path = (req.url ?? '').split('?')[0] ?? '';
  return WRITE_METHODS.has(req.method ?? '') && /\/(services|configmaps)(\/|$)/.test(path);
}

export async function startCrashSeam(target: string): Promise<CrashSeam> {
  const upstream = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  const sockets = new Set<Socket>();
  let armed = false;
  let limit = Number.POSITIVE_INFINITY;
  let writes = 0;
  let dead = false;
  const die = (): void => {
    dead = true;
    for (const s of sockets) s.destroy();
  };
  const server = http.createServer((req, res) => {
    if (dead) return req.socket.destroy();
    const counted = armed && isPassWrite(req);
    if (counted) writes++;
    const last = counted && writes >= limit;
    const out = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent,
      },
      (up) => {
        // The k-th write has been applied by the API server; its answer never arrives.
        if (last) return die();
        if (dead) return req.socket.destroy();
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', () => req.socket.destroy());
    req.pipe(out);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arm(k) {
      armed = true;
      limit = k;
      writes = 0;
    },
    get writes() {
      return writes;
    },
    get dead() {
      return dead;
    },
    async close() {
      die();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
