import { NO_H2 } from '../api/ingress/v2-dialer.js';
import type { IngressProtocolSetting } from '../forwarder/config.js';
import type { IngressProtocol } from '../forwarder/upstream.js';
import { codeTitle } from '../forwarder/url-health.js';
import { fail, pass, skipped, type CheckResult } from './result.js';

/**
 * What `check` concludes about the binding ingress from one dial made the way the forwarder dials
 * (pure). Two lines: the ingress reachable with TLS verified and the authtoken accepted, in the
 * protocol the forwarder would speak (v2 or v1), and, with `--endpoint`, the ingress's answer for
 * one endpoint.
 */

export const INGRESS_CHECK_ID = 'ingress';
export const ENDPOINT_CHECK_ID = 'ingress.endpoint';

/** Where the dial went: the address and whether TLS was used (plain TCP only to a loopback ingress). */
export interface IngressTarget {
  address: string;
  /** `config` (ingress.address) or `install-record` (the ConfigMap the controller writes). */
  source: 'config' | 'install-record';
  tls: boolean;
}

/** How one dial through the ingress ended. */
export type DialSeen =
  | { ok: true }
  | {
      ok: false;
      /** ERR_7xx the ingress answered, or ERR_79x the dialer observed. */
      code: string;
      msg: string;
    };

/** The protocol asked for (ingress.protocol) and the one the dial spoke. */
export interface ProtocolSeen {
  setting: IngressProtocolSetting;
  used: IngressProtocol;
}

export type IngressSeen =
  /** Nothing was dialled: settings missing (`skip`) or wrong (`problem`). */
  | { kind: 'skip'; because: string }
  | { kind: 'problem'; problem: string }
  | { kind: 'dialled'; target: IngressTarget; seen: DialSeen; protocol: ProtocolSeen };

/** `v2 (h2)`, `v1 (the ingress offered no h2)`, `v1 (ingress.protocol: v1)`. */
export function protocolLabel(p: ProtocolSeen, tls: boolean): string {
  if (p.used === 'v2') return tls ? 'v2 (h2)' : 'v2 (h2c)';
  return p.setting === 'v1' ? 'v1 (ingress.protocol: v1)' : 'v1 (the ingress offered no h2)';
}

function ingressTitle(target?: IngressTarget, protocol?: ProtocolSeen): string {
  if (!target) return 'binding ingress reachable with TLS and the authtoken accepted';
  const over = protocol ? `, over ${protocolLabel(protocol, target.tls)}` : '';
  return target.tls
    ? `binding ingress reachable at ${target.address} with TLS and the authtoken accepted${over}`
    : `binding ingress reachable at ${target.address} (plain TCP, loopback) and the authtoken accepted${over}`;
}

/** `ERR_730: The endpoint's upstream refused the connection. (upstream 127.0.0.1:1 refused ...)` */
export function describeCode(code: string, msg: string): string {
  const title = codeTitle(code);
  if (!title) return `${code}: ${msg}`;
  return msg && msg !== title ? `${code}: ${title} (${msg})` : `${code}: ${title}`;
}

const settingOf = (t: IngressTarget): string =>
  t.source === 'config'
    ? 'ingress.address (--ingress-address)'
    : "the install record's ingress-address (the registration's binding ingress)";

/** The fix for a dial that did not reach a verdict on the authtoken. */
function transportFix(code: string, t: IngressTarget): string {
  switch (code) {
    case 'ERR_796':
      return t.tls
        ? 'set ingress.tls to false for a plain loopback ingress, or point ingress.address at its TLS port'
        : "set ingress.tls to true (the chart's bindings.ingress.tls)";
    case 'ERR_795':
      return 'set ingress.caFile (--ingress-ca-file) to the CA that signed the ingress certificate, or ingress.serverName to the name it carries';
    case 'ERR_793':
      return `check ${settingOf(t)} and that this host can reach it`;
    case 'ERR_790':
      return t.tls
        ? 'the ingress closed the connection; if it does not speak TLS on this port, check ingress.tls and the address'
        : 'the ingress closed the connection; if it speaks TLS, set ingress.tls: true';
    case 'ERR_791':
      return `the ingress did not answer in time; check ${settingOf(t)}`;
    default:
      return `check ${settingOf(t)}`;
  }
}

/** The ingress line. Any ingress answer but ERR_710 means the authtoken was accepted. */
export function ingressCheck(seen: IngressSeen): CheckResult {
  if (seen.kind === 'skip') return skipped(INGRESS_CHECK_ID, ingressTitle(), seen.because);
  if (seen.kind === 'problem') return fail(INGRESS_CHECK_ID, ingressTitle(), seen.problem);
  const { target, seen: d, protocol } = seen;
  // The protocol is a fact only once the ingress answered on it.
  const answered = d.ok || !/^ERR_79\d$/.test(d.code);
  const title = ingressTitle(target, answered ? protocol : undefined);
  if (!d.ok && d.code === NO_H2 && protocol.setting === 'v2')
    return fail(INGRESS_CHECK_ID, title, noH2Fix(d.msg));
  if (d.ok || (d.code !== 'ERR_710' && !/^ERR_79\d$/.test(d.code))) return pass(INGRESS_CHECK_ID, title);
  if (d.code === 'ERR_710') {
    return fail(
      INGRESS_CHECK_ID,
      title,
      `${describeCode(d.code, d.msg)}; put a valid agent authtoken in the Secret's AUTHTOKEN key (authtokenFile) or ENDPOINT_BINDER_AUTHTOKEN`,
    );
  }
  return fail(INGRESS_CHECK_ID, title, `${describeCode(d.code, d.msg)}; ${transportFix(d.code, target)}`);
}

/** ingress.protocol forces v2 and the ingress offers no HTTP/2: the one setting to change. */
function noH2Fix(msg: string): string {
  return `${describeCode(NO_H2, msg)}; ingress.protocol is v2 (the chart's forwarder.ingressProtocol) but this ingress offers no HTTP/2: set it to auto (v2 when offered, else v1) or v1`;
}

/** The endpoint the user named, resolved to the URL the ingress is asked for. */
export type EndpointTarget = { id?: string; url: string };

function endpointTitle(label: string): string {
  return `one connection through the ingress to ${label} answered ok`;
}

const ENDPOINT_FIX: Record<string, string> = {
  ERR_720: 'the URL is not a cluster-bound endpoint URL (scheme://name.namespace:port)',
  ERR_721:
    "no endpoint with this URL in the authtoken's account; `endpoint-binder status` lists the endpoints",
  ERR_722: 'give the endpoint an upstream_url (an agent serving it)',
  ERR_730: "start the endpoint's upstream or fix its upstream_url",
  ERR_731: "the upstream did not answer: check the upstream_url's host and that the ingress can reach it",
};

/** The `--endpoint` line: the ingress's answer for that endpoint's URL. */
export function endpointCheck(
  requested: string,
  seen:
    | { kind: 'skip'; because: string }
    | { kind: 'unknown'; problem: string }
    | { kind: 'dialled'; endpoint: EndpointTarget; seen: DialSeen },
): CheckResult {
  if (seen.kind === 'skip') return skipped(ENDPOINT_CHECK_ID, endpointTitle(requested), seen.because);
  if (seen.kind === 'unknown') return fail(ENDPOINT_CHECK_ID, endpointTitle(requested), seen.problem);
  const e = seen.endpoint;
  const title = endpointTitle(e.id ? `endpoint ${e.id} (${e.url})` : e.url);
  if (seen.seen.ok) return pass(ENDPOINT_CHECK_ID, title);
  const { code, msg } = seen.seen;
  const fix = ENDPOINT_FIX[code] ?? 'see docs/errors.md for this code';
  const who = /^ERR_79\d$/.test(code) ? 'the dial failed' : 'the ingress answered';
  return fail(ENDPOINT_CHECK_ID, title, `${who} ${describeCode(code, msg)}; ${fix}`);
}
