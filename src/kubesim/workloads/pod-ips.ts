/**
 * Pod IPs on loopback: 127.1.1.1 .. 127.254.254.254 (Linux routes all of 127.0.0.0/8 to lo;
 * 127.0.x.x is left to the host's own services), handed out round robin so an address is not
 * reused right after its pod went away, as a CNI's allocator. Each pool starts at a random place
 * among some 16 million: two kubesims on one host (parallel test files, a benchmark beside a
 * test) would otherwise give their first pods the same address, and two pods binding one ip:port
 * is a crash loop no real cluster has. (With 65,000 addresses, two pools of 10 pods met about
 * once in 3,000 pairs.)
 */
export class PodIpPool {
  private readonly used = new Set<number>();
  private next: number;

  constructor(random: () => number = Math.random) {
    this.next = Math.floor(random() * PodIpPool.SIZE) % PodIpPool.SIZE;
  }
  /** Each of the last three octets 1..254 (no .0 or .255). */
  private static readonly OCTET = 254;
  private static readonly SIZE = PodIpPool.OCTET ** 3;

  take(): string {
    for (let i = 0; i < PodIpPool.SIZE; i++) {
      const n = (this.next + i) % PodIpPool.SIZE;
      if (this.used.has(n)) continue;
      this.used.add(n);
      this.next = (n + 1) % PodIpPool.SIZE;
      return PodIpPool.format(n);
    }
    throw new Error('kubesim: no free pod IP left in 127.1.1.1-127.254.254.254');
  }

  release(ip: string): void {
    const m = /^127\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
    if (!m) return;
    const [a, b, c] = [Number(m[1]) - 1, Number(m[2]) - 1, Number(m[3]) - 1];
    this.used.delete((a * PodIpPool.OCTET + b) * PodIpPool.OCTET + c);
  }

  private static format(n: number): string {
    const o = PodIpPool.OCTET;
    return `127.${Math.floor(n / (o * o)) + 1}.${(Math.floor(n / o) % o) + 1}.${(n % o) + 1}`;
  }
}
