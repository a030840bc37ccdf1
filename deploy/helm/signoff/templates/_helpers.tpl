{{/* The name prefix of every object: the release name. */}}
{{- define "signoff.fullname" -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object; "component" is the part. */}}
{{- define "signoff.labels" -}}
app.kubernetes.io/name: {{ .component }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/part-of: signoff
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{/* The selector of one part's pods. */}}
{{- define "signoff.selector" -}}
app.kubernetes.io/name: {{ .component }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{/* The NATS URL the broker and the bot connect to. */}}
{{- define "signoff.natsURL" -}}
{{- if .Values.nats.bundled.enabled -}}
nats://{{ include "signoff.fullname" . }}-nats:4222
{{- else -}}
{{- required "nats.url is required (or nats.bundled.enabled)" .Values.nats.url -}}
{{- end -}}
{{- end -}}

{{/* The pod and container security settings of every Signoff part. */}}
{{- define "signoff.podSecurity" -}}
runAsNonRoot: true
runAsUser: {{ .uid }}
runAsGroup: {{ .uid }}
fsGroup: {{ .uid }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "signoff.containerSecurity" -}}
runAsNonRoot: true
runAsUser: {{ .uid }}
runAsGroup: {{ .uid }}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* "true" when the brokers' NetworkPolicy lets them page the vendors:
broker.paging.egress.enabled, where "auto" means the policy has pagers. */}}
{{- define "signoff.pagingEgress" -}}
{{- $on := .Values.broker.paging.egress.enabled -}}
{{- if eq (toString $on) "auto" -}}
{{- $on = not (empty (get (fromYaml .Values.broker.policy) "pagers")) -}}
{{- end -}}
{{- if $on -}}true{{- end -}}
{{- end -}}
