import protobuf from 'protobufjs';

/**
 * The protobuf messages kubesim decodes, written by hand with the field numbers of
 * k8s.io/apimachinery/pkg/runtime/generated.proto (Unknown, TypeMeta),
 * k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto (ObjectMeta, Time, OwnerReference),
 * k8s.io/apimachinery/pkg/util/intstr/generated.proto (IntOrString) and
 * k8s.io/api/core/v1/generated.proto (Namespace, Service, and the Secret, ConfigMap and
 * ServiceAccount that client-go's typed clients, helm's release storage among them, send) and
 * the self reviews of k8s.io/api/authorization/v1 and authentication/v1 (`kubectl auth`). Fields left out (managedFields,
 * status conditions) are skipped by the decoder; the server drops them on writes anyway.
 */
const PROTO = `
syntax = "proto2";
package kubesim;

message Unknown {
  optional TypeMeta typeMeta = 1;
  optional bytes raw = 2;
  optional string contentEncoding = 3;
  optional string contentType = 4;
}
message TypeMeta {
  optional string apiVersion = 1;
  optional string kind = 2;
}

message Time {
  optional int64 seconds = 1;
  optional int32 nanos = 2;
}
message OwnerReference {
  optional string kind = 1;
  optional string name = 3;
  optional string uid = 4;
  optional string apiVersion = 5;
  optional bool controller = 6;
  optional bool blockOwnerDeletion = 7;
}
message ObjectMeta {
  optional string name = 1;
  optional string generateName = 2;
  optional string namespace = 3;
  optional string selfLink = 4;
  optional string uid = 5;
  optional string resourceVersion = 6;
  optional int64 generation = 7;
  optional Time creationTimestamp = 8;
  optional Time deletionTimestamp = 9;
  optional int64 deletionGracePeriodSeconds = 10;
  map<string, string> labels = 11;
  map<string, string> annotations = 12;
  repeated OwnerReference ownerReferences = 13;
  repeated string finalizers = 14;
}
message IntOrString {
  optional int64 type = 1;
  optional int32 intVal = 2;
  optional string strVal = 3;
}

message Namespace {
  optional ObjectMeta metadata = 1;
  optional NamespaceSpec spec = 2;
  optional NamespaceStatus status = 3;
}
message NamespaceSpec {
  repeated string finalizers = 1;
}
message NamespaceStatus {
  optional string phase = 1;
}

message Service {
  optional ObjectMeta metadata = 1;
  optional ServiceSpec spec = 2;
  optional ServiceStatus status = 3;
}
message ServiceSpec {
  repeated ServicePort ports = 1;
  map<string, string> selector = 2;
  optional string clusterIP = 3;
  optional string type = 4;
  repeated string externalIPs = 5;
  optional string sessionAffinity = 7;
  optional string loadBalancerIP = 8;
  repeated string loadBalancerSourceRanges = 9;
  optional string externalName = 10;
  optional string externalTrafficPolicy = 11;
  optional int32 healthCheckNodePort = 12;
  optional bool publishNotReadyAddresses = 13;
  optional SessionAffinityConfig sessionAffinityConfig = 14;
  optional string ipFamilyPolicy = 17;
  repeated string clusterIPs = 18;
  repeated string ipFamilies = 19;
  optional bool allocateLoadBalancerNodePorts = 20;
  optional string loadBalancerClass = 21;
  optional string internalTrafficPolicy = 22;
  optional string trafficDistribution = 23;
}
message ServicePort {
  optional string name = 1;
  optional string protocol = 2;
  optional int32 port = 3;
  optional IntOrString targetPort = 4;
  optional int32 nodePort = 5;
  optional string appProtocol = 6;
}
message SessionAffinityConfig {
  optional ClientIPConfig clientIP = 1;
}
message ClientIPConfig {
  optional int32 timeoutSeconds = 1;
}
message Secret {
  optional ObjectMeta metadata = 1;
  map<string, bytes> data = 2;
  optional string type = 3;
  map<string, string> stringData = 4;
  optional bool immutable = 5;
}
message ConfigMap {
  optional ObjectMeta metadata = 1;
  map<string, string> data = 2;
  map<string, bytes> binaryData = 3;
  optional bool immutable = 4;
}
message ObjectReference {
  optional string kind = 1;
  optional string namespace = 2;
  optional string name = 3;
  optional string uid = 4;
  optional string apiVersion = 5;
  optional string resourceVersion = 6;
  optional string fieldPath = 7;
}
message LocalObjectReference {
  optional string name = 1;
}
message ServiceAccount {
  optional ObjectMeta metadata = 1;
  repeated ObjectReference secrets = 2;
  repeated LocalObjectReference imagePullSecrets = 3;
  optional bool automountServiceAccountToken = 4;
}
message DeleteOptions {
  optional int64 gracePeriodSeconds = 1;
  optional Preconditions preconditions = 2;
  optional bool orphanDependents = 3;
  optional string propagationPolicy = 4;
  repeated string dryRun = 5;
  optional bool ignoreStoreReadErrorWithClusterBreakingPotential = 6;
}
message Preconditions {
  optional string uid = 1;
  optional string resourceVersion = 2;
}
// Status is owned by the status subresource: a create or update through the main resource
// ignores it, so its content is not decoded.
message ServiceStatus {
}

// k8s.io/api/authorization/v1 and authentication/v1: the self reviews kubectl auth sends. Their
// status is the server's answer, so it is not decoded; selector attributes are skipped.
message SelfSubjectAccessReview {
  optional ObjectMeta metadata = 1;
  optional SelfSubjectAccessReviewSpec spec = 2;
}
message SelfSubjectAccessReviewSpec {
  optional ResourceAttributes resourceAttributes = 1;
  optional NonResourceAttributes nonResourceAttributes = 2;
}
message ResourceAttributes {
  optional string namespace = 1;
  optional string verb = 2;
  optional string group = 3;
  optional string version = 4;
  optional string resource = 5;
  optional string subresource = 6;
  optional string name = 7;
}
message NonResourceAttributes {
  optional string path = 1;
  optional string verb = 2;
}
message SelfSubjectRulesReview {
  optional ObjectMeta metadata = 1;
  optional SelfSubjectRulesReviewSpec spec = 2;
}
message SelfSubjectRulesReviewSpec {
  optional string namespace = 1;
}
message SelfSubjectReview {
  optional ObjectMeta metadata = 1;
}
`;

export const root = protobuf.parse(PROTO, { keepCase: true }).root;

export const Unknown = root.lookupType('kubesim.Unknown');

/**
 * Go's generated (gogo) marshallers write every non-pointer field, zero values included, so a
 * zero there means "unset" and maps to an absent JSON field (omitempty). Pointer fields are
 * written only when set, and `port` is the one non-pointer field without omitempty: for these a
 * zero value on the wire is a real value.
 */
export const KEEP_ZERO: ReadonlySet<string> = new Set([
  'ObjectMeta.deletionGracePeriodSeconds',
  'OwnerReference.controller',
  'OwnerReference.blockOwnerDeletion',
  'ServicePort.port',
  'ServicePort.appProtocol',
  'ServiceSpec.ipFamilyPolicy',
  'ServiceSpec.allocateLoadBalancerNodePorts',
  'ServiceSpec.loadBalancerClass',
  'ServiceSpec.internalTrafficPolicy',
  'ServiceSpec.trafficDistribution',
  'ClientIPConfig.timeoutSeconds',
  'Secret.immutable',
  'ConfigMap.immutable',
  'ServiceAccount.automountServiceAccountToken',
  'DeleteOptions.gracePeriodSeconds',
  'DeleteOptions.orphanDependents',
  'DeleteOptions.propagationPolicy',
  'DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential',
  'Preconditions.uid',
  'Preconditions.resourceVersion',
]);

/** meta/v1 DeleteOptions, which client-go's typed clients send as protobuf with their deletes. */
export const DeleteOptionsMessage = root.lookupType('kubesim.DeleteOptions');

/** The message of each kind kubesim accepts as protobuf, keyed `apiVersion/Kind`. */
export const KIND_MESSAGES: Readonly<Record<string, protobuf.Type>> = {
  'v1/Namespace': root.lookupType('kubesim.Namespace'),
  'v1/Service': root.lookupType('kubesim.Service'),
  'v1/Secret': root.lookupType('kubesim.Secret'),
  'v1/ConfigMap': root.lookupType('kubesim.ConfigMap'),
  'v1/ServiceAccount': root.lookupType('kubesim.ServiceAccount'),
  'authorization.k8s.io/v1/SelfSubjectAccessReview': root.lookupType('kubesim.SelfSubjectAccessReview'),
  'authorization.k8s.io/v1/SelfSubjectRulesReview': root.lookupType('kubesim.SelfSubjectRulesReview'),
  'authentication.k8s.io/v1/SelfSubjectReview': root.lookupType('kubesim.SelfSubjectReview'),
};
