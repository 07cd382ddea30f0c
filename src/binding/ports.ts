import type { Service } from '../kube/objects.js';
import { compareAge } from './age.js';
import { parseEndpointUrl } from './endpoint-url.js';
import { ENDPOINT_URL_ANNOTATION, PORTS_ANNOTATION, ROLE_INTERNAL, ROLE_LABEL } from './identity.js';
import { parsePortsAnnotation } from './service-format.js';
import type { PortRepair } from './types.js';

/**
 * The forwarder-port allocator (docs/projection.md "Forwarder ports"). Pure: randomness is
 * injected. The cluster is the source of truth: a URL keeps the targetPort its internal Services
 * have; what is wrong there is repaired and reported, never fatal.
 */

/** One internal Service port that says "this URL is served on this forwarder port". */
export interface PortClaim {
  url: string;
  port: number;
  service: { namespace: string; name: string; creationTimestamp?: string | undefined };
}

export interface PortRange {
  min: number;
  max: number;
}

export interface PortAllocationInput {
  /** Canonical URLs that need a port, highest priority (oldest endpoint) first. Duplicates are ignored. */
  urls: readonly string[];
  /** Claims found in the cluster (see `portClaims`). */
  claims: readonly PortClaim[];
  /** The controller's last allocation; used only for a URL the cluster has no valid claim for. */
  hints?: ReadonlyMap<string, number> | undefined;
  /**
   * Ports reserved for URLs whose projection was removed (port-reservations.ts): a returning URL
   * gets its port back, and new URLs avoid them while other ports are free.
   */
  reserved?: ReadonlyMap<string, number> | undefined;
  /**
   * Claims of this install's labelled internal Services that no proof makes ours (ownership/):
   * they steer nothing, but no other URL gets a port they still name (a forwarder may serve it).
   */
  held?: readonly PortClaim[] | undefined;
  /** Inclusive. */
  range: PortRange;
  /** Uniform in [0, 1). */
  random: () => number;
}

export interface PortAllocation {
  /** URL → port for every URL that got one. */
  ports: Map<string, number>;
  /** URLs left without a port because the range is full, in priority order. */
  exhausted: string[];
  repairs: PortRepair[];
}

const PORT_NAME = /^(http|tcp)-([1-9][0-9]{0,4})$/;

/**
 * The claims of this install's internal Services: each `spec.ports[]` entry with a numeric
 * targetPort, its URL from the port name `<scheme>-<port>` plus the Service's
 * `endpoint-binder.io/endpoint-url` hostname, else from the ports annotation entry for that
 * targetPort. Ports whose URL cannot be told are ignored. Alias Services claim nothing.
 */
export function portClaims(services: readonly Service[]): PortClaim[] {
  const claims: PortClaim[] = [];
  for (const svc of services) {
    const meta = svc.metadata;
    if (meta.labels?.[ROLE_LABEL] !== ROLE_INTERNAL) continue;
    const own = parseEndpointUrl(meta.annotations?.[ENDPOINT_URL_ANNOTATION] ?? '');
    const host = own.ok ? own.value.host : undefined;
    let annotated: Map<number, string> | undefined;
    const service = {
      namespace: meta.namespace ?? '',
      name: meta.name,
      creationTimestamp: meta.creationTimestamp,
    };
    for (const p of svc.spec?.ports ?? []) {
      const target = p.targetPort;
      if (typeof target !== 'number' || !Number.isInteger(target)) continue;
      let url: string | undefined;
      const m = PORT_NAME.exec(p.name ?? '');
      if (m && host !== undefined && Number(m[2]) === p.port) {
        const parsed = parseEndpointUrl(`${m[1]}://${host}:${p.port}`);
        if (parsed.ok) url = parsed.value.url;
      }
      if (url === undefined) {
        if (annotated === undefined) {
          const parsed = parsePortsAnnotation(meta.annotations?.[PORTS_ANNOTATION]);
          annotated = parsed.ok ? parsed.ports : new Map();
        }
        url = annotated.get(target);
      }
      if (url !== undefined) claims.push({ url, port: target, service });
    }
  }
  return claims;
}

type ClaimService = PortClaim['service'];

/** Older first; then by namespace/name. */
function compareServiceAge(a: ClaimService, b: ClaimService): number {
  return compareAge(a.creationTimestamp, serviceKey(a), b.creationTimestamp, serviceKey(b));
}

function serviceKey(s: ClaimService): string {
  return `${s.namespace}/${s.name}`;
}

/**
 * Free ports of the range as a "next free slot" forest with path compression: finding the next
 * free port from any start is near O(1) amortised, so a full range costs O(range), not O(n·range).
 */
class FreeSlots {
  readonly #next: Int32Array;
  readonly #size: number;
  #free: number;

  constructor(size: number) {
    this.#size = size;
    this.#free = size;
    // #next[size] is the sentinel "nothing free at or after this point".
    this.#next = new Int32Array(size + 1);
    for (let i = 0; i <= size; i++) this.#next[i] = i;
  }

  get free(): number {
    return this.#free;
  }

  #find(i: number): number {
    let root = i;
    while (this.#next[root] !== root) root = this.#next[root]!;
    while (this.#next[i] !== root) {
      const up = this.#next[i]!;
      this.#next[i] = root;
      i = up;
    }
    return root;
  }

  isFree(i: number): boolean {
    return this.#next[i] === i && i < this.#size;
  }

  take(i: number): void {
    if (!this.isFree(i)) return;
    this.#next[i] = i + 1;
    this.#free--;
  }

  /** The first free slot at or after `start`, wrapping around; -1 when none is free. */
  nextFree(start: number): number {
    if (this.#free === 0) return -1;
    let f = this.#find(start);
    if (f === this.#size) f = this.#find(0);
    return f === this.#size ? -1 : f;
  }
}

function checkRange(range: PortRange): void {
  const ok = (n: number) => Number.isInteger(n) && n >= 1 && n <= 65535;
  if (!ok(range.min) || !ok(range.max) || range.min > range.max) {
    throw new RangeError(
      `portRange: min and max must be whole numbers from 1 to 65535 with min <= max, got ${range.min}-${range.max}`,
    );
  }
}

/**
 * Allocates one forwarder port per URL: existing valid claims first (repairing out-of-range
 * ports, one port claimed by two URLs, one URL with two ports), then hints, then a random port
 * probed forward to the next free one. Ports claimed in the cluster but not kept are avoided for
 * new URLs while other ports are free, so a stale listing does not name one port for two URLs.
 * The steps run in this order, each a named function below.
 */
export function allocatePorts(input: PortAllocationInput): PortAllocation {
  checkRange(input.range);
  const run = startAllocation(input);
  const claims = sortClaims(run, input.claims);
  reportOutOfRange(run, claims.outOfRange);
  keepClaimedPorts(run, claimCandidates(run, claims.found));
  const heldFor = holdUnprovenPorts(run, input.held ?? []);
  const pending = useHints(run, heldFor);
  const exhausted = pickFreePorts(run, pending, claims.claimedPorts, heldFor);
  return { ports: run.ports, exhausted, repairs: run.repairs };
}

/** One allocation's state, shared by its steps. */
interface Allocation {
  input: PortAllocationInput;
  range: PortRange;
  size: number;
  /** URL → its rank (0: highest priority), duplicates dropped. */
  priority: Map<string, number>;
  urls: string[];
  repairs: PortRepair[];
  ports: Map<string, number>;
  /** Ports nothing may take any more (kept, hinted or held). */
  hard: FreeSlots;
  inRange: (p: number) => boolean;
  assign: (url: string, port: number) => void;
}

function startAllocation(input: PortAllocationInput): Allocation {
  const { range } = input;
  const priority = new Map<string, number>();
  for (const url of input.urls) if (!priority.has(url)) priority.set(url, priority.size);
  const size = range.max - range.min + 1;
  const ports = new Map<string, number>();
  const hard = new FreeSlots(size);
  return {
    input,
    range,
    size,
    priority,
    urls: [...priority.keys()],
    repairs: [],
    ports,
    hard,
    inRange: (p) => Number.isInteger(p) && p >= range.min && p <= range.max,
    assign: (url, port) => {
      ports.set(url, port);
      hard.take(port - range.min);
    },
  };
}

/** URL → port → the Services claiming it. */
type ClaimsByUrl = Map<string, Map<number, ClaimService[]>>;

/** The claims of the URLs asked about, in the range and outside it; every port claimed in the range. */
function sortClaims(
  run: Allocation,
  claims: readonly PortClaim[],
): { found: ClaimsByUrl; outOfRange: ClaimsByUrl; claimedPorts: Set<number> } {
  const found: ClaimsByUrl = new Map();
  const outOfRange: ClaimsByUrl = new Map();
  const claimedPorts = new Set<number>();
  for (const c of claims) {
    if (run.inRange(c.port)) claimedPorts.add(c.port);
    if (!run.priority.has(c.url)) continue;
    const target = run.inRange(c.port) ? found : outOfRange;
    let byPort = target.get(c.url);
    if (!byPort) target.set(c.url, (byPort = new Map<number, ClaimService[]>()));
    const list = byPort.get(c.port);
    if (list) list.push(c.service);
    else byPort.set(c.port, [c.service]);
  }
  return { found, outOfRange, claimedPorts };
}

/** Repair: a claim outside the range is dropped (its URL gets a new port). */
function reportOutOfRange(run: Allocation, outOfRange: ClaimsByUrl): void {
  const { range } = run;
  for (const url of run.urls) {
    for (const [port, services] of outOfRange.get(url) ?? []) {
      run.repairs.push({
        kind: 'out-of-range',
        url,
        port,
        services: services.map(serviceKey),
        message: `${url} had forwarder port ${port}, outside the range ${range.min}-${range.max}; it gets a new port`,
      });
    }
  }
}

/** Port → the URLs whose candidate it is, each with its claiming Services and the oldest of them. */
type Candidates = Map<number, { url: string; oldest: ClaimService; services: ClaimService[] }[]>;

/** One candidate per URL: the most common port among its claims, then the lowest (repair: `url-two-ports`). */
function claimCandidates(run: Allocation, found: ClaimsByUrl): Candidates {
  const candidates: Candidates = new Map();
  for (const url of run.urls) {
    const byPort = found.get(url);
    if (!byPort) continue;
    let best: [number, ClaimService[]] | undefined;
    for (const entry of byPort) {
      if (
        !best ||
        entry[1].length > best[1].length ||
        (entry[1].length === best[1].length && entry[0] < best[0])
      ) {
        best = entry;
      }
    }
    const [port, services] = best!;
    if (byPort.size > 1) {
      const ports = [...byPort.keys()].sort((a, b) => a - b);
      run.repairs.push({
        kind: 'url-two-ports',
        url,
        ports,
        kept: port,
        message: `${url} had forwarder ports ${ports.join(', ')}; it keeps ${port}`,
      });
    }
    const oldest = [...services].sort(compareServiceAge)[0]!;
    let list = candidates.get(port);
    if (!list) candidates.set(port, (list = []));
    list.push({ url, oldest, services });
  }
  return candidates;
}

/** Each claimed port is kept by the URL of its oldest Service, then priority (repair: `duplicate-port`). */
function keepClaimedPorts(run: Allocation, candidates: Candidates): void {
  const { priority } = run;
  for (const [port, list] of candidates) {
    list.sort((a, b) => compareServiceAge(a.oldest, b.oldest) || priority.get(a.url)! - priority.get(b.url)!);
    const winner = list[0]!;
    run.assign(winner.url, port);
    for (const loser of list.slice(1)) {
      run.repairs.push({
        kind: 'duplicate-port',
        port,
        url: loser.url,
        keptBy: winner.url,
        services: loser.services.map(serviceKey),
        message: `forwarder port ${port} was claimed by ${winner.url} and ${loser.url}; ${winner.url} (oldest Service) keeps it, ${loser.url} gets a new port`,
      });
    }
  }
}

/** A port an unproven Service names is given to no other URL (its own URL may take it back). */
function holdUnprovenPorts(run: Allocation, held: readonly PortClaim[]): Map<number, string> {
  const heldFor = new Map<number, string>();
  for (const c of held) {
    if (!run.inRange(c.port) || !run.hard.isFree(c.port - run.range.min)) continue;
    run.hard.take(c.port - run.range.min);
    heldFor.set(c.port, c.url);
  }
  return heldFor;
}

/** A URL without a kept claim takes its hint (or reserved port) when usable; the rest are returned. */
function useHints(run: Allocation, heldFor: Map<number, string>): string[] {
  const { input, range } = run;
  const pending: string[] = [];
  for (const url of run.urls) {
    if (run.ports.has(url)) continue;
    const hint = input.hints?.get(url) ?? input.reserved?.get(url);
    const usable = (p: number): boolean => run.hard.isFree(p - range.min) || heldFor.get(p) === url;
    if (hint !== undefined && run.inRange(hint) && usable(hint)) {
      heldFor.delete(hint);
      run.assign(url, hint);
    } else pending.push(url);
  }
  return pending;
}

/**
 * A random free port for each URL still without one. The first pass avoids ports the cluster
 * still lists for something else; the second, only when the range has run out, may use them.
 * Returns the URLs left without a port.
 */
function pickFreePorts(
  run: Allocation,
  pending: readonly string[],
  claimedPorts: ReadonlySet<number>,
  heldFor: ReadonlyMap<number, string>,
): string[] {
  const { input, range, size } = run;
  const soft = new FreeSlots(size);
  for (const p of run.ports.values()) soft.take(p - range.min);
  for (const p of claimedPorts) soft.take(p - range.min);
  for (const p of heldFor.keys()) soft.take(p - range.min);
  for (const [url, p] of input.reserved ?? [])
    if (!run.priority.has(url) && run.inRange(p)) soft.take(p - range.min);
  const pick = (slots: FreeSlots, url: string): boolean => {
    const r = input.random();
    // A generator outside [0, 1) would otherwise index outside the range.
    const start = r >= 0 && r < 1 ? Math.min(size - 1, Math.floor(r * size)) : 0;
    const slot = slots.nextFree(start);
    if (slot < 0) return false;
    slots.take(slot);
    run.assign(url, slot + range.min);
    return true;
  };
  const retry: string[] = [];
  for (const url of pending) if (!pick(soft, url)) retry.push(url);
  const exhausted: string[] = [];
  for (const url of retry) if (!pick(run.hard, url)) exhausted.push(url);
  return exhausted;
}
