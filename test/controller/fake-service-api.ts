import type { ServiceApi } from '../../src/controller/apply.js';
import { errorFromStatus, type KubeApiError } from '../../src/kube/errors.js';
import type { Service } from '../../src/kube/objects.js';

export type Verb = 'get' | 'create' | 'replace' | 'delete';

/** A Status body as kube-apiserver sends it, turned into the error our transport throws for it. */
export function apiError(code: number, reason: string, message: string, name: string): KubeApiError {
  return errorFromStatus({
    kind: 'Status',
    status: 'Failure',
    message,
    reason,
    code,
    details: { name, kind: 'services' },
  });
}

export const errors = {
  alreadyExists: (name: string) => apiError(409, 'AlreadyExists', `services "${name}" already exists`, name),
  conflict: (name: string) =>
    apiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on services "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      name,
    ),
  notFound: (name: string) => apiError(404, 'NotFound', `services "${name}" not found`, name),
  forbidden: (name: string, verb: Verb, namespace: string) =>
    apiError(
      403,
      'Forbidden',
      `services "${name}" is forbidden: User "system:serviceaccount:ops:endpoint-binder" cannot ${verb === 'replace' ? 'update' : verb} resource "services" in API group "" in the namespace "${namespace}"`,
      name,
    ),
  internal: (name: string) =>
    apiError(500, 'InternalError', 'Internal error occurred: etcdserver: request timed out', name),
};

/**
 * An in-memory Services API with kube-apiserver's rules for the cases the writer meets: unique
 * names (AlreadyExists), resourceVersion preconditions on update (Conflict), uid preconditions
 * on delete (Conflict), NotFound, server-set fields (uid, resourceVersion, clusterIP) kept, plus
 * injected failures (Forbidden, a 500) and a hook to let "someone else" write just before a
 * request is served.
 */
export class FakeServiceApi implements ServiceApi {
  private readonly objects = new Map<string, Service>();
  private rv = 100;
  private uids = 0;
  /** Every request, as `verb ns/name`. */
  readonly requests: string[] = [];
  private readonly failures: { verb: Verb; key?: string; error: (name: string, ns: string) => Error }[] = [];
  /** Runs before each request is served. */
  before: ((verb: Verb, key: string) => void) | undefined;
  /** While set, every request it answers true for fails with Forbidden. */
  forbid: ((verb: Verb, key: string) => boolean) | undefined;

  /** Stores an object as another writer would (server fields stamped). */
  put(svc: Service): Service {
    const key = `${svc.metadata.namespace}/${svc.metadata.name}`;
    const prev = this.objects.get(key);
    const stored: Service = structuredClone(svc);
    stored.metadata.uid = prev?.metadata.uid ?? `uid-${++this.uids}`;
    stored.metadata.resourceVersion = String(++this.rv);
    if (stored.spec?.type !== 'ExternalName')
      stored.spec = { ...stored.spec, clusterIP: prev?.spec?.clusterIP ?? `10.0.0.${this.uids}` };
    this.objects.set(key, stored);
    return structuredClone(stored);
  }

  remove(key: string): void {
    this.objects.delete(key);
  }

  /** Every object held, as a list of the API would return them. */
  list(): Service[] {
    return [...this.objects.values()].map((o) => structuredClone(o));
  }

  /** The resourceVersion of the last write (what a watch current to this store is at). */
  get resourceVersion(): string {
    return String(this.rv);
  }

  read(key: string): Service | undefined {
    const o = this.objects.get(key);
    return o ? structuredClone(o) : undefined;
  }

  /** The next request of `verb` (on `key`, when given) fails with `error`. */
  failNext(verb: Verb, error: 'forbidden' | 'internal' | 'conflict', key?: string): void {
    this.failures.push({
      verb,
      ...(key ? { key } : {}),
      error: (name, ns) =>
        error === 'forbidden'
          ? errors.forbidden(name, verb, ns)
          : error === 'internal'
            ? errors.internal(name)
            : errors.conflict(name),
    });
  }

  private enter(verb: Verb, namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    this.requests.push(`${verb} ${key}`);
    this.before?.(verb, key);
    if (this.forbid?.(verb, key)) throw errors.forbidden(name, verb, namespace);
    const i = this.failures.findIndex((f) => f.verb === verb && (f.key === undefined || f.key === key));
    if (i >= 0) {
      const [f] = this.failures.splice(i, 1);
      throw f!.error(name, namespace);
    }
  }

  async get(namespace: string, name: string): Promise<Service | undefined> {
    this.enter('get', namespace, name);
    return this.read(`${namespace}/${name}`);
  }

  async create(svc: Service): Promise<Service> {
    const { namespace, name } = svc.metadata;
    this.enter('create', namespace!, name);
    if (this.objects.has(`${namespace}/${name}`)) throw errors.alreadyExists(name);
    const { resourceVersion: _rv, ...metadata } = svc.metadata;
    return this.put({ ...svc, metadata });
  }

  async replace(svc: Service): Promise<Service> {
    const { namespace, name } = svc.metadata;
    this.enter('replace', namespace!, name);
    const live = this.objects.get(`${namespace}/${name}`);
    if (!live) throw errors.notFound(name);
    if (svc.metadata.resourceVersion !== live.metadata.resourceVersion) throw errors.conflict(name);
    return this.put(svc);
  }

  async delete(namespace: string, name: string, uid: string | undefined): Promise<boolean> {
    this.enter('delete', namespace, name);
    const key = `${namespace}/${name}`;
    const live = this.objects.get(key);
    if (!live) return false;
    if (uid !== undefined && uid !== live.metadata.uid) {
      throw apiError(
        409,
        'Conflict',
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${live.metadata.uid}`,
        name,
      );
    }
    this.objects.delete(key);
    return true;
  }
}
