import type { IngressRoute } from '../connection.js';
import type { OpenRequest } from '../ingress-opener.js';
import type { IngressChecks } from './ingress-checks.js';
import type { IngressDestination } from './ingress-destination.js';
import type { IngressDials } from './ingress-dials.js';

/**
 * The ingress a new client connection dials, read when its dial starts (undefined while no
 * address is known): the destination of the moment, the authtoken of the moment, and every
 * outcome handed to the checks.
 */
export function ingressRoute(
  destination: IngressDestination,
  dials: IngressDials,
  checks: IngressChecks,
): () => IngressRoute | undefined {
  return () => {
    const address = destination.current.address;
    if (!address) return undefined;
    return {
      address,
      async open(url, source, timeoutMs, signal, onTransportUp) {
        const token = checks.authtoken.token;
        const request: OpenRequest = {
          address,
          authtoken: token,
          url,
          source: source?.ip ? { ip: source.ip } : undefined,
          timeoutMs,
          signal,
          ...(onTransportUp ? { onTransportUp } : {}),
        };
        try {
          const upstream = await dials.open(request);
          // v2 hands the stream over before the ingress answered: judge its answer when it comes.
          upstream.confirmed.then(
            () => checks.judgeOk(token),
            (err: unknown) => checks.judgeFailure(token, address, err),
          );
          return upstream;
        } catch (err) {
          checks.judgeFailure(token, address, err);
          throw err;
        }
      },
    };
  };
}
