/**
 * Reports each key once while it stays present: every pass hands in what it sees now, keys seen
 * before are not reported again, and a key that went and came back is reported again. (A log line
 * per pass for a Service left alone on purpose would bury everything else.)
 */
export class ReportedOnce<T> {
  private reported = new Set<string>();

  constructor(private readonly report: (key: string, item: T) => void) {}

  seen(items: Iterable<readonly [string, T]>): void {
    const now = new Set<string>();
    for (const [key, item] of items) {
      now.add(key);
      if (!this.reported.has(key)) this.report(key, item);
    }
    this.reported = now;
  }
}
