/**
 * Pod IPs on loopback: 127.0.1.1 .. 127.0.254.254 (Linux routes all of 127.0.0.0/8 to lo), handed
 * out round robin so an address is not reused right after its pod went away, as a CNI's
 * allocator. Each pool starts at a random place: two kubesims on one host (parallel test files,
 * a benchmark beside a test) would otherwise give their first pods the same address, and two
 * pods binding one ip:port is a crash loop no real cluster has.
 */
export class PodIpPool {
  private readonly used = new Set<number>();
  private next: number;

  constructor(random: () => number = Math.random) {
    this.next = Math.floor(random() * PodIpPool.SIZE) % PodIpPool.SIZE;
  }
  /** 127.0.1.1 .. 127.0.254.254, without .0 and .255 in the last octet. */
  private static readonly SIZE = 254 * 254;

  take(): string {
    for (let i = 0; i < PodIpPool.SIZE; i++) {
      const n = (this.next + i) % PodIpPool.SIZE;
      if (this.used.has(n)) continue;
      this.used.add(n);
      this.next = (n + 1) % PodIpPool.SIZE;
      return PodIpPool.format(n);
    }
    throw new Error('kubesim: no free pod IP left in 127.0.1.1-127.0.254.254');
  }

  release(ip: string): void {
    const m = /^127\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
    if (!m) return;
    this.used.delete((Number(m[2]) - 1) * 254 + (Number(m[3]) - 1));
  }

  private static format(n: number): string {
    return `127.0.${Math.floor(n / 254) + 1}.${(n % 254) + 1}`;
  }
}
