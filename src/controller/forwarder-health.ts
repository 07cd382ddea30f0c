/**
 * Gathers the forwarders' data-path health for `/status` (issue #27 item 5): every replica lists
 * this install's forwarder pods and reads each one's `/status` on its `http` port, with a short
 * timeout and a few reads at a time, on a timer (never per `/status` request: a tool polling
 * `/status` costs the forwarders nothing). What the answers mean is decided in decide/data-path.ts.
 */
import { Gauge, type Registry } from 'prom-client';
import { request } from 'undici';
import { ForwarderStatusSchema } from '../forwarder/forwarder-status.js';
import type { KubeTransport } from '../kube/index.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../time/clock.js';
import { z } from 'zod';
import {
  ForwarderPodSchema,
  podTarget,
  type DataPathSnapshot,
  type ForwarderAnswer,
  type ForwarderRead,
} from './decide/data-path.js';

/** A forwarder to read (`url`, its `/status`), or one found but not readable (`problem`). */
export interface ForwarderTarget {
  name: string;
  url?: string;
  problem?: string;
  /** Its process does not run (a Pending pod): see ForwarderRead.notRunning. */
  notRunning?: true;
}

/** Finds the forwarders; throws when it cannot (the reason becomes the column's "unknown"). */
export type ForwarderSource = (signal: AbortSignal) => Promise<ForwarderTarget[]>;

/** The forwarder pods' labels, as the chart sets them (and `check` lists them). */
export function forwarderPodSelector(release: string): string {
  return `app.kubernetes.io/instance=${release},app.kubernetes.io/component=forwarder`;
}

const PodListSchema = z.object({ items: z.array(ForwarderPodSchema) }).loose();

/** This install's forwarder pods in the operator namespace (the chart's `-controller-check` Role grants the list). */
export function podForwarderSource(opts: {
  transport: KubeTransport;
  namespace: string;
  release: string;
  timeoutMs?: number;
}): ForwarderSource {
  const selector = forwarderPodSelector(opts.release);
  return async (signal) => {
    try {
      const list = await opts.transport.json(
        {
          path: `/api/v1/namespaces/${opts.namespace}/pods`,
          query: { labelSelector: selector },
          timeoutMs: opts.timeoutMs ?? 10_000,
          signal,
        },
        PodListSchema,
      );
      return list.items.map(podTarget);
    } catch (err) {
      throw new Error(
        `cannot list the forwarder pods in ${opts.namespace} (${selector}): ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
  };
}

/** Forwarders at known HTTP addresses (the demo's in-process forwarder; `status --forwarder-url`). */
export function staticForwarderSource(bases: () => readonly string[]): ForwarderSource {
  return async () => bases().map((b) => ({ name: statusUrl(b), url: statusUrl(b) }));
}

export function statusUrl(base: string): string {
  return `${base.replace(/\/$/, '')}/status`;
}

/** A forwarder's `/status` of 10,000 URLs is a few MiB; anything far larger is not one. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

function problemOf(err: unknown, timeoutMs: number): string {
  const e = err as { code?: string; name?: string; message?: string };
  if (e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT' || e.name === 'TimeoutError')
    return `no answer within ${timeoutMs} ms`;
  return e.code ?? e.message ?? String(err);
}

/** Reads one forwarder's `/status` (the full URL); never throws: a failure is an answer naming the cause. */
export async function readForwarderStatus(
  url: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ForwarderAnswer> {
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    const res = await request(url, {
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        res.body.destroy();
        return { ok: false, problem: 'answer larger than 32 MiB: not a forwarder status document' };
      }
      chunks.push(chunk);
    }
    if (res.statusCode !== 200) return { ok: false, problem: `HTTP ${res.statusCode}` };
    let json: unknown;
    try {
      json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return { ok: false, problem: 'did not answer JSON (is it a forwarder HTTP server?)' };
    }
    const parsed = ForwarderStatusSchema.safeParse(json);
    if (!parsed.success)
      return { ok: false, problem: 'not a forwarder status document (is it a forwarder HTTP server?)' };
    return { ok: true, status: parsed.data };
  } catch (err) {
    return { ok: false, problem: problemOf(err, timeoutMs) };
  }
}

export interface GatherOptions {
  now: () => number;
  /** Per forwarder read. */
  timeoutMs: number;
  /** Reads in flight at once. */
  concurrency: number;
  signal: AbortSignal;
}

/** Finds the forwarders and reads them all, `concurrency` at a time. Never throws. */
export async function gatherDataPath(source: ForwarderSource, o: GatherOptions): Promise<DataPathSnapshot> {
  let targets: ForwarderTarget[];
  try {
    targets = await source(o.signal);
  } catch (err) {
    return { gatheredAt: o.now(), problem: err instanceof Error ? err.message : String(err), forwarders: [] };
  }
  const reads: ForwarderRead[] = new Array<ForwarderRead>(targets.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < targets.length) {
      const i = next++;
      const t = targets[i]!;
      const answer: ForwarderAnswer = t.url
        ? await readForwarderStatus(t.url, o.timeoutMs, o.signal)
        : { ok: false, problem: t.problem ?? 'no address to read' };
      reads[i] = {
        name: t.name,
        ...(t.url ? { url: t.url } : {}),
        readAt: o.now(),
        answer,
        ...(t.notRunning ? { notRunning: true as const } : {}),
      };
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency, targets.length) }, worker));
  return { gatheredAt: o.now(), forwarders: reads };
}

export interface DataPathGathererOptions {
  source: ForwarderSource;
  clock: Clock;
  log: Logger;
  /** Between gatherings (default 10 s). */
  intervalMs?: number;
  timeoutMs?: number;
  concurrency?: number;
  /** Where `endpoint_binder_data_path_forwarders{read}` goes. */
  registry?: Registry;
}

/** Keeps the last snapshot current: a gathering at once, then one every `intervalMs`. */
export class DataPathGatherer {
  private last: DataPathSnapshot | undefined;
  private problems = new Map<string, string>();
  private readonly forwarders: Gauge | undefined;

  constructor(private readonly o: DataPathGathererOptions) {
    this.forwarders = o.registry
      ? new Gauge({
          name: 'endpoint_binder_data_path_forwarders',
          help: 'Forwarders found at the last data-path gathering, by whether their /status could be read.',
          labelNames: ['read'],
          registers: [o.registry],
        })
      : undefined;
  }

  /** The last gathering; undefined before the first one finished. */
  get snapshot(): DataPathSnapshot | undefined {
    return this.last;
  }

  async run(signal: AbortSignal): Promise<void> {
    const { clock } = this.o;
    while (!signal.aborted) {
      const snap = await gatherDataPath(this.o.source, {
        now: () => clock.now(),
        timeoutMs: this.o.timeoutMs ?? 3_000,
        concurrency: this.o.concurrency ?? 8,
        signal,
      });
      if (signal.aborted) return;
      this.last = snap;
      this.logChanges(snap);
      const read = snap.forwarders.filter((f) => f.answer.ok).length;
      this.forwarders?.set({ read: 'true' }, read);
      this.forwarders?.set({ read: 'false' }, snap.forwarders.length - read);
      await clock.sleep(this.o.intervalMs ?? 10_000, signal);
    }
  }

  /** A warn line when a forwarder becomes unreadable or its reason changes; info when it is read again. */
  private logChanges(snap: DataPathSnapshot): void {
    const now = new Map<string, string>();
    if (snap.problem !== undefined) now.set('', snap.problem);
    for (const f of snap.forwarders) if (!f.answer.ok && !f.notRunning) now.set(f.name, f.answer.problem);
    for (const [name, problem] of now)
      if (this.problems.get(name) !== problem)
        this.o.log.warn(
          { forwarder: name || undefined, problem },
          'data path: cannot read a forwarder status',
        );
    for (const name of this.problems.keys())
      if (!now.has(name))
        this.o.log.info({ forwarder: name || undefined }, 'data path: forwarder status read again');
    this.problems = now;
  }
}
