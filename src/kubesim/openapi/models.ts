import { z } from 'zod';

/**
 * The published API types of the kinds kubesim stores, as zod schemas registered under their
 * OpenAPI names (io.k8s.api.core.v1.Service, ...). They describe the full field set a real
 * server documents, not just what kubesim checks, because kubectl computes strategic merge
 * patches from these documents and warns about any field it cannot find in them. The request
 * decoders in resources/ stay lenient; test/kubesim/openapi.test.ts checks that every field they
 * know is documented here.
 */

export interface ModelMeta {
  id: string;
  description?: string;
  /** Kinds this schema is the top-level object of: x-kubernetes-group-version-kind. */
  gvk?: { group: string; version: string; kind: string }[];
  [key: string]: unknown;
}

export const models = z.registry<ModelMeta>();

function model<T extends z.ZodType>(id: string, schema: T, description: string, extra: object = {}): T {
  models.add(schema, { id, description, ...extra });
  // toJSONSchema takes ids from the registry it renders but descriptions and extensions from
  // the metadata registry (the global one, where the field-level .meta() calls go too).
  z.globalRegistry.add(schema, { description, ...extra });
  return schema;
}

const str = (description: string) => z.string().optional().meta({ description });
const int32 = (description: string) => z.int32().optional().meta({ description, format: 'int32' });
const int64 = (description: string) => z.int().optional().meta({ description, format: 'int64' });
const bool = (description: string) => z.boolean().optional().meta({ description });
const strMap = (description: string) => z.record(z.string(), z.string()).optional().meta({ description });
const atomicList = <T extends z.ZodType>(item: T, description: string) =>
  z.array(item).optional().meta({ description, 'x-kubernetes-list-type': 'atomic' });
const oneOf = <const V extends readonly [string, ...string[]]>(values: V, description: string) =>
  z
    .enum(values)
    .optional()
    .meta({
      description: `${description}\n\nPossible enum values:\n${values.map((v) => ` - \`"${v}"\``).join('\n')}`,
    });

const TIME_DOC =
  'Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON. RFC 3339, seconds precision.';
export const Time = model('io.k8s.apimachinery.pkg.apis.meta.v1.Time', z.string(), TIME_DOC, {
  format: 'date-time',
});
export const MicroTime = model(
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime',
  z.string(),
  'MicroTime is version of Time with microsecond level precision.',
  { format: 'date-time' },
);
export const IntOrString = model(
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString',
  z.string(),
  'IntOrString is a type that can hold an int32 or a string. In JSON it is either a number or a string.',
  { format: 'int-or-string' },
);
const FieldsV1 = model(
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1',
  z.looseObject({}),
  'FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.',
);

const OwnerReference = model(
  'io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference',
  z.object({
    apiVersion: z.string().meta({ description: 'API version of the referent.' }),
    blockOwnerDeletion: bool(
      'If true, AND if the owner has the "foregroundDeletion" finalizer, then the owner cannot be deleted from the key-value store until this reference is removed.',
    ),
    controller: bool('If true, this reference points to the managing controller.'),
    kind: z.string().meta({ description: 'Kind of the referent.' }),
    name: z.string().meta({ description: 'Name of the referent.' }),
    uid: z.string().meta({ description: 'UID of the referent.' }),
  }),
  'OwnerReference contains enough information to let you identify an owning object. An owning object must be in the same namespace as the dependent, or be cluster-scoped, so there is no namespace field.',
  { 'x-kubernetes-map-type': 'atomic' },
);

const ManagedFieldsEntry = model(
  'io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry',
  z.object({
    apiVersion: str('The version of the resource this field set applies to.'),
    fieldsType: str('The format of fieldsV1; the only valid value is "FieldsV1".'),
    fieldsV1: FieldsV1.optional().meta({ description: 'The first JSON version format of the field set.' }),
    manager: str('The identifier of the workflow managing these fields.'),
    operation: str('The type of operation which lead to this entry: Apply or Update.'),
    subresource: str('The subresource used to update the object, empty for the main resource.'),
    time: Time.optional().meta({ description: 'When this entry was last changed.' }),
  }),
  'ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource that the fieldset applies to.',
);

export const ObjectMeta = model(
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
  z.object({
    annotations: strMap(
      'Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata. They are not queryable.',
    ),
    creationTimestamp: Time.optional().meta({
      description:
        'A timestamp representing the server time when this object was created. Set by the system, read-only.',
    }),
    deletionGracePeriodSeconds: int64(
      'Number of seconds allowed for this object to gracefully terminate before it is removed. Read-only.',
    ),
    deletionTimestamp: Time.optional().meta({
      description: 'The time at which this resource will be deleted. Set by the server on delete, read-only.',
    }),
    finalizers: z.array(z.string()).optional().meta({
      description:
        'Must be empty before the object is deleted from the registry. Each entry is an identifier for the responsible component that will remove the entry from the list.',
      'x-kubernetes-list-type': 'set',
      'x-kubernetes-patch-strategy': 'merge',
    }),
    generateName: str(
      'Optional prefix, used by the server to generate a unique name ONLY IF the Name field has not been provided.',
    ),
    generation: int64(
      'A sequence number representing a specific generation of the desired state. Read-only.',
    ),
    labels: strMap(
      'Map of string keys and values that can be used to organize and categorize (scope and select) objects.',
    ),
    managedFields: atomicList(
      ManagedFieldsEntry,
      'Maps workflow-id and version to the set of fields that are managed by that workflow.',
    ),
    name: str(
      'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Cannot be updated.',
    ),
    namespace: str(
      'Namespace defines the space within which each name must be unique. An empty namespace is equivalent to the "default" namespace. Cannot be updated.',
    ),
    ownerReferences: z
      .array(OwnerReference)
      .optional()
      .meta({
        description:
          'List of objects depended by this object. If ALL objects in the list have been deleted, this object will be garbage collected.',
        'x-kubernetes-list-map-keys': ['uid'],
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-patch-merge-key': 'uid',
        'x-kubernetes-patch-strategy': 'merge',
      }),
    resourceVersion: str(
      'An opaque value that represents the internal version of this object, used for optimistic concurrency, change detection and watches. Read-only.',
    ),
    selfLink: str(
      'Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.',
    ),
    uid: str('UID is the unique in time and space value for this object. Set by the server, read-only.'),
  }),
  'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.',
);

export const ListMeta = model(
  'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta',
  z.object({
    continue: str(
      'Set if the user set a limit on the number of items returned; pass it back to get the next page.',
    ),
    remainingItemCount: int64(
      'The number of subsequent items in the list which are not included in this response.',
    ),
    resourceVersion: str('The resource version of the list, usable as the starting point of a watch.'),
    selfLink: str('Deprecated: no longer populated by the system.'),
  }),
  'ListMeta describes metadata that synthetic resources must have, including lists and various status objects.',
);

const Condition = model(
  'io.k8s.apimachinery.pkg.apis.meta.v1.Condition',
  z.object({
    lastTransitionTime: Time.meta({
      description: 'The last time the condition transitioned from one status to another.',
    }),
    message: z
      .string()
      .meta({ description: 'A human readable message indicating details about the transition.' }),
    observedGeneration: int64('The .metadata.generation that the condition was set based upon.'),
    reason: z.string().meta({
      description: "A programmatic identifier indicating the reason for the condition's last transition.",
    }),
    status: z.string().meta({ description: 'Status of the condition, one of True, False, Unknown.' }),
    type: z.string().meta({ description: 'Type of condition in CamelCase or in foo.example.com/CamelCase.' }),
  }),
  'Condition contains details for one aspect of the current state of this API Resource.',
);

const StatusCause = model(
  'io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause',
  z.object({
    field: str('The field of the resource that has caused this error, as named by its JSON serialization.'),
    message: str('A human-readable description of the cause of the error.'),
    reason: str('A machine-readable description of the cause of the error.'),
  }),
  'StatusCause provides more information about an api.Status failure, including cases when multiple errors are encountered.',
);

const StatusDetails = model(
  'io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails',
  z.object({
    causes: atomicList(
      StatusCause,
      'The Causes array includes more details associated with the StatusReason failure.',
    ),
    group: str('The group attribute of the resource associated with the status StatusReason.'),
    kind: str('The kind attribute of the resource associated with the status StatusReason.'),
    name: str('The name attribute of the resource associated with the status StatusReason.'),
    retryAfterSeconds: int32('If specified, the time in seconds before the operation should be retried.'),
    uid: str('UID of the resource.'),
  }),
  'StatusDetails is a set of additional properties that MAY be set by the server to provide additional information about a response.',
);

export const Status = model(
  'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
  z.object({
    apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
    code: int32('Suggested HTTP return code for this status, 0 if not set.'),
    details: StatusDetails.optional().meta({ description: 'Extended data associated with the reason.' }),
    kind: str('Kind is a string value representing the REST resource this object represents.'),
    message: str('A human-readable description of the status of this operation.'),
    metadata: ListMeta.optional().meta({ description: 'Standard list metadata.' }),
    reason: str('A machine-readable description of why this operation is in the "Failure" status.'),
    status: str('Status of the operation. One of: "Success" or "Failure".'),
  }),
  "Status is a return value for calls that don't return other objects.",
);

const Preconditions = model(
  'io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions',
  z.object({
    resourceVersion: str('Specifies the target ResourceVersion'),
    uid: str('Specifies the target UID.'),
  }),
  'Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.',
);

export const DeleteOptions = model(
  'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
  z.object({
    apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
    dryRun: atomicList(z.string(), 'When present, indicates that modifications should not be persisted.'),
    gracePeriodSeconds: int64('The duration in seconds before the object should be deleted.'),
    kind: str('Kind is a string value representing the REST resource this object represents.'),
    preconditions: Preconditions.optional().meta({
      description: 'Must be fulfilled before a deletion is carried out.',
    }),
    propagationPolicy: str(
      "Whether and how garbage collection will be performed: 'Orphan', 'Background' or 'Foreground'.",
    ),
  }),
  'DeleteOptions may be provided when deleting an API object.',
);

export const Patch = model(
  'io.k8s.apimachinery.pkg.apis.meta.v1.Patch',
  z.looseObject({}),
  'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
);

// ---- core/v1 Service -------------------------------------------------------------------------

const ServicePort = model(
  'io.k8s.api.core.v1.ServicePort',
  z.object({
    appProtocol: str('The application protocol for this port, used as a hint for implementations.'),
    name: str(
      'The name of this port within the service. This must be a DNS_LABEL. All ports within a ServiceSpec must have unique names. Optional if only one ServicePort is defined.',
    ),
    nodePort: int32(
      'The port on each node on which this service is exposed when type is NodePort or LoadBalancer. Usually assigned by the system.',
    ),
    port: z.int32().meta({ description: 'The port that will be exposed by this service.', format: 'int32' }),
    protocol: oneOf(
      ['SCTP', 'TCP', 'UDP'],
      'The IP protocol for this port. Supports "TCP", "UDP", and "SCTP". Default is TCP.',
    ),
    targetPort: IntOrString.optional().meta({
      description:
        "Number or name of the port to access on the pods targeted by the service. Number must be in the range 1 to 65535. Name must be an IANA_SVC_NAME. Defaults to the value of 'port'.",
    }),
  }),
  "ServicePort contains information on service's port.",
);

const ClientIPConfig = model(
  'io.k8s.api.core.v1.ClientIPConfig',
  z.object({
    timeoutSeconds: int32(
      'The seconds of ClientIP type session sticky time, 0 < timeoutSeconds <= 86400. Default 10800.',
    ),
  }),
  'ClientIPConfig represents the configurations of Client IP based session affinity.',
);

const SessionAffinityConfig = model(
  'io.k8s.api.core.v1.SessionAffinityConfig',
  z.object({
    clientIP: ClientIPConfig.optional().meta({
      description: 'clientIP contains the configurations of Client IP based session affinity.',
    }),
  }),
  'SessionAffinityConfig represents the configurations of session affinity.',
);

const ServiceSpec = model(
  'io.k8s.api.core.v1.ServiceSpec',
  z.object({
    allocateLoadBalancerNodePorts: bool(
      'Whether NodePorts will be automatically allocated for services with type LoadBalancer. Default is true.',
    ),
    clusterIP: str(
      'The IP address of the service, usually assigned randomly. "None" makes a headless service. Cannot be changed through updates.',
    ),
    clusterIPs: atomicList(
      z.string(),
      'The list of IP addresses assigned to this service; clusterIPs[0] equals clusterIP. At most one address per family.',
    ),
    externalIPs: atomicList(
      z.string(),
      'A list of IP addresses for which nodes in the cluster will also accept traffic for this service.',
    ),
    externalName: str(
      'The external reference that discovery mechanisms will return as an alias for this service (a CNAME). Requires type ExternalName.',
    ),
    externalTrafficPolicy: oneOf(
      ['Cluster', 'Local'],
      "How nodes distribute service traffic they receive on one of the Service's externally-facing addresses.",
    ),
    healthCheckNodePort: int32(
      'The healthcheck nodePort for the service, for type LoadBalancer with externalTrafficPolicy Local.',
    ),
    internalTrafficPolicy: oneOf(
      ['Cluster', 'Local'],
      'How nodes distribute service traffic they receive on the ClusterIP.',
    ),
    ipFamilies: atomicList(
      z.enum(['IPv4', 'IPv6']),
      'A list of IP families (e.g. IPv4, IPv6) assigned to this service. Assigned automatically based on cluster configuration and ipFamilyPolicy.',
    ),
    ipFamilyPolicy: oneOf(
      ['PreferDualStack', 'RequireDualStack', 'SingleStack'],
      'The dual-stack-ness requested or required by this Service. Defaults to SingleStack.',
    ),
    loadBalancerClass: str('The class of the load balancer implementation this Service belongs to.'),
    loadBalancerIP: str(
      'Deprecated: only applies to type LoadBalancer; the IP the load balancer should use.',
    ),
    loadBalancerSourceRanges: atomicList(
      z.string(),
      'Restricts traffic through the cloud-provider load-balancer to the specified client IPs.',
    ),
    ports: z
      .array(ServicePort)
      .optional()
      .meta({
        description: 'The list of ports that are exposed by this service.',
        'x-kubernetes-list-map-keys': ['port', 'protocol'],
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-patch-merge-key': 'port',
        'x-kubernetes-patch-strategy': 'merge',
      }),
    publishNotReadyAddresses: bool(
      'Whether endpoints for this Service are published regardless of the readiness of their Pods.',
    ),
    selector: strMap(
      'Route service traffic to pods with label keys and values matching this selector. Ignored if type is ExternalName.',
    ).meta({ 'x-kubernetes-map-type': 'atomic' }),
    sessionAffinity: oneOf(
      ['ClientIP', 'None'],
      'Supports "ClientIP" and "None". Used to maintain session affinity. Defaults to None.',
    ),
    sessionAffinityConfig: SessionAffinityConfig.optional().meta({
      description: 'Contains the configurations of session affinity.',
    }),
    trafficDistribution: str(
      'Offers a way to express preferences for how traffic is distributed to Service endpoints.',
    ),
    type: oneOf(
      ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'],
      'Determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer.',
    ),
  }),
  'ServiceSpec describes the attributes that a user creates on a service.',
);

const PortStatus = model(
  'io.k8s.api.core.v1.PortStatus',
  z.object({
    error: str('The error condition of this service port, if any.'),
    port: z.int32().meta({
      description: 'The port number of the service port of which status is recorded here.',
      format: 'int32',
    }),
    protocol: oneOf(
      ['SCTP', 'TCP', 'UDP'],
      'The protocol of the service port of which status is recorded here.',
    ),
  }),
  'PortStatus represents the error condition of a service port.',
);

const LoadBalancerIngress = model(
  'io.k8s.api.core.v1.LoadBalancerIngress',
  z.object({
    hostname: str('Set for load-balancer ingress points that are DNS based.'),
    ip: str('Set for load-balancer ingress points that are IP based.'),
    ipMode: str('Specifies how the load-balancer IP behaves: "VIP" or "Proxy".'),
    ports: atomicList(PortStatus, 'A list of records of service ports.'),
  }),
  'LoadBalancerIngress represents the status of a load-balancer ingress point.',
);

const LoadBalancerStatus = model(
  'io.k8s.api.core.v1.LoadBalancerStatus',
  z.object({
    ingress: atomicList(LoadBalancerIngress, 'A list containing ingress points for the load-balancer.'),
  }),
  'LoadBalancerStatus represents the status of a load-balancer.',
);

const ServiceStatus = model(
  'io.k8s.api.core.v1.ServiceStatus',
  z.object({
    conditions: z
      .array(Condition)
      .optional()
      .meta({
        description: 'Current service state.',
        'x-kubernetes-list-map-keys': ['type'],
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-patch-merge-key': 'type',
        'x-kubernetes-patch-strategy': 'merge',
      }),
    loadBalancer: LoadBalancerStatus.optional().meta({
      description: 'The current status of the load-balancer, if one is present.',
    }),
  }),
  'ServiceStatus represents the current status of a service.',
);

const objectMetaField = ObjectMeta.optional().meta({ description: "Standard object's metadata." });
const listMetaField = ListMeta.optional().meta({ description: 'Standard list metadata.' });
const apiVersionField = str(
  'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.',
);
const kindField = str(
  'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. In CamelCase.',
);

export function kindModel<S extends z.ZodRawShape>(
  id: string,
  gvk: { group: string; version: string; kind: string },
  shape: S,
  description: string,
) {
  return model(
    id,
    z.object({ apiVersion: apiVersionField, kind: kindField, metadata: objectMetaField, ...shape }),
    description,
    { gvk: [gvk] },
  );
}

export function listModel(
  id: string,
  gvk: { group: string; version: string; kind: string },
  item: z.ZodType,
  what: string,
) {
  return model(
    id,
    z.object({
      apiVersion: apiVersionField,
      items: z.array(item).meta({ description: `List of ${what}.` }),
      kind: kindField,
      metadata: listMetaField,
    }),
    `${gvk.kind} holds a list of ${what}.`,
    { gvk: [gvk] },
  );
}

const core = (kind: string) => ({ group: '', version: 'v1', kind });

export const Service = kindModel(
  'io.k8s.api.core.v1.Service',
  core('Service'),
  {
    spec: ServiceSpec.optional().meta({ description: 'Spec defines the behavior of a service.' }),
    status: ServiceStatus.optional().meta({
      description: 'Most recently observed status of the service. Populated by the system. Read-only.',
    }),
  },
  'Service is a named abstraction of software service (for example, mysql) consisting of local port (for example 3306) that the proxy listens on, and the selector that determines which pods will answer requests sent through the proxy.',
);
export const ServiceList = listModel(
  'io.k8s.api.core.v1.ServiceList',
  core('ServiceList'),
  Service,
  'services',
);

// ---- core/v1 Namespace -----------------------------------------------------------------------

const NamespaceCondition = model(
  'io.k8s.api.core.v1.NamespaceCondition',
  z.object({
    lastTransitionTime: Time.optional().meta({ description: 'Last time the condition transitioned.' }),
    message: str('Human-readable message indicating details about last transition.'),
    reason: str("Unique, one-word, CamelCase reason for the condition's last transition."),
    status: z.string().meta({ description: 'Status of the condition, one of True, False, Unknown.' }),
    type: z.string().meta({ description: 'Type of namespace controller condition.' }),
  }),
  'NamespaceCondition contains details about state of namespace.',
);

export const Namespace = kindModel(
  'io.k8s.api.core.v1.Namespace',
  core('Namespace'),
  {
    spec: model(
      'io.k8s.api.core.v1.NamespaceSpec',
      z.object({
        finalizers: atomicList(
          z.string(),
          'An opaque list of values that must be empty to permanently remove the object from storage.',
        ),
      }),
      'NamespaceSpec describes the attributes on a Namespace.',
    )
      .optional()
      .meta({ description: 'Spec defines the behavior of the Namespace.' }),
    status: model(
      'io.k8s.api.core.v1.NamespaceStatus',
      z.object({
        conditions: z
          .array(NamespaceCondition)
          .optional()
          .meta({
            description: "Represents the latest available observations of a namespace's current state.",
            'x-kubernetes-list-map-keys': ['type'],
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-patch-merge-key': 'type',
            'x-kubernetes-patch-strategy': 'merge',
          }),
        phase: oneOf(['Active', 'Terminating'], 'Phase is the current lifecycle phase of the namespace.'),
      }),
      'NamespaceStatus is information about the current status of a Namespace.',
    )
      .optional()
      .meta({ description: 'Status describes the current status of a Namespace. Read-only.' }),
  },
  'Namespace provides a scope for Names. Use of multiple namespaces is optional.',
);
export const NamespaceList = listModel(
  'io.k8s.api.core.v1.NamespaceList',
  core('NamespaceList'),
  Namespace,
  'namespaces',
);

// ---- Events (core/v1 and events.k8s.io/v1) ---------------------------------------------------

const ObjectReference = model(
  'io.k8s.api.core.v1.ObjectReference',
  z.object({
    apiVersion: str('API version of the referent.'),
    fieldPath: str(
      'If referring to a piece of an object instead of an entire object, the JSON path of that piece.',
    ),
    kind: str('Kind of the referent.'),
    name: str('Name of the referent.'),
    namespace: str('Namespace of the referent.'),
    resourceVersion: str('Specific resourceVersion to which this reference is made, if any.'),
    uid: str('UID of the referent.'),
  }),
  'ObjectReference contains enough information to let you inspect or modify the referred object.',
  { 'x-kubernetes-map-type': 'atomic' },
);

const EventSource = model(
  'io.k8s.api.core.v1.EventSource',
  z.object({
    component: str('Component from which the event is generated.'),
    host: str('Node name on which the event is generated.'),
  }),
  'EventSource contains information for an event.',
);

const CoreEventSeries = model(
  'io.k8s.api.core.v1.EventSeries',
  z.object({
    count: int32('Number of occurrences in this series up to the last heartbeat time.'),
    lastObservedTime: MicroTime.optional().meta({ description: 'Time of the last occurrence observed.' }),
  }),
  'EventSeries contain information on series of events, i.e. thing that was/is happening continuously for some time.',
);

export const CoreEvent = model(
  'io.k8s.api.core.v1.Event',
  z.object({
    action: str('What action was taken/failed regarding to the Regarding object.'),
    apiVersion: apiVersionField,
    count: int32('The number of times this event has occurred.'),
    eventTime: MicroTime.optional().meta({ description: 'Time when this Event was first observed.' }),
    firstTimestamp: Time.optional().meta({
      description: 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)',
    }),
    involvedObject: ObjectReference.meta({ description: 'The object that this event is about.' }),
    kind: kindField,
    lastTimestamp: Time.optional().meta({
      description: 'The time at which the most recent occurrence of this event was recorded.',
    }),
    message: str('A human-readable description of the status of this operation.'),
    metadata: ObjectMeta.meta({ description: "Standard object's metadata." }),
    reason: str(
      "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    ),
    related: ObjectReference.optional().meta({
      description: 'Optional secondary object for more complex actions.',
    }),
    reportingComponent: str('Name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`.'),
    reportingInstance: str('ID of the controller instance, e.g. `kubelet-xyzf`.'),
    series: CoreEventSeries.optional().meta({
      description: "Data about the Event series this event represents or nil if it's a singleton Event.",
    }),
    source: EventSource.optional().meta({ description: 'The component reporting this event.' }),
    type: str('Type of this event (Normal, Warning), new types could be added in the future'),
  }),
  'Event is a report of an event somewhere in the cluster.',
  { gvk: [core('Event')] },
);
export const CoreEventList = listModel(
  'io.k8s.api.core.v1.EventList',
  core('EventList'),
  CoreEvent,
  'events',
);

const eventsGvk = (kind: string) => ({ group: 'events.k8s.io', version: 'v1', kind });

const EventsSeries = model(
  'io.k8s.api.events.v1.EventSeries',
  z.object({
    count: z.int32().meta({
      description: 'The number of occurrences in this series up to the last heartbeat time.',
      format: 'int32',
    }),
    lastObservedTime: MicroTime.meta({
      description: 'The time when last Event from the series was seen before last heartbeat.',
    }),
  }),
  'EventSeries contain information on series of events, i.e. thing that was/is happening continuously for some time.',
);

export const EventsEvent = model(
  'io.k8s.api.events.v1.Event',
  z.object({
    action: str(
      'What action was taken/failed regarding to the regarding object. Machine-readable, at most 128 characters.',
    ),
    apiVersion: apiVersionField,
    deprecatedCount: int32('The deprecated field assuring backward compatibility with core.v1 Event type.'),
    deprecatedFirstTimestamp: Time.optional().meta({
      description: 'The deprecated field assuring backward compatibility with core.v1 Event type.',
    }),
    deprecatedLastTimestamp: Time.optional().meta({
      description: 'The deprecated field assuring backward compatibility with core.v1 Event type.',
    }),
    deprecatedSource: EventSource.optional().meta({
      description: 'The deprecated field assuring backward compatibility with core.v1 Event type.',
    }),
    eventTime: MicroTime.meta({
      description: 'The time when this Event was first observed. It is required.',
    }),
    kind: kindField,
    metadata: objectMetaField,
    note: str(
      'A human-readable description of the status of this operation. Maximal length of the note is 1kB.',
    ),
    reason: str('Why the action was taken. Human-readable, at most 128 characters.'),
    regarding: ObjectReference.optional().meta({ description: 'The object this Event is about.' }),
    related: ObjectReference.optional().meta({
      description: 'Optional secondary object for more complex actions.',
    }),
    reportingController: str(
      'The name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`.',
    ),
    reportingInstance: str('The ID of the controller instance, e.g. `kubelet-xyzf`.'),
    series: EventsSeries.optional().meta({
      description: "Data about the Event series this event represents or nil if it's a singleton Event.",
    }),
    type: str('The type of this event (Normal, Warning), new types could be added in the future.'),
  }),
  'Event is a report of an event somewhere in the cluster. It generally denotes some state change in the system.',
  { gvk: [eventsGvk('Event')] },
);
export const EventsEventList = listModel(
  'io.k8s.api.events.v1.EventList',
  eventsGvk('EventList'),
  EventsEvent,
  'schema objects',
);

// ---- coordination.k8s.io/v1 Lease ------------------------------------------------------------

const coordGvk = (kind: string) => ({ group: 'coordination.k8s.io', version: 'v1', kind });

export const Lease = kindModel(
  'io.k8s.api.coordination.v1.Lease',
  coordGvk('Lease'),
  {
    spec: model(
      'io.k8s.api.coordination.v1.LeaseSpec',
      z.object({
        acquireTime: MicroTime.optional().meta({ description: 'The time the current lease was acquired.' }),
        holderIdentity: str('Contains the identity of the holder of a current lease.'),
        leaseDurationSeconds: int32(
          'Duration that candidates for a lease need to wait to force acquire it, measured against the time of last observed renewTime.',
        ),
        leaseTransitions: int32('The number of transitions of a lease between holders.'),
        preferredHolder: str(
          'Signals to a lease holder that the lease has a more optimal holder and should be given up.',
        ),
        renewTime: MicroTime.optional().meta({
          description: 'The time the current lease holder has last updated the lease.',
        }),
        strategy: str('The strategy for picking the leader for coordinated leader election.'),
      }),
      'LeaseSpec is a specification of a Lease.',
    )
      .optional()
      .meta({ description: 'Spec contains the specification of the Lease.' }),
  },
  'Lease defines a lease concept.',
);
export const LeaseList = listModel(
  'io.k8s.api.coordination.v1.LeaseList',
  coordGvk('LeaseList'),
  Lease,
  'leases',
);

/** The top-level model of each kind kubesim stores, keyed `group/version/Kind`. */
export const KIND_MODELS: Readonly<Record<string, { object: z.ZodType; list: z.ZodType }>> = {
  '/v1/Service': { object: Service, list: ServiceList },
  '/v1/Namespace': { object: Namespace, list: NamespaceList },
  '/v1/Event': { object: CoreEvent, list: CoreEventList },
  'events.k8s.io/v1/Event': { object: EventsEvent, list: EventsEventList },
  'coordination.k8s.io/v1/Lease': { object: Lease, list: LeaseList },
};
