{{/*
Rules values.schema.json cannot express (they compare two values or depend on each other).
Rendered from every template through "endpoint-binder.validate"; each failure names the value.
*/}}
{{- define "endpoint-binder.validate" -}}
{{- $errors := list -}}
{{- if not .Values.api.baseUrl }}
{{- $errors = append $errors "api.baseUrl: is required (the management API base URL, e.g. https://api.example.com)" }}
{{- end }}
{{- /* Patterns and conditions live here, not in values.schema.json: helm words a schema refusal
in JSON-schema terms ("Must validate at least one schema (anyOf)"), not as the value and its fix. */}}
{{- if not (trim (toString .Values.bindings.endpointSelector)) }}
{{- $errors = append $errors "bindings.endpointSelector: must not be empty; write a CEL expression over endpoint.* (\"true\" selects every endpoint)" }}
{{- end }}
{{- with .Values.api.baseUrl }}
{{- if not (regexMatch "^https?://[^\\s/]+(/\\S*)?$" .) }}
{{- $errors = append $errors (printf "api.baseUrl: %q is not an http:// or https:// URL; write it with its scheme and host, e.g. https://api.example.com" .) }}
{{- end }}
{{- end }}
{{- with .Values.bindings.ingress.address }}
{{- if not (regexMatch "^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5}$" .) }}
{{- $errors = append $errors (printf "bindings.ingress.address: %q is not host:port; write e.g. ingress.example.com:443, or leave it empty to use the address the management API returns" .) }}
{{- end }}
{{- end }}
{{- range $c := list "controller" "forwarder" "uninstall" }}
{{- $sa := (index $.Values $c).serviceAccount }}
{{- if and (not $sa.create) (not $sa.name) }}
{{- $errors = append $errors (printf "%s.serviceAccount.name: required when %s.serviceAccount.create is false; name the existing ServiceAccount it runs as (the chart binds its rights to it, never to default)" $c $c) }}
{{- end }}
{{- end }}
{{- $min := int .Values.bindings.portRange.min -}}
{{- $max := int .Values.bindings.portRange.max -}}
{{- if gt $min $max }}
{{- $errors = append $errors (printf "bindings.portRange: min (%d) must not be greater than max (%d)" $min $max) }}
{{- end }}
{{- $fp := int .Values.forwarder.port -}}
{{- if and .Values.bindings.enabled (ge $fp $min) (le $fp $max) }}
{{- $errors = append $errors (printf "forwarder.port: %d lies inside bindings.portRange %d-%d; the forwarder listens on every port of the range, so its http port must be outside it" $fp $min $max) }}
{{- end }}
{{- if not .Values.credentials.existingSecret }}
{{- if not .Values.credentials.apiKey }}
{{- $errors = append $errors "credentials.apiKey: is required unless credentials.existingSecret names a Secret with the keys API_KEY and AUTHTOKEN" }}
{{- end }}
{{- if and .Values.bindings.enabled (not .Values.credentials.authtoken) }}
{{- $errors = append $errors "credentials.authtoken: is required when bindings.enabled is true, unless credentials.existingSecret is set" }}
{{- end }}
{{- end }}
{{- with .Values.credentials.existingSecret }}
{{- /* Only when the cluster answers (helm install/upgrade; `helm template` looks nothing up): the
namespace exists and the Secret does not. Otherwise every pod would wait in
CreateContainerConfigError and the config check until its deadline. */}}
{{- if and (lookup "v1" "Namespace" "" $.Release.Namespace) (not (lookup "v1" "Secret" $.Release.Namespace .)) }}
{{- $errors = append $errors (printf "credentials.existingSecret: no Secret %q in namespace %s; create it first (kubectl -n %s create secret generic %s --from-literal=API_KEY=... --from-literal=AUTHTOKEN=...) or set credentials.apiKey and credentials.authtoken instead" . $.Release.Namespace $.Release.Namespace .) }}
{{- end }}
{{- end }}
{{- range $which := list "api" "bindings.ingress" }}
{{- $v := ternary $.Values.api $.Values.bindings.ingress (eq $which "api") }}
{{- if gt (len (compact (list $v.caBundle $v.caConfigMap.name $v.caSecret.name))) 1 }}
{{- $errors = append $errors (printf "%s: set at most one of caBundle, caConfigMap.name and caSecret.name" $which) }}
{{- end }}
{{- end }}
{{- $le := .Values.controller.leaderElection -}}
{{- if le (float64 $le.leaseDurationSeconds) (float64 $le.renewDeadlineSeconds) }}
{{- $errors = append $errors "controller.leaderElection: leaseDurationSeconds must be greater than renewDeadlineSeconds" }}
{{- end }}
{{- if le (float64 $le.renewDeadlineSeconds) (float64 $le.retryPeriodSeconds) }}
{{- $errors = append $errors "controller.leaderElection: renewDeadlineSeconds must be greater than retryPeriodSeconds" }}
{{- end }}
{{- if and (gt (int .Values.controller.replicas) 1) (not $le.enabled) }}
{{- $errors = append $errors "controller.replicas: more than 1 replica needs controller.leaderElection.enabled (two active controllers would fight over the Services)" }}
{{- end }}
{{- $drain := add (int .Values.forwarder.drain.delaySeconds) (int .Values.forwarder.drain.timeoutSeconds) -}}
{{- if le (int (include "endpoint-binder.forwarderGracePeriod" .)) (int $drain) }}
{{- $errors = append $errors (printf "forwarder.terminationGracePeriodSeconds: must be greater than drain.delaySeconds + drain.timeoutSeconds (%d), or the kubelet kills draining connections" (int $drain)) }}
{{- end }}
{{- range $c := list "controller" "forwarder" }}
{{- $pdb := (index $.Values $c).podDisruptionBudget }}
{{- if and $pdb.enabled (not (kindIs "invalid" $pdb.minAvailable)) (not (kindIs "invalid" $pdb.maxUnavailable)) }}
{{- $errors = append $errors (printf "%s.podDisruptionBudget: set exactly one of minAvailable and maxUnavailable (the other to null)" $c) }}
{{- end }}
{{- if and $pdb.enabled (kindIs "invalid" $pdb.minAvailable) (kindIs "invalid" $pdb.maxUnavailable) }}
{{- $errors = append $errors (printf "%s.podDisruptionBudget: set one of minAvailable and maxUnavailable" $c) }}
{{- end }}
{{- end }}
{{- if $errors }}
{{- fail (printf "\n\nendpoint-binder: invalid values:\n  - %s\n" (join "\n  - " $errors)) }}
{{- end }}
{{- end }}
