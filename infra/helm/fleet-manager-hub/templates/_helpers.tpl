{{/* Labels every object carries; component is the runbook's selector (app.kubernetes.io/component=api). */}}
{{- define "fm-hub.labels" -}}
app.kubernetes.io/name: fleet-manager
app.kubernetes.io/part-of: fleet-manager
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
app.kubernetes.io/component: {{ .component }}
fleet-manager.nscale.com/environment: {{ .root.Values.environment }}
{{- end }}

{{- define "fm-hub.selector" -}}
app.kubernetes.io/name: fleet-manager
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "fm-hub.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* Non-root, nothing written outside /tmp (an emptyDir), no privilege. */}}
{{- define "fm-hub.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "fm-hub.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end }}

{{/* Vault key of an item: <environment>/<deployment>/<item> under the fleet-manager KV-v2 mount. */}}
{{- define "fm-hub.vaultKey" -}}
{{ .root.Values.environment }}/{{ .root.Values.deployment }}/{{ .item }}
{{- end }}

{{/* FM_EXPECTED_SATELLITES: the list with each entry's environment defaulting to the release's. */}}
{{- define "fm-hub.expectedSatellites" -}}
{{- $out := list -}}
{{- range .Values.fleetManager.hub.expectedSatellites -}}
{{- $out = append $out (dict "name" .name "sites" .sites "environment" (.environment | default $.Values.environment)) -}}
{{- end -}}
{{- $out | toJson -}}
{{- end }}

{{- /* The hub's NetBox settings (FM_NETBOX_DEVICE_FILTERS): the clusters each site's agent ingests. */ -}}
{{- define "fm-hub.netboxDeviceFilters" -}}
{{- $bySite := dict -}}
{{- range .Values.fleetManager.hub.netboxAgent.deviceFilters -}}
{{- $_ := set $bySite .site (append (get $bySite .site | default list) (.cluster | toString)) -}}
{{- end -}}
{{- $out := list -}}
{{- range $site := keys $bySite | sortAlpha -}}
{{- $out = append $out (dict "site" $site "clusters" (get $bySite $site)) -}}
{{- end -}}
{{- $out | toJson -}}
{{- end }}
