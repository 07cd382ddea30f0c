import { deletingReason, isDeleting } from '../binding/plan.js';
import { keyOf, type Cache, type Service } from '../kube/index.js';

export interface DeletingService {
  namespace: string;
  name: string;
  reason: string;
}

/**
 * The Services of this install the cache shows as being deleted, kept up to date from the cache's
 * events: `/status` is asked often (and polled by tools), and walking 20,000 cached Services per
 * request to find the few held by a finalizer cost more than the pass itself.
 */
export interface DeletingServices {
  list(): DeletingService[];
}

export function trackDeletingServices(services: Cache<Service>): DeletingServices {
  const held = new Map<string, Service>();
  let listed: DeletingService[] | undefined = [];
  const put = (svc: Service): void => {
    const key = keyOf(svc);
    if (isDeleting(svc)) held.set(key, svc);
    else if (!held.delete(key)) return;
    listed = undefined;
  };
  services.on('add', put);
  services.on('update', (_old, svc) => put(svc));
  services.on('delete', (svc) => {
    if (held.delete(keyOf(svc))) listed = undefined;
  });
  return {
    list() {
      listed ??= [...held.values()].map((svc) => ({
        namespace: svc.metadata.namespace ?? '',
        name: svc.metadata.name,
        reason: deletingReason(svc),
      }));
      return listed.map((d) => ({ ...d }));
    },
  };
}
