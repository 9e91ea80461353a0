{{/* Name of every object of the release. */}}
{{- define "seedlet-agent.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels selecting the release's pods. */}}
{{- define "seedlet-agent.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "seedlet-agent.labels" -}}
{{ include "seedlet-agent.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Name of the bootstrap kubeconfig Secret, empty without bootstrap. */}}
{{- define "seedlet-agent.bootstrapSecret" -}}
{{- if and .Values.bootstrap.kubeconfig .Values.bootstrap.existingSecret -}}
{{- fail "set only one of bootstrap.kubeconfig and bootstrap.existingSecret" -}}
{{- end -}}
{{- if .Values.bootstrap.kubeconfig -}}
{{- .Values.bootstrap.secretName -}}
{{- else -}}
{{- .Values.bootstrap.existingSecret -}}
{{- end -}}
{{- end -}}

{{/* The GardenletConfiguration: config values plus what the chart owns. */}}
{{- define "seedlet-agent.config" -}}
{{- $seedName := required "config.seedConfig.metadata.name is required: the name of the Seed to register" .Values.config.seedConfig.metadata.name -}}
{{- $garden := deepCopy (default (dict) .Values.config.gardenClientConnection) -}}
{{- $_ := set $garden "kubeconfigSecret" (dict "name" .Values.gardenKubeconfigSecret "namespace" .Release.Namespace) -}}
{{- $bootstrap := include "seedlet-agent.bootstrapSecret" . -}}
{{- if $bootstrap -}}
{{- $_ := set $garden "bootstrapKubeconfig" (dict "name" $bootstrap "namespace" .Release.Namespace) -}}
{{- end -}}
{{- $config := deepCopy .Values.config -}}
{{- $_ := set $config "apiVersion" "gardenlet.config.gardener.cloud/v1alpha1" -}}
{{- $_ := set $config "kind" "GardenletConfiguration" -}}
{{- $_ := set $config "gardenClientConnection" $garden -}}
{{- $_ := set $config "leaderElection" (dict "leaderElect" true "resourceLock" "leases" "resourceNamespace" .Release.Namespace "resourceName" (printf "%s-leader-election" (include "seedlet-agent.fullname" .))) -}}
{{- $_ := set $config "server" (dict "healthProbes" (dict "port" .Values.ports.health) "metrics" (dict "port" .Values.ports.metrics)) -}}
{{- toYaml $config -}}
{{- end -}}
