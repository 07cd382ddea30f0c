import { objectRef, type ConfigMap, type EventRecorder } from '../../kube/index.js';
import { parseHostPort } from '../../net/host-port.js';
import { resolveIngressAddress, type IngressAddress, type IngressPin } from '../ingress-address.js';
import type { ForwarderBase } from './base.js';

/**
 * A record that names another destination than the pinned one is refused: the forwarder keeps
 * the address it started with (when it has one) and says what it refused; else it has none.
 */
function keepPinned(current: IngressAddress, next: IngressAddress): IngressAddress {
  if (next.refused === undefined || next.address !== undefined) return next;
  return current.address
    ? { ...current, refused: next.refused, ...(next.refusal ? { refusal: next.refusal } : {}) }
    : { ...next, ...(next.refusal ? { problem: next.refusal } : {}) };
}

/**
 * Where every new connection (and so the authtoken) goes: the ingress address from the config or
 * the install record, never from a Service (ingress-address.ts decides). It logs a new or changed
 * address and a missing one, and warns once per value (log, gauge, Event) when the record names
 * another destination than the pinned one.
 */
export class IngressDestination {
  private address: IngressAddress = {
    address: undefined,
    source: 'none',
    problem: 'install record not read yet',
  };
  private read = false;
  /** The ingress's identity when nothing in the config pins it: the first record's host. */
  private readonly pin: IngressPin = {};
  private lastProblem: string | undefined;
  private lastRefused: string | undefined;

  constructor(
    private readonly base: ForwarderBase,
    private readonly events: EventRecorder,
  ) {}

  /** The address in use and where it came from. */
  get current(): IngressAddress {
    return this.address;
  }

  /** Whether the install record has been read once (before that, no address is a fact yet). */
  get recordRead(): boolean {
    return this.read;
  }

  /** True when `ingress.address` or `ingress.serverName` says which ingress is meant. */
  get pinnedByConfig(): boolean {
    const { ingress } = this.base.config;
    return ingress.address !== undefined || ingress.serverName !== undefined;
  }

  /** Takes the install record as the cache shows it now (undefined: there is none). */
  update(record: ConfigMap | undefined): void {
    const { config, identity, log } = this.base;
    this.read = true;
    const previous = this.address;
    const next = keepPinned(
      previous,
      resolveIngressAddress(config.ingress.address, record, identity, {
        plainTcp: !config.ingress.tls,
        pin: this.pin,
      }),
    );
    if (
      next.source === 'install-record' &&
      next.address &&
      !this.pinnedByConfig &&
      this.pin.learnedHost === undefined
    )
      this.pin.learnedHost = parseHostPort(next.address).host;
    this.noteRefusal(next, record);
    if (next.address !== previous.address) {
      const fields = {
        address: next.address ?? null,
        previous: previous.address ?? null,
        source: next.source,
        ...(next.operatorId ? { operator_id: next.operatorId } : {}),
      };
      // The first address is news; a change of it sends every new connection (and the token) elsewhere.
      if (previous.address === undefined) log.info(fields, 'forwarder ingress address');
      else log.warn(fields, 'forwarder ingress address changed');
    }
    if (next.problem !== undefined && next.problem !== this.lastProblem)
      log.warn({ problem: next.problem }, 'forwarder has no ingress address');
    this.lastProblem = next.problem;
    this.address = next;
  }

  /** A record naming another destination than the pinned one: a warning, a gauge and an Event, once per value. */
  private noteRefusal(next: IngressAddress, record: ConfigMap | undefined): void {
    const { metrics, log } = this.base;
    metrics.ingressRecordRefused.set(next.refused !== undefined ? 1 : 0);
    if (next.refused === this.lastRefused) return;
    this.lastRefused = next.refused;
    if (next.refused === undefined) return;
    log.warn(
      { record_address: next.refused, address: next.address ?? null, problem: next.refusal },
      'forwarder install record names another ingress',
    );
    if (record)
      this.events.warning(objectRef(record, 'ConfigMap', 'v1'), 'IngressRecordRefused', next.refusal ?? '');
  }
}
