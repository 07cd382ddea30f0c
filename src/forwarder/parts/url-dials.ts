import type { ListenerStatus } from '../listeners.js';
import type { DialResult, UrlHealthRecorder } from '../url-health.js';
import type { ForwarderBase } from './base.js';

type UrlDialLabels = { port: string; url: string; result: string };

/**
 * Each dial's outcome per port and URL: the data-path health `/status` reads, and the
 * `urlDials` series, removed with the listener that served them.
 */
export class UrlDials {
  /** Label sets of `urlDials` in use, so the series of a removed listener can be removed with it. */
  private readonly series = new Map<string, UrlDialLabels>();

  constructor(
    private readonly base: ForwarderBase,
    private readonly health: UrlHealthRecorder,
  ) {}

  observe(port: number, url: string, result: DialResult): void {
    const { metrics, clock } = this.base;
    this.health.record(url, result, clock.now());
    const outcome = result.ok ? 'ok' : (result.code ?? 'no_ingress');
    const key = `${port} ${outcome} ${url}`;
    const labels = (): UrlDialLabels => ({ port: String(port), url, result: outcome });
    if (!this.series.has(key)) this.series.set(key, labels());
    metrics.tally.urlDials.add(key, labels);
  }

  /** Forgets the health and the series of every port and URL no listener in `served` serves. */
  forgetRemoved(served: readonly ListenerStatus[]): void {
    const { metrics } = this.base;
    this.health.retain(served.map((l) => l.url));
    const live = new Set(served.map((l) => `${l.port} ${l.url}`));
    for (const [key, labels] of this.series) {
      if (live.has(`${labels.port} ${labels.url}`)) continue;
      metrics.tally.urlDials.drop((l) => l.port === labels.port && l.url === labels.url);
      metrics.urlDials.remove(labels);
      this.series.delete(key);
    }
  }
}
