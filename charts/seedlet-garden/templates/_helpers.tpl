{{/* Name of every namespaced object of the release. */}}
{{- define "seedlet-garden.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels selecting the release's pods. */}}
{{- define "seedlet-garden.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "seedlet-garden.labels" -}}
{{ include "seedlet-garden.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The GardenControllerConfiguration: config values plus what the chart owns. */}}
{{- define "seedlet-garden.config" -}}
{{- $config := deepCopy .Values.config -}}
{{- $_ := set $config "apiVersion" "seedlet.gardener.cloud/v1alpha1" -}}
{{- $_ := set $config "kind" "GardenControllerConfiguration" -}}
{{- $_ := set $config "leaderElection" (dict "leaderElect" true "resourceLock" "leases" "resourceNamespace" .Release.Namespace "resourceName" (printf "%s-leader-election" (include "seedlet-garden.fullname" .))) -}}
{{- $_ := set $config "server" (dict "healthProbes" (dict "port" .Values.ports.health) "metrics" (dict "port" .Values.ports.metrics)) -}}
{{- if .Values.webhooks.enabled -}}
{{- $_ := set $config "webhooks" (dict "server" (dict "port" .Values.webhooks.port) "tls" (dict "serverCertDir" "/etc/seedlet/webhook-tls")) -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}

{{/* Name of the webhooks' Service (and of the generated TLS Secret). */}}
{{- define "seedlet-garden.webhooks" -}}
{{- printf "%s-webhooks" (include "seedlet-garden.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
