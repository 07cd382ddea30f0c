{{/*
The app.kubernetes.io/name label. Fixed: the projected internal Services select forwarder pods by
app.kubernetes.io/name=endpoint-binder (src/binding/identity.ts), so nameOverride cannot change it.
*/}}
{{- define "endpoint-binder.name" -}}endpoint-binder{{- end }}

{{/*
Fits a name into max characters: unchanged when it fits, else cut and suffixed with 6 hex
characters of its sha256, so two long names that share a beginning stay distinct.
include "endpoint-binder.fit" (list "some-name" 36)
*/}}
{{- define "endpoint-binder.fit" -}}
{{- $text := index . 0 -}}
{{- $max := int (index . 1) -}}
{{- if le (len $text) $max -}}
{{- $text -}}
{{- else -}}
{{- printf "%s-%s" ($text | trunc (int (sub $max 7)) | trimSuffix "-") ($text | sha256sum | trunc 6) -}}
{{- end -}}
{{- end }}

{{/*
Resource name prefix: fullnameOverride, or the release name (+ "-<name>" unless it contains it).
At most 36 characters: the longest suffix the chart adds is "-controller-leader-election" (27),
and every name stays within 63. Dots become dashes and a leading digit gets "eb-", so Service
names are DNS-1035 labels whatever the release is called.
*/}}
{{- define "endpoint-binder.fullname" -}}
{{- $raw := "" }}
{{- if .Values.fullnameOverride }}
{{- $raw = .Values.fullnameOverride }}
{{- else }}
{{- $name := default "endpoint-binder" .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- $raw = .Release.Name }}
{{- else }}
{{- $raw = printf "%s-%s" .Release.Name $name }}
{{- end }}
{{- end }}
{{- $raw = $raw | replace "." "-" | trimSuffix "-" }}
{{- if regexMatch "^[0-9]" $raw }}{{ $raw = printf "eb-%s" $raw }}{{ end }}
{{- include "endpoint-binder.fit" (list $raw 36) }}
{{- end }}

{{/*
Prefix of cluster-scoped names: the fullname and the namespace (one release name may be installed
in two namespaces), fitted into 47 characters to leave room for a suffix of up to 16.
*/}}
{{- define "endpoint-binder.clusterPrefix" -}}
{{- include "endpoint-binder.fit" (list (printf "%s-%s" (include "endpoint-binder.fullname" .) .Release.Namespace) 47) }}
{{- end }}

{{- define "endpoint-binder.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object the chart renders. */}}
{{- define "endpoint-binder.labels" -}}
helm.sh/chart: {{ include "endpoint-binder.chart" . }}
app.kubernetes.io/name: {{ include "endpoint-binder.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: endpoint-binder
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels of one component: include "endpoint-binder.selectorLabels" (list . "controller"). */}}
{{- define "endpoint-binder.selectorLabels" -}}
{{- $ctx := index . 0 -}}
app.kubernetes.io/name: {{ include "endpoint-binder.name" $ctx }}
app.kubernetes.io/instance: {{ $ctx.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{/* All labels of one component's objects. */}}
{{- define "endpoint-binder.componentLabels" -}}
{{ include "endpoint-binder.labels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "endpoint-binder.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}
{{- end }}

{{- define "endpoint-binder.secretName" -}}
{{- default (printf "%s-credentials" (include "endpoint-binder.fullname" .)) .Values.credentials.existingSecret }}
{{- end }}

{{/* ServiceAccount name of a component: include "endpoint-binder.serviceAccountName" (list . "controller" .Values.controller.serviceAccount). */}}
{{- define "endpoint-binder.serviceAccountName" -}}
{{- $ctx := index . 0 -}}
{{- $sa := index . 2 -}}
{{- if $sa.create }}
{{- default (printf "%s-%s" (include "endpoint-binder.fullname" $ctx) (index . 1)) $sa.name }}
{{- else }}
{{- default "default" $sa.name }}
{{- end }}
{{- end }}

{{/* The Lease the controller elects its leader with (src/controller/controller.ts: <releaseName>-controller). */}}
{{- define "endpoint-binder.leaseName" -}}
{{- printf "%s-controller" .Release.Name }}
{{- end }}

{{/*
Where a CA bundle comes from, as JSON {configMap|secret, key}, or "" when none is set:
include "endpoint-binder.ca" (list . "api") or (list . "ingress"). An inline caBundle is
rendered into the ConfigMap <fullname>-<api|ingress>-ca under ca.crt.
*/}}
{{- define "endpoint-binder.ca" -}}
{{- $ctx := index . 0 -}}
{{- $which := index . 1 -}}
{{- $v := ternary $ctx.Values.api $ctx.Values.bindings.ingress (eq $which "api") -}}
{{- if $v.caBundle -}}
{{- dict "configMap" (printf "%s-%s-ca" (include "endpoint-binder.fullname" $ctx) $which) "key" "ca.crt" | toJson -}}
{{- else if $v.caConfigMap.name -}}
{{- dict "configMap" $v.caConfigMap.name "key" $v.caConfigMap.key | toJson -}}
{{- else if $v.caSecret.name -}}
{{- dict "secret" $v.caSecret.name "key" $v.caSecret.key | toJson -}}
{{- end -}}
{{- end }}

{{/* The volume holding a CA bundle (name "<api|ingress>-ca"), or nothing. */}}
{{- define "endpoint-binder.caVolume" -}}
{{- $ca := include "endpoint-binder.ca" . | fromJson -}}
{{- if $ca.key }}
- name: {{ index . 1 }}-ca
  {{- if $ca.configMap }}
  configMap:
    name: {{ $ca.configMap }}
  {{- else }}
  secret:
    secretName: {{ $ca.secret }}
  {{- end }}
{{- end }}
{{- end }}

{{/* The file a CA bundle is mounted as, or "". */}}
{{- define "endpoint-binder.caFile" -}}
{{- $ca := include "endpoint-binder.ca" . | fromJson -}}
{{- if $ca.key }}/etc/endpoint-binder-{{ index . 1 }}-ca/{{ $ca.key }}{{ end }}
{{- end }}

{{/* The mount of a CA bundle's volume, or nothing. */}}
{{- define "endpoint-binder.caVolumeMount" -}}
{{- if include "endpoint-binder.caFile" . }}
- name: {{ index . 1 }}-ca
  mountPath: /etc/endpoint-binder-{{ index . 1 }}-ca
  readOnly: true
{{- end }}
{{- end }}

{{/*
The API CA reaches every process that calls the management API through NODE_EXTRA_CA_CERTS:
Node adds it to the default trust store, used by fetch and https alike.
*/}}
{{- define "endpoint-binder.apiCaEnv" -}}
{{- with include "endpoint-binder.caFile" (list . "api") }}
- name: NODE_EXTRA_CA_CERTS
  value: {{ . }}
{{- end }}
{{- end }}

{{/* Kept for templates that ask whether an ingress CA is set (its ConfigMap name, when it is one). */}}
{{- define "endpoint-binder.ingressCaConfigMap" -}}
{{- $ca := include "endpoint-binder.ca" (list . "ingress") | fromJson -}}
{{- if $ca.key }}{{ default $ca.secret $ca.configMap }}{{ end }}
{{- end }}

{{- define "endpoint-binder.ingressCaKey" -}}
{{- $ca := include "endpoint-binder.ca" (list . "ingress") | fromJson -}}
{{- $ca.key }}
{{- end }}

{{/*
A probe as given. Helm merges a user's probe into the default one, so a user's exec, tcpSocket
or grpc handler would sit beside the default httpGet (two handlers: the API server refuses the
pod); a probe with another handler drops the default httpGet. null: no probe.
include "endpoint-binder.probe" (list "livenessProbe" .Values.controller.livenessProbe)
*/}}
{{- define "endpoint-binder.probe" -}}
{{- $p := index . 1 -}}
{{- if $p }}
{{- if or (hasKey $p "exec") (hasKey $p "tcpSocket") (hasKey $p "grpc") }}
{{- $p = omit $p "httpGet" }}
{{- end }}
{{ index . 0 }}:
  {{- toYaml $p | nindent 2 }}
{{- end }}
{{- end }}

{{/* Args after a component's own: extraArgs (list . .Values.controller). */}}
{{- define "endpoint-binder.extraArgs" -}}
{{- range . }}
- {{ . | quote }}
{{- end }}
{{- end }}

{{/*
The controller's config file (schema: ControllerConfigSchema in src/controller/config.ts). Built
as a dict and rendered with toYaml, so strings such as the CEL selector arrive unchanged, whatever
quotes, commas or newlines they hold.
*/}}
{{- define "endpoint-binder.controllerConfig" -}}
{{- $b := .Values.bindings -}}
{{- $le := .Values.controller.leaderElection -}}
{{- $cfg := dict
  "api" (dict "baseUrl" .Values.api.baseUrl "timeoutMs" (int .Values.api.timeoutMs))
  "registration" (dict "description" .Values.description "metadata" .Values.registrationMetadata)
  "bindings" (dict
    "enabled" $b.enabled
    "endpointSelector" $b.endpointSelector
    "clusterDomain" $b.clusterDomain
    "portRange" (dict "min" (int $b.portRange.min) "max" (int $b.portRange.max))
    "serviceLabels" $b.serviceLabels
    "serviceAnnotations" $b.serviceAnnotations
    "foreignNameGraceSeconds" (int $b.foreignNameGraceSeconds)
    "namespaces" (dict
      "deny" .Values.namespaces.deny
      "allow" .Values.namespaces.allow
      "selector" .Values.namespaces.selector)
    "portReservationSeconds" (int $b.portReservationSeconds)
    "limits" (dict "endpointsPerHostname" (int $b.limits.endpointsPerHostname) "portsPerHostname" (int $b.limits.portsPerHostname))
    "deletes" $b.deletes)
  "operatorNamespace" .Release.Namespace
  "releaseName" .Release.Name
  "resyncIntervalSeconds" (int .Values.controller.resyncIntervalSeconds)
  "writeConcurrency" (int .Values.controller.writeConcurrency)
  "http" (dict "listen" (printf "0.0.0.0:%d" (int .Values.controller.port)))
  "leaderElection" (dict
    "enabled" $le.enabled
    "leaseDurationSeconds" $le.leaseDurationSeconds
    "renewDeadlineSeconds" $le.renewDeadlineSeconds
    "retryPeriodSeconds" $le.retryPeriodSeconds)
  "logLevel" .Values.controller.logLevel
-}}
{{- toYaml $cfg }}
{{- end }}

{{/* The forwarder's config file (fields: docs/install.md, the forwarder's --help). */}}
{{- define "endpoint-binder.forwarderConfig" -}}
{{- $in := .Values.bindings.ingress -}}
{{- $ingress := dict "tls" $in.tls "protocol" .Values.forwarder.ingressProtocol "sessions" (int .Values.forwarder.ingressSessions) -}}
{{- with $in.address }}{{ $_ := set $ingress "address" . }}{{ end -}}
{{- with $in.serverName }}{{ $_ := set $ingress "serverName" . }}{{ end -}}
{{- with include "endpoint-binder.caFile" (list . "ingress") }}
{{- $_ := set $ingress "caFile" . }}
{{- end -}}
{{- $limits := dict -}}
{{- range $k, $v := .Values.forwarder.limits }}{{ $_ := set $limits $k (int $v) }}{{ end -}}
{{- $cfg := dict
  "releaseName" .Release.Name
  "operatorNamespace" .Release.Namespace
  "ingress" $ingress
  "limits" $limits
  "portRange" (dict "min" (int .Values.bindings.portRange.min) "max" (int .Values.bindings.portRange.max))
  "dialOn" (dict "http" .Values.forwarder.dialOn.http "tcp" .Values.forwarder.dialOn.tcp)
  "authtokenFile" "/etc/endpoint-binder-authtoken/AUTHTOKEN"
  "drain" (dict "delaySeconds" (int .Values.forwarder.drain.delaySeconds) "timeoutSeconds" (int .Values.forwarder.drain.timeoutSeconds))
  "http" (dict "listen" (printf "0.0.0.0:%d" (int .Values.forwarder.port)))
  "logLevel" .Values.forwarder.logLevel
-}}
{{- toYaml $cfg }}
{{- end }}

{{- define "endpoint-binder.forwarderGracePeriod" -}}
{{- $d := .Values.forwarder.drain -}}
{{- if kindIs "invalid" .Values.forwarder.terminationGracePeriodSeconds }}
{{- add (int $d.delaySeconds) (int $d.timeoutSeconds) 5 }}
{{- else }}
{{- int .Values.forwarder.terminationGracePeriodSeconds }}
{{- end }}
{{- end }}

{{/* Env vars every endpoint-binder container gets: where it runs. */}}
{{- define "endpoint-binder.podEnv" -}}
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- end }}

{{/*
The forwarder's resources; without a memory limit of its own, one that follows the connection cap
and the transport: 128 MiB plus, per connection of limits.maxConnections (default 10000), 64 KiB
over TLS (either protocol: `auto` falls back to v1), 32 KiB over plain TCP where v2 may carry it
(`auto`, `v2`), 8 KiB over plain v1. BENCHMARKS.md "#27: round 2", 2,000 idle connections held:
v1 TLS 60.1 KiB, v2 TLS 31.2 KiB, v2 plain 24.6 KiB each; v1 plain about a fifth of v1 TLS.
Where v2 may carry them, plus 40 MiB per ingress session: what a session's first streams can pin
above their floor in the download window they share, if their clients all stop reading (docs/forwarder.md "What
a slow reader pins").
*/}}
{{- define "endpoint-binder.forwarderResources" -}}
{{- $r := deepCopy (.Values.forwarder.resources | default dict) -}}
{{- $limits := $r.limits | default dict -}}
{{- if not $limits.memory -}}
{{- $conns := int (.Values.forwarder.limits.maxConnections | default 10000) -}}
{{- $tls := .Values.bindings.ingress.tls | default false -}}
{{- $plainV1 := eq (.Values.forwarder.ingressProtocol | default "auto") "v1" -}}
{{- $perConnKiB := ternary 64 (ternary 8 32 $plainV1) $tls -}}
{{- $v1 := eq (.Values.forwarder.ingressProtocol | default "auto") "v1" -}}
{{- $sessions := int (.Values.forwarder.ingressSessions | default 2) -}}
{{- $sharedMi := ternary 0 (mul $sessions 40) $v1 -}}
{{- $mi := add 128 $sharedMi (div (add (mul $conns $perConnKiB) 1023) 1024) -}}
{{- $_ := set $limits "memory" (printf "%dMi" (int $mi)) -}}
{{- $_ := set $r "limits" $limits -}}
{{- end -}}
{{- toYaml $r -}}
{{- end }}

{{/*
"true" when the cluster serves what the fence needs: ValidatingAdmissionPolicy in
admissionregistration.k8s.io/v1 (Kubernetes 1.30+). From the API server's discovery during
install/upgrade; `helm template` has no cluster (and lists no kinds), so its Kubernetes version
(helm's default, or --kube-version) decides there.
*/}}
{{- define "endpoint-binder.fenceServed" -}}
{{- if or (.Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy") (semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version) -}}
true
{{- end -}}
{{- end }}

{{/* "true" when the cluster serves the Prometheus operator's ServiceMonitor (its CRD is installed). */}}
{{- define "endpoint-binder.serviceMonitorServed" -}}
{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor" -}}
true
{{- end -}}
{{- end }}
