import type { IpAllocator, PortAllocator } from '../ipalloc.js';
import { errors } from '../status.js';
import { field, invalidError, type FieldError } from '../validation/field.js';
import { isDNS1035Label } from '../validation/names.js';
import {
  needsClusterIP,
  needsNodePorts,
  serviceSpec,
  validateServiceSpec,
  validateServiceSpecUpdate,
  type ServiceSpec,
} from '../validation/service.js';
import { decodeWith } from './decode.js';
import { serviceObjectSchema } from './service-schema.js';
import { META_FIELD_LABELS, type ResourceDef } from './registry.js';

/** Defaulting as SetDefaults_Service / SetDefaults_ServicePort do it. */
function applyDefaults(spec: ServiceSpec): void {
  spec.type ??= 'ClusterIP';
  spec.sessionAffinity ??= 'None';
  for (const p of spec.ports ?? []) {
    p.protocol ??= 'TCP';
    if (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port;
  }
  if (spec.clusterIP !== undefined && spec.clusterIP !== '' && spec.clusterIPs === undefined) {
    spec.clusterIPs = [spec.clusterIP];
  }
  if (spec.clusterIPs?.[0] !== undefined && !spec.clusterIP) spec.clusterIP = spec.clusterIPs[0];
  if (spec.type !== 'ExternalName') {
    spec.internalTrafficPolicy ??= 'Cluster';
  }
  if (needsNodePorts(spec)) spec.externalTrafficPolicy ??= 'Cluster';
}

function sameIPs(a: ServiceSpec, b: ServiceSpec): boolean {
  return (
    (a.clusterIP ?? '') === (b.clusterIP ?? '') &&
    JSON.stringify(a.clusterIPs ?? []) === JSON.stringify(b.clusterIPs ?? [])
  );
}

/**
 * PrepareForUpdate's helpers since Kubernetes 1.20: an update that omits allocated values keeps
 * them (patchAllocatedValues), and a switch to ExternalName that left the old cluster IP in
 * place has it wiped instead of rejected (dropTypeDependentFields).
 */
function prepareUpdate(spec: ServiceSpec, old: ServiceSpec): void {
  if (needsClusterIP(old) && needsClusterIP(spec)) {
    if (!spec.clusterIP && !spec.clusterIPs?.length) {
      if (old.clusterIP !== undefined) spec.clusterIP = old.clusterIP;
      if (old.clusterIPs !== undefined) spec.clusterIPs = [...old.clusterIPs];
    }
    spec.ipFamilies ??= old.ipFamilies;
    spec.ipFamilyPolicy ??= old.ipFamilyPolicy;
  }
  if (needsNodePorts(old) && needsNodePorts(spec)) {
    for (const p of spec.ports ?? []) {
      if (p.nodePort) continue;
      const match = old.ports?.find(
        (o) => o.port === p.port && (o.protocol ?? 'TCP') === (p.protocol ?? 'TCP'),
      );
      if (match?.nodePort) p.nodePort = match.nodePort;
    }
  }
  if (needsClusterIP(old) && !needsClusterIP(spec)) {
    if (sameIPs(old, spec)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (JSON.stringify(old.ipFamilies) === JSON.stringify(spec.ipFamilies)) delete spec.ipFamilies;
    if (old.ipFamilyPolicy === spec.ipFamilyPolicy) delete spec.ipFamilyPolicy;
    if (old.internalTrafficPolicy === spec.internalTrafficPolicy) delete spec.internalTrafficPolicy;
  }
  if (needsNodePorts(old) && !needsNodePorts(spec)) {
    for (const p of spec.ports ?? []) {
      const o = old.ports?.find((x) => x.port === p.port);
      if (o && o.nodePort === p.nodePort) delete p.nodePort;
    }
    if (old.externalTrafficPolicy === spec.externalTrafficPolicy) delete spec.externalTrafficPolicy;
  }
}

function heldIP(spec: ServiceSpec): string | undefined {
  return needsClusterIP(spec) && spec.clusterIP && spec.clusterIP !== 'None' ? spec.clusterIP : undefined;
}

function heldNodePorts(spec: ServiceSpec): number[] {
  if (!needsNodePorts(spec)) return [];
  return (spec.ports ?? []).map((p) => p.nodePort ?? 0).filter((n) => n > 0);
}

export function serviceResource(ips: IpAllocator, nodePorts: PortAllocator): ResourceDef {
  return {
    group: '',
    version: 'v1',
    kind: 'Service',
    listKind: 'ServiceList',
    plural: 'services',
    singular: 'service',
    shortNames: ['svc'],
    namespaced: true,
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    // pkg/registry/core/service/strategy.go: both true; Services have no metadata.generation.
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    tracksGeneration: false,
    mergeKeys: { 'spec.ports': 'port' },
    nameRule: isDNS1035Label,
    schema: serviceObjectSchema,
    decode: (obj) => decodeWith(serviceObjectSchema, obj, 'Service', 'v1'),
    prepare(obj, old) {
      const spec = serviceSpec(obj);
      applyDefaults(spec);
      if (old) prepareUpdate(spec, serviceSpec(old));
      obj.spec = spec;
      // Status is owned by the status subresource; a spec write keeps the stored one.
      obj.status = old?.status ?? { loadBalancer: {} };
    },
    validate(obj, old) {
      const spec = serviceSpec(obj);
      const errs: FieldError[] = validateServiceSpec(spec);
      if (old) errs.push(...validateServiceSpecUpdate(spec, serviceSpec(old)));
      return errs;
    },
    beforeCommit(obj, old) {
      const spec = serviceSpec(obj);
      const oldSpec = old ? serviceSpec(old) : undefined;
      const undo: (() => void)[] = [];
      const fail = (errs: FieldError[]): never => {
        for (const u of undo) u();
        throw invalidError('', 'Service', obj.metadata.name, errs);
      };
      if (needsClusterIP(spec) && (!oldSpec || !needsClusterIP(oldSpec))) {
        if (!spec.clusterIP) {
          const ip = ips.allocateNext();
          if (!ip) throw errors.internal('failed to allocate a serviceIP: range is full');
          undo.push(() => ips.release(ip));
          spec.clusterIP = ip;
          spec.clusterIPs = [ip];
        } else if (spec.clusterIP !== 'None') {
          const ip = spec.clusterIP;
          const res = ips.allocate(ip);
          if (!res.ok) fail([field.invalid('spec.clusterIPs', [ip], res.reason)]);
          undo.push(() => ips.release(ip));
        }
        spec.ipFamilies ??= ['IPv4'];
        spec.ipFamilyPolicy ??= 'SingleStack';
      }
      if (needsNodePorts(spec)) {
        const oldHeld = new Set(oldSpec ? heldNodePorts(oldSpec) : []);
        (spec.ports ?? []).forEach((p, i) => {
          if (p.nodePort && oldHeld.has(p.nodePort)) return;
          if (p.nodePort) {
            const port = p.nodePort;
            const why = nodePorts.allocate(port);
            if (why) fail([field.invalid(`spec.ports[${i}].nodePort`, port, why)]);
            undo.push(() => nodePorts.release(port));
          } else {
            const port = nodePorts.allocateNext();
            if (port === undefined) fail([field.invalid(`spec.ports[${i}].nodePort`, 0, 'range is full')]);
            else {
              p.nodePort = port;
              undo.push(() => nodePorts.release(port));
            }
          }
        });
      }
      obj.spec = spec;
    },
    afterUpdate(obj, old) {
      const spec = serviceSpec(obj);
      const oldSpec = serviceSpec(old);
      const oldIP = heldIP(oldSpec);
      if (oldIP && oldIP !== heldIP(spec)) ips.release(oldIP);
      const keep = new Set(heldNodePorts(spec));
      for (const p of heldNodePorts(oldSpec)) if (!keep.has(p)) nodePorts.release(p);
    },
    afterDelete(obj) {
      const spec = serviceSpec(obj);
      const ip = heldIP(spec);
      if (ip) ips.release(ip);
      for (const p of heldNodePorts(spec)) nodePorts.release(p);
    },
    categories: ['all'],
    fieldLabels: {
      ...META_FIELD_LABELS,
      'spec.clusterIP': (o) => serviceSpec(o).clusterIP ?? '',
      'spec.type': (o) => serviceSpec(o).type ?? '',
    },
  };
}
