{{/*
The app.kubernetes.io/name label. Fixed: the projected internal Services select forwarder pods by
app.kubernetes.io/name=endpoint-binder (src/binding/identity.ts), so nameOverride cannot change it.
*/}}
{{- define "endpoint-binder.name" -}}endpoint-binder{{- end }}

{{/* Resource name prefix: fullnameOverride, or the release name (+ "-<name>" unless it contains it). */}}
{{- define "endpoint-binder.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 45 | trimSuffix "-" }}
{{- else }}
{{- $name := default "endpoint-binder" .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 45 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 45 | trimSuffix "-" }}
{{- end }}
{{- end }}
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

{{- define "endpoint-binder.ingressCaConfigMap" -}}
{{- if .Values.bindings.ingress.caBundle }}
{{- printf "%s-ingress-ca" (include "endpoint-binder.fullname" .) }}
{{- else }}
{{- .Values.bindings.ingress.caConfigMap.name }}
{{- end }}
{{- end }}

{{- define "endpoint-binder.ingressCaKey" -}}
{{- if .Values.bindings.ingress.caBundle }}ca.crt{{ else }}{{ .Values.bindings.ingress.caConfigMap.key }}{{ end }}
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
{{- $ingress := dict "tls" $in.tls -}}
{{- with $in.address }}{{ $_ := set $ingress "address" . }}{{ end -}}
{{- with $in.serverName }}{{ $_ := set $ingress "serverName" . }}{{ end -}}
{{- if include "endpoint-binder.ingressCaConfigMap" . }}
{{- $_ := set $ingress "caFile" (printf "/etc/endpoint-binder-ingress-ca/%s" (include "endpoint-binder.ingressCaKey" .)) }}
{{- end -}}
{{- $limits := dict -}}
{{- range $k, $v := .Values.forwarder.limits }}{{ $_ := set $limits $k (int $v) }}{{ end -}}
{{- $cfg := dict
  "releaseName" .Release.Name
  "operatorNamespace" .Release.Namespace
  "ingress" $ingress
  "limits" $limits
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
