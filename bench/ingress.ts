/**
 * Binding ingress benchmark: dial latency (preface + reply) and bulk throughput through the mock
 * ingress to a loopback echo upstream and back. Loopback only, bounded in count and size.
 *
 *   npm run bench:ingress [-- --dials 500 --mib 256 --parallel 4]
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { parseBenchArgs } from './support/args.js';
import { ManagementClient } from '../src/api/client/index.js';
import { connectThroughIngress } from '../src/api/ingress/dialer.js';
import { startEchoUpstream } from '../src/demo/echo-upstream.js';
import { startMockApi } from '../src/mock/server.js';

const Args = z.object({
  dials: z.coerce.number().int().min(1).max(10_000).default(500),
  mib: z.coerce.number().int().min(1).max(4096).default(256),
  parallel: z.coerce.number().int().min(1).max(64).default(4),
});
const args = parseBenchArgs('bench/ingress.ts', Args);

const CHUNK = Buffer.alloc(64 * 1024, 0x5a);
const URL_ = 'tcp://bench.ingress:9000';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const api = await startMockApi({ ingress: {} });
  const echo = await startEchoUpstream();
  const account = api.accounts[0]!;
  const client = new ManagementClient({ baseUrl: api.url, apiKey: account.api_keys[0]! });
  await client.endpoints.create({ url: URL_, bindings: ['kubernetes'], upstream_url: echo.url });
  const dial = () =>
    connectThroughIngress({ address: api.ingressAddress!, authtoken: account.authtokens[0]!, url: URL_ });

  // Dial latency: sequential connect + preface + reply, then close.
  const latencies: number[] = [];
  for (let i = 0; i < args.dials; i++) {
    const t0 = process.hrtime.bigint();
    const s = await dial();
    latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    s.destroy();
  }
  latencies.sort((a, b) => a - b);

  // Throughput: `parallel` connections each send mib/parallel MiB and read the echo back.
  const perConn = Math.floor((args.mib * 1024 * 1024) / args.parallel / CHUNK.length);
  const t0 = process.hrtime.bigint();
  const results = await Promise.all(
    Array.from({ length: args.parallel }, async () => {
      const s = await dial();
      const sent = createHash('sha256');
      const got = createHash('sha256');
      let received = 0;
      const done = new Promise<void>((resolve, reject) => {
        s.on('data', (c: Buffer) => {
          got.update(c);
          received += c.length;
        });
        s.on('end', resolve);
        s.on('error', reject);
      });
      s.resume();
      for (let i = 0; i < perConn; i++) {
        sent.update(CHUNK);
        if (!s.write(CHUNK)) await new Promise((r) => s.once('drain', r));
      }
      s.end();
      await done;
      return { intact: sent.digest('hex') === got.digest('hex'), received };
    }),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const mib = results.reduce((n, r) => n + r.received, 0) / (1024 * 1024);

  const report = {
    node: process.version,
    dials: args.dials,
    dial_ms: {
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      p99: percentile(latencies, 99),
    },
    throughput: {
      parallel: args.parallel,
      mib_each_way: Number(mib.toFixed(1)),
      seconds: Number(seconds.toFixed(3)),
      mib_per_s_each_way: Number((mib / seconds).toFixed(1)),
      intact: results.every((r) => r.intact),
    },
    rss_mib: Number((process.memoryUsage().rss / (1024 * 1024)).toFixed(1)),
  };
  process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  await client.close();
  await echo.stop();
  await api.stop();
  if (!report.throughput.intact) process.exitCode = 1;
}

await main();
