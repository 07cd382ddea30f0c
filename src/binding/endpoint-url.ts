/**
 * URL rules of cluster-bound endpoints (spec 2.5, rules 1–4; rule 5, account scoping, belongs to
 * the store). Pure: shared by the mock management API and the controller.
 *
 *   1. form `[http|tcp]://<name>.<namespace>[:<port>]`: no path, query, fragment or userinfo
 *   2. scheme `http` or `tcp` (`https`, `tls` and anything else are invalid)
 *   3. hostname of exactly two lower-case RFC 1123 labels (each at most 63), no wildcard
 *   4. port a whole number 1–65535, required for `tcp`, default 80 for `http`
 *
 * Case: the parser does not lower-case anything. An upper-case scheme fails rule 2 and an
 * upper-case hostname fails rule 3, because Kubernetes object names are lower-case and silently
 * folding case would make two spellings of one URL look different to users.
 * Ports are written without leading zeros (`:080` fails rule 4), so every URL has one spelling.
 */

export type EndpointScheme = 'http' | 'tcp';
export type EndpointUrlRule = 1 | 2 | 3 | 4;

export interface EndpointUrl {
  scheme: EndpointScheme;
  /** First hostname label: the alias Service's name. */
  name: string;
  /** Second hostname label: the alias Service's namespace. */
  namespace: string;
  /** `name.namespace` */
  host: string;
  port: number;
  /** `name.namespace:port` */
  hostport: string;
  /** Canonical form, always with the port: `scheme://name.namespace:port`. */
  url: string;
}

export type EndpointUrlResult =
  { ok: true; value: EndpointUrl } | { ok: false; rule: EndpointUrlRule; message: string };

export const DEFAULT_HTTP_PORT = 80;
export const MAX_LABEL_LENGTH = 63;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/s;

function fail(rule: EndpointUrlRule, message: string): EndpointUrlResult {
  return { ok: false, rule, message: `rule ${rule}: ${message}` };
}

/** True when `value` is a lower-case RFC 1123 label of at most 63 characters. */
export function isDnsLabel(value: string): boolean {
  return value.length <= MAX_LABEL_LENGTH && LABEL.test(value);
}

function checkLabel(label: string, which: string): EndpointUrlResult | undefined {
  if (label.includes('*')) return fail(3, `wildcards are not allowed in the hostname`);
  if (label.length === 0) return fail(3, `the ${which} part of the hostname is empty`);
  if (label.length > MAX_LABEL_LENGTH) {
    return fail(3, `the ${which} part "${label}" is longer than ${MAX_LABEL_LENGTH} characters`);
  }
  if (!LABEL.test(label)) {
    return fail(
      3,
      `the ${which} part "${label}" must be a lower-case RFC 1123 label (a-z, 0-9, "-", starting and ending alphanumeric)`,
    );
  }
  return undefined;
}

/** Parses and validates a cluster-bound endpoint URL, naming the first rule it breaks. */
export function parseEndpointUrl(input: string): EndpointUrlResult {
  const form = 'the URL must have the form [http|tcp]://<name>.<namespace>[:<port>]';
  const m = SCHEME.exec(input);
  if (!m) return fail(1, `${form}; "${input}" has no scheme`);
  const scheme = m[1]!;
  const rest = m[2]!;
  if (scheme !== 'http' && scheme !== 'tcp') {
    return fail(2, `the scheme must be "http" or "tcp", got "${scheme}"`);
  }
  if (/[/?#]/.test(rest)) return fail(1, `${form}; a path, query or fragment is not allowed`);
  if (rest.includes('@')) return fail(1, `${form}; user information is not allowed`);
  if (/\s/.test(rest)) return fail(1, `${form}; white space is not allowed`);
  const hp = /^([^:]*)(?::([^:]*))?$/.exec(rest);
  if (!hp) return fail(1, `${form}; the authority has more than one ":"`);
  const host = hp[1]!;
  const rawPort = hp[2];

  if (host.length === 0) return fail(3, 'the hostname is empty');
  if (host.includes('*')) return fail(3, 'wildcards are not allowed in the hostname');
  const labels = host.split('.');
  if (labels.length !== 2) {
    return fail(
      3,
      `the hostname must have exactly two parts separated by a single dot (<name>.<namespace>), "${host}" has ${labels.length}`,
    );
  }
  const [name, namespace] = labels as [string, string];
  const bad = checkLabel(name, 'name') ?? checkLabel(namespace, 'namespace');
  if (bad) return bad;

  let port: number;
  if (rawPort === undefined) {
    if (scheme === 'tcp') return fail(4, 'a tcp URL must specify a port');
    port = DEFAULT_HTTP_PORT;
  } else {
    if (!/^[1-9][0-9]{0,4}$/.test(rawPort) || Number(rawPort) > 65535) {
      return fail(4, `the port must be a whole number from 1 to 65535, got "${rawPort}"`);
    }
    port = Number(rawPort);
  }
  const hostName = `${name}.${namespace}`;
  return {
    ok: true,
    value: {
      scheme,
      name,
      namespace,
      host: hostName,
      port,
      hostport: `${hostName}:${port}`,
      url: `${scheme}://${hostName}:${port}`,
    },
  };
}

/** The canonical form of a valid URL, or undefined when it breaks a rule. */
export function canonicalEndpointUrl(input: string): string | undefined {
  const r = parseEndpointUrl(input);
  return r.ok ? r.value.url : undefined;
}

/** Where an endpoint's traffic goes: the account's app, reached over plain TCP. */
export interface UpstreamUrl {
  scheme: EndpointScheme;
  /** Host name or IP address; IPv6 addresses without brackets. */
  host: string;
  port: number;
}

const UPSTREAM =
  /^(http|tcp):\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::([0-9]{1,5}))?\/?$/;

/**
 * Parses an endpoint's `upstream_url`: `http://<host>[:<port>]` (default 80) or
 * `tcp://<host>:<port>`; a trailing "/" is tolerated, any other path, a query or userinfo is not.
 */
export function parseUpstreamUrl(
  input: string,
): { ok: true; value: UpstreamUrl } | { ok: false; message: string } {
  const m = UPSTREAM.exec(input);
  if (!m) {
    return {
      ok: false,
      message: `must be http://<host>[:<port>] or tcp://<host>:<port> with no path, query or userinfo, got "${input}"`,
    };
  }
  const scheme = m[1] as EndpointScheme;
  const rawHost = m[2]!;
  const rawPort = m[3];
  if (rawPort === undefined && scheme === 'tcp')
    return { ok: false, message: 'a tcp upstream must specify a port' };
  const port = rawPort === undefined ? DEFAULT_HTTP_PORT : Number(rawPort);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    return { ok: false, message: `the port must be a whole number from 1 to 65535, got "${rawPort}"` };
  }
  const host = rawHost.startsWith('[') ? rawHost.slice(1, -1) : rawHost;
  return { ok: true, value: { scheme, host, port } };
}
