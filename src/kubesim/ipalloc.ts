import { randomInt } from 'node:crypto';

/**
 * ClusterIP allocation from an IPv4 CIDR, like the apiserver's bitmap allocator: the network
 * and broadcast addresses are never handed out, an address is never given twice while it is
 * allocated, and dynamic picks are random so tests cannot come to depend on a particular order.
 */
export class IpAllocator {
  private readonly base: number;
  private readonly size: number;
  private readonly used = new Set<number>();

  constructor(readonly cidr: string) {
    const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr);
    const bits = m ? Number(m[5]) : NaN;
    const addr = m ? parseIPv4(`${m[1]}.${m[2]}.${m[3]}.${m[4]}`) : undefined;
    if (addr === undefined || !(bits >= 8 && bits <= 30)) {
      throw new Error(`serviceClusterIpRange must be an IPv4 CIDR between /8 and /30, got "${cidr}"`);
    }
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    this.base = (addr & mask) >>> 0;
    this.size = 2 ** (32 - bits);
  }

  contains(ip: string): boolean {
    const n = parseIPv4(ip);
    return n !== undefined && n > this.base && n < this.base + this.size - 1;
  }

  /** Picks a free address; undefined when the range is full. */
  allocateNext(): string | undefined {
    const usable = this.size - 2;
    if (this.used.size >= usable) return undefined;
    for (let tries = 0; tries < 64; tries++) {
      const n = this.base + 1 + randomInt(usable);
      if (!this.used.has(n)) return this.take(n);
    }
    for (let n = this.base + 1; n < this.base + this.size - 1; n++) {
      if (!this.used.has(n)) return this.take(n);
    }
    return undefined;
  }

  /** Reserves a caller-chosen address; the error text is the allocator's own wording. */
  allocate(ip: string): { ok: true } | { ok: false; reason: string } {
    const n = parseIPv4(ip);
    if (n === undefined || !this.contains(ip)) {
      return {
        ok: false,
        // The IPAddress-object allocator (the default since 1.33) words an out-of-range IP this way.
        reason: `failed to allocate IP ${ip}: the provided network does not match the current range`,
      };
    }
    if (this.used.has(n))
      return { ok: false, reason: `failed to allocate IP ${ip}: provided IP is already allocated` };
    this.used.add(n);
    return { ok: true };
  }

  release(ip: string): void {
    const n = parseIPv4(ip);
    if (n !== undefined) this.used.delete(n);
  }

  isAllocated(ip: string): boolean {
    const n = parseIPv4(ip);
    return n !== undefined && this.used.has(n);
  }

  private take(n: number): string {
    this.used.add(n);
    return formatIPv4(n);
  }
}

/** NodePorts for NodePort/LoadBalancer Services, from the default 30000-32767 range. */
export class PortAllocator {
  private readonly used = new Set<number>();
  constructor(
    readonly min = 30000,
    readonly max = 32767,
  ) {}

  allocateNext(): number | undefined {
    for (let tries = 0; tries < 64; tries++) {
      const p = this.min + randomInt(this.max - this.min + 1);
      if (!this.used.has(p)) {
        this.used.add(p);
        return p;
      }
    }
    for (let p = this.min; p <= this.max; p++) {
      if (!this.used.has(p)) {
        this.used.add(p);
        return p;
      }
    }
    return undefined;
  }

  allocate(port: number): string | undefined {
    if (port < this.min || port > this.max) {
      return `provided port is not in the valid range. The range of valid ports is ${this.min}-${this.max}`;
    }
    if (this.used.has(port)) return 'provided port is already allocated';
    this.used.add(port);
    return undefined;
  }

  release(port: number): void {
    this.used.delete(port);
  }
}

export function parseIPv4(ip: string): number | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return undefined;
    const v = Number(p);
    if (v > 255) return undefined;
    n = n * 256 + v;
  }
  return n;
}

function formatIPv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}
