import type { z } from 'zod';
import type { servicePortSchema } from '../resources/service-schema.js';
import { serviceSpecFullSchema } from '../resources/service-schema.js';
import type { KubeObject } from '../types.js';
import { parseIPv4 } from '../ipalloc.js';
import { field, goValue, type FieldError } from './field.js';
import { validateLabelMap } from './meta.js';
import { isDNS1123Label, isDNS1123Subdomain, isValidPortName, isValidPortNum } from './names.js';

/**
 * The Service rules of pkg/apis/core/validation (ValidateService / ValidateServiceUpdate) that
 * a controller can run into, with the real field paths and wording.
 */

export const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

/** The typed views come from the kind's one full schema (resources/service-schema.ts). */
export type ServiceSpec = z.infer<typeof serviceSpecFullSchema>;
export type ServicePort = z.infer<typeof servicePortSchema>;

/** The typed spec of an object that already passed decode. */
export function serviceSpec(obj: KubeObject): ServiceSpec {
  return serviceSpecFullSchema.parse(obj.spec ?? {});
}

/** ExternalName is the one type without a cluster IP (and hence without allocations). */
export function needsClusterIP(spec: ServiceSpec): boolean {
  return spec.type !== 'ExternalName';
}

export function needsNodePorts(spec: ServiceSpec): boolean {
  return spec.type === 'NodePort' || spec.type === 'LoadBalancer';
}

/** Go's %#v of the core.ServicePort key used for duplicate (port, protocol) detection. */
function renderPortKey(port: number, protocol: string): string {
  return (
    `core.ServicePort{Name:"", Protocol:${JSON.stringify(protocol)}, AppProtocol:(*string)(nil), Port:${port}, ` +
    `TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`
  );
}

export function validateServiceSpec(spec: ServiceSpec): FieldError[] {
  const errs: FieldError[] = [];
  const type = spec.type ?? 'ClusterIP';
  if (!SERVICE_TYPES.includes(type)) errs.push(field.notSupported('spec.type', type, SERVICE_TYPES));
  const ports = spec.ports ?? [];
  const headless = spec.clusterIP === 'None';

  if (type === 'ExternalName') {
    if ((spec.clusterIPs ?? []).length > 0 || (spec.clusterIP ?? '') !== '') {
      errs.push(field.forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
    }
    if ((spec.ipFamilies ?? []).length > 0) {
      errs.push(field.forbidden('spec.ipFamilies', 'may not be set for ExternalName services'));
    }
    if (spec.ipFamilyPolicy) {
      errs.push(field.forbidden('spec.ipFamilyPolicy', 'may not be set for ExternalName services'));
    }
    const ext = spec.externalName ?? '';
    const clean = ext.endsWith('.') ? ext.slice(0, -1) : ext;
    if (clean === '') errs.push(field.required('spec.externalName'));
    else for (const msg of isDNS1123Subdomain(clean)) errs.push(field.invalid('spec.externalName', ext, msg));
  } else {
    if (ports.length === 0 && !headless) errs.push(field.required('spec.ports'));
    const ips = spec.clusterIPs ?? [];
    if (ips.length > 1) {
      errs.push(
        field.invalid('spec.clusterIPs', ips, 'kubesim serves single-stack IPv4 only: at most one IP'),
      );
    }
    ips.forEach((ip, i) => {
      if (ip !== 'None' && parseIPv4(ip) === undefined) {
        errs.push(
          field.invalid(
            `spec.clusterIPs[${i}]`,
            ip,
            'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
          ),
        );
      }
    });
    if (spec.clusterIP !== undefined && ips[0] !== undefined && spec.clusterIP !== ips[0]) {
      errs.push(field.invalid('spec.clusterIPs[0]', ips, 'must match `clusterIP` if specified'));
    }
  }

  const requireName = ports.length > 1;
  const names = new Set<string>();
  const keys = new Set<string>();
  ports.forEach((p, i) => {
    const path = `spec.ports[${i}]`;
    const name = p.name ?? '';
    if (requireName && name === '') {
      errs.push(field.required(`${path}.name`));
    } else if (name !== '') {
      for (const msg of isDNS1123Label(name)) errs.push(field.invalid(`${path}.name`, name, msg));
      if (names.has(name)) errs.push(field.duplicate(`${path}.name`, goValue(name)));
      names.add(name);
    }
    const port = p.port ?? 0;
    for (const msg of isValidPortNum(port)) errs.push(field.invalid(`${path}.port`, port, msg));
    const protocol = p.protocol ?? '';
    if (!PROTOCOLS.includes(protocol)) errs.push(field.notSupported(`${path}.protocol`, protocol, PROTOCOLS));
    const tp = p.targetPort;
    if (typeof tp === 'number') {
      for (const msg of isValidPortNum(tp)) errs.push(field.invalid(`${path}.targetPort`, tp, msg));
    } else if (typeof tp === 'string') {
      for (const msg of isValidPortName(tp)) errs.push(field.invalid(`${path}.targetPort`, tp, msg));
    }
    if (type === 'ClusterIP' && p.nodePort !== undefined && p.nodePort !== 0) {
      errs.push(field.forbidden(`${path}.nodePort`, "may not be used when `type` is 'ClusterIP'"));
    }
    const key = `${port}/${protocol}`;
    if (keys.has(key)) errs.push(field.duplicate(path, renderPortKey(port, protocol)));
    keys.add(key);
  });

  const affinity = spec.sessionAffinity ?? 'None';
  if (!['ClientIP', 'None'].includes(affinity)) {
    errs.push(field.notSupported('spec.sessionAffinity', affinity, ['ClientIP', 'None']));
  }
  errs.push(...validateLabelMap(spec.selector, 'spec.selector'));
  return errs;
}

/** validateUpgradeDowngradeClusterIPs: the primary cluster IP may not change once set. */
export function validateServiceSpecUpdate(spec: ServiceSpec, old: ServiceSpec): FieldError[] {
  if (spec.type === 'ExternalName' || old.type === 'ExternalName') return [];
  const oldIPs = old.clusterIPs ?? [];
  const newIPs = spec.clusterIPs ?? [];
  if (oldIPs[0] === 'None' && newIPs[0] === 'None') return [];
  const errs: FieldError[] = [];
  oldIPs.forEach((ip, i) => {
    if (newIPs[i] !== undefined && newIPs[i] !== ip) {
      errs.push(field.invalid(`spec.clusterIPs[${i}]`, newIPs, 'may not change once set'));
    } else if (newIPs[i] === undefined && i === 0) {
      errs.push(field.invalid('spec.clusterIPs[0]', newIPs, 'may not change once set'));
    }
  });
  return errs;
}
