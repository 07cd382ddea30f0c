import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case: sorts like time
const RANDOM_MASK = (1n << 80n) - 1n;

function encode(value: bigint, length: number): string {
  let out = '';
  let v = value;
  for (let i = 0; i < length; i++) {
    out = ALPHABET[Number(v & 31n)]! + out;
    v >>= 5n;
  }
  return out;
}

/**
 * Mints ids as `<prefix><26 chars>`: 10 characters of milliseconds and 16 of randomness, so ids
 * sort by creation time as strings. Within one millisecond the random part is incremented, which
 * keeps "newest first" ordering exact even for ids minted in a burst.
 */
export class IdMinter {
  private lastMs = -1;
  private lastRandom = 0n;

  constructor(private readonly now: () => number = Date.now) {}

  suffix(): string {
    const ms = Math.max(this.now(), this.lastMs);
    if (ms === this.lastMs) {
      this.lastRandom = (this.lastRandom + 1n) & RANDOM_MASK;
    } else {
      this.lastMs = ms;
      this.lastRandom = BigInt('0x' + randomBytes(10).toString('hex')) >> 1n; // headroom for increments
    }
    return encode(BigInt(ms), 10) + encode(this.lastRandom, 16);
  }

  mint(prefix: string): string {
    return prefix + this.suffix();
  }
}
