/**
 * The data-path benchmarks' client load and process accounting: loopback connects, a 1-byte echo
 * per connection, connection rates with N workers, and a process's CPU time from /proc. Every
 * client handles `data`, `end`, `error` and `close`, so a cut connection fails instead of hanging.
 */
import { readFile } from 'node:fs/promises';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export async function freePort(): Promise<number> {
  return (await freePorts(1))[0]!;
}

/**
 * `n` distinct free ports on 127.0.0.1, none of `besides`. Each is held until all are found:
 * Linux hands a port just closed to the next listen on port 0 often enough that two calls to
 * `freePort` in a row gave the same port (a burst run's route and the forwarder's own http
 * port, which then skipped the route: "one of the forwarder's own ports").
 */
export async function freePorts(n: number, besides: readonly number[] = []): Promise<number[]> {
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    while (ports.length < n) {
      const s = createServer();
      held.push(s);
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
      const port = (s.address() as AddressInfo).port;
      if (!besides.includes(port)) ports.push(port);
    }
  } finally {
    await Promise.all(held.map((s) => new Promise<void>((r) => s.close(() => r()))));
  }
  return ports;
}

/** A connection to 127.0.0.1:`port`; rejects when it is not up within `timeoutMs` (a full accept queue drops SYNs). */
export function dial(port: number, timeoutMs = 10_000): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no connection to 127.0.0.1:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    s.once('connect', () => {
      clearTimeout(timer);
      s.off('error', reject);
      s.setNoDelay(true);
      resolve(s);
    });
    s.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** One 1-byte echo round trip on a fresh connection, then close. */
export async function oneConnection(port: number, timeoutMs = 10_000): Promise<void> {
  const s = await dial(port);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no echo within ${timeoutMs} ms`)), timeoutMs);
      const fail = (err: Error) => {
        clearTimeout(timer);
        reject(err);
      };
      s.once('data', () => {
        clearTimeout(timer);
        resolve();
      });
      s.once('error', fail);
      s.once('end', () => fail(new Error('ended before the echo')));
      s.once('close', () => fail(new Error('closed before the echo')));
      s.write('x');
    });
  } finally {
    s.destroy();
  }
}

/** Every phase is bounded: a stuck phase fails the run with its name instead of hanging it. */
export function bounded<T>(phase: string, p: Promise<T>, ms = 300_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`phase "${phase}" did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/** `count` connections with `concurrency` workers: connections per second. */
export async function connectionRate(port: number, count: number, concurrency: number): Promise<number> {
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        await oneConnection(port);
      }
    }),
  );
  return count / (Number(process.hrtime.bigint() - t0) / 1e9);
}

/** CPU seconds (user + system) a process has used so far. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/** The 1, 5 and 15 minute load averages, as `uptime` prints them. */
export async function loadAverage(): Promise<string> {
  const text = await readFile('/proc/loadavg', 'utf8');
  return text.split(' ').slice(0, 3).join(' ');
}

/**
 * TCP sockets in TIME_WAIT now (Linux's /proc/net/sockstat), undefined where unknown. Tens of
 * thousands of them (a burst of 2,000 leaves 4,000 or more for 60 s) make every connect() on
 * loopback search for a free source port: a burst run right after another spent 2.7 s of its
 * driver's CPU in node:net's internalConnect, against 0.6 s in all when the machine had few.
 */
export async function timeWaitSockets(): Promise<number | undefined> {
  const text = await readFile('/proc/net/sockstat', 'utf8').catch(() => '');
  const m = /^TCP:.*\btw (\d+)/m.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Waits (at most `timeoutMs`) until fewer than `max` TCP sockets are in TIME_WAIT; returns the count then. */
export async function settleTimeWait(max: number, timeoutMs: number): Promise<number | undefined> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const n = await timeWaitSockets();
    if (n === undefined || n < max || Date.now() >= until) return n;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Sends `mib` MiB to the sink and waits for its byte count: MiB/s. */
export async function stream(port: number, mib: number): Promise<number> {
  const chunk = Buffer.alloc(1024 * 1024, 0x5a);
  const s = await dial(port);
  const t0 = process.hrtime.bigint();
  const reply = new Promise<string>((resolve, reject) => {
    let text = '';
    s.setEncoding('utf8');
    s.on('data', (c: string) => (text += c));
    s.once('end', () => resolve(text.trim()));
    s.once('error', reject);
  });
  for (let i = 0; i < mib; i++) {
    if (!s.write(chunk)) await new Promise((r) => s.once('drain', r));
  }
  s.end();
  const got = await reply;
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  s.destroy();
  if (got !== String(mib * 1024 * 1024)) throw new Error(`sink got ${got} bytes, sent ${mib * 1024 * 1024}`);
  return mib / seconds;
}

/** A process's resident set size, MiB. */
export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

/**
 * `n` idle connections to `port`, opened 50 at a time, each held after the echo of its one byte;
 * one without its echo within 10 s (or closed) is counted as failed, so a stuck path cannot hang
 * the run. The caller destroys the held sockets.
 */
export async function holdIdle(port: number, n: number): Promise<{ held: Socket[]; failed: number }> {
  const held: Socket[] = [];
  let next = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < n) {
        next++;
        const s = await dial(port).catch(() => undefined);
        if (!s) {
          failed++;
          continue;
        }
        s.on('error', () => undefined); // a reset is counted, not thrown
        const ok = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => {
            s.destroy();
            resolve(false);
          }, 10_000);
          s.once('data', () => {
            clearTimeout(timer);
            resolve(true);
          });
          s.once('close', () => {
            clearTimeout(timer);
            resolve(false);
          });
          s.write('x');
        });
        if (ok) held.push(s);
        else failed++;
      }
    }),
  );
  return { held, failed };
}
