import type { EndpointSAML } from '../../api/schemas/modules/saml.js';
import type { EdgeRecord } from './edge-records.js';

type Generated = Pick<
  EndpointSAML,
  | 'entity_id'
  | 'assertion_consumer_service_url'
  | 'single_logout_url'
  | 'request_signing_certificate_pem'
  | 'metadata_url'
>;

/**
 * Public origin of an edge: its first hostport (port 443 left out). An edge with no hostports has
 * no public name yet, so a reserved `.invalid` name derived from its id stands in.
 */
export function edgeOrigin(edge: Pick<EdgeRecord, 'id' | 'hostports'>): { origin: string; host: string } {
  const first = edge.hostports[0];
  if (!first) {
    const host = `${edge.id.replace(/_/g, '-')}.edges.invalid`;
    return { origin: `https://${host}`, host };
  }
  const colon = first.lastIndexOf(':');
  const host = first.slice(0, colon);
  const port = first.slice(colon + 1);
  return { origin: port === '443' ? `https://${host}` : `https://${host}:${port}`, host };
}

/**
 * The service provider side of a SAML module, generated each time the module is set and stored
 * with it, so reads are stable: URLs under `/saml/<route id>/` on the edge's public origin and a
 * fresh self-signed request-signing certificate.
 */
export async function generateSamlServiceProvider(
  edge: Pick<EdgeRecord, 'id' | 'hostports'>,
  routeId: string,
  now: number,
): Promise<Generated> {
  const { origin, host } = edgeOrigin(edge);
  const base = `${origin}/saml/${routeId}`;
  const selfsigned = (await import('selfsigned')).default;
  const pems = await selfsigned.generate([{ name: 'commonName', value: host }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: new Date(now),
    notAfterDate: new Date(now + 10 * 365 * 24 * 3600 * 1000),
  });
  return {
    entity_id: `${base}/metadata`,
    metadata_url: `${base}/metadata`,
    assertion_consumer_service_url: `${base}/acs`,
    single_logout_url: `${base}/slo`,
    request_signing_certificate_pem: pems.cert,
  };
}
