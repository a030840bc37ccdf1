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

{{/* The brokers' tenants file (SIGNOFF_TENANTS) from .Values.tenants: every
tenant's policy defaults to the chart's. Fails without a tenant, and, on the
bundled NATS (which has the DEMO account only), on another account. */}}
{{- define "signoff.tenantsFile" -}}
{{- if empty .Values.tenants -}}
{{- fail "tenants: at least one tenant is required (its NATS account and users' public keys; genkeys writes the DEMO tenant's to keys/tenants.yaml)" -}}
{{- end -}}
{{- $list := list -}}
{{- range $i, $t := .Values.tenants -}}
{{- if and $.Values.nats.bundled.enabled (ne $t.account "DEMO") -}}
{{- fail (printf "tenants[%d].account: %q is not an account of the bundled NATS, which has DEMO only" $i $t.account) -}}
{{- end -}}
{{- $c := deepCopy $t -}}
{{- if not (get $c "policy") -}}{{- $_ := set $c "policy" "/etc/signoff/policy/policy.yaml" -}}{{- end -}}
{{- $list = append $list $c -}}
{{- end -}}
{{- toYaml (dict "tenants" $list) -}}
{{- end -}}

{{/* The public keys of every tenant's approver bots, comma-separated: the
brokers trust response signatures by these (SIGNOFF_APPROVER_KEYS). */}}
{{- define "signoff.approverKeys" -}}
{{- $keys := list -}}
{{- range .Values.tenants -}}{{- range (get . "bots" | default list) -}}{{- $keys = append $keys .user -}}{{- end -}}{{- end -}}
{{- join "," $keys -}}
{{- end -}}
