{{/*
Tailor's objects have fixed names (tailor-controller, tailor-agent, ...) in the namespace
tailor-system: the admission policies name the two service accounts, and the node agent checks
those policies, expression by expression, before it starts (src/agent/policy-check.ts). One Tailor
per cluster, like one CloneSet CRD per cluster.
*/}}
{{- define "tailor.namespace" -}}
{{- if ne .Release.Namespace "tailor-system" -}}
{{- fail (printf "install Tailor into the namespace tailor-system (helm install ... --namespace tailor-system --create-namespace), not %q: its admission policies name the service accounts tailor-system:tailor-controller and tailor-system:tailor-agent" .Release.Namespace) -}}
{{- end -}}
{{- .Release.Namespace -}}
{{- end -}}

{{/* Labels of every object. hack/gen-config.sh leaves out the three Helm-only lines for config/. */}}
{{- define "tailor.labels" -}}
app.kubernetes.io/name: tailor
app.kubernetes.io/part-of: tailor
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels: fixed, as they were before the chart (a Deployment's selector cannot change). */}}
{{- define "tailor.selector" -}}
app.kubernetes.io/name: tailor
app.kubernetes.io/component: {{ . }}
{{- end -}}

{{- define "tailor.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}:{{ $tag }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ $tag }}
{{- end -}}
{{- end -}}

{{/*
V8's old space in MiB: three quarters of a memory limit given in Mi or Gi
(docs/decisions/0032-controller-memory.md). Empty without a limit.
*/}}
{{- define "tailor.oldSpaceMiB" -}}
{{- $limit := toString (dig "limits" "memory" "" .) -}}
{{- if $limit -}}
{{- if regexMatch "^[0-9]+Mi$" $limit -}}
{{- div (mul (trimSuffix "Mi" $limit | atoi) 3) 4 -}}
{{- else if regexMatch "^[0-9]+Gi$" $limit -}}
{{- div (mul (trimSuffix "Gi" $limit | atoi) 3072) 4 -}}
{{- else -}}
{{- fail (printf "resources.limits.memory %q: give it in Mi or Gi (the V8 heap is sized from it)" $limit) -}}
{{- end -}}
{{- end -}}
{{- end -}}
