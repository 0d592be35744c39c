{{/* Labels every object carries; component is the runbook's selector (app.kubernetes.io/component=openstack-agent). */}}
{{- define "fm-sat.labels" -}}
app.kubernetes.io/name: fleet-manager
app.kubernetes.io/part-of: fleet-manager
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
app.kubernetes.io/component: {{ .component }}
fleet-manager.nscale.com/environment: {{ .root.Values.environment }}
fleet-manager.nscale.com/satellite: {{ .root.Values.satelliteName }}
{{- end }}

{{- define "fm-sat.selector" -}}
app.kubernetes.io/name: fleet-manager
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* The Temporal frontend's host:port, generated: not a site input. */}}
{{- define "fm-sat.temporalHost" -}}
{{ .Values.temporal.frontendService }}.{{ .Values.temporal.kubernetesNamespace }}.svc.cluster.local:{{ .Values.temporal.port }}
{{- end }}

{{/* Vault key of an item: <environment>/<satelliteName>/<item> under the fleet-manager KV-v2 mount. */}}
{{- define "fm-sat.vaultKey" -}}
{{ .root.Values.environment }}/{{ .root.Values.satelliteName }}/{{ .item }}
{{- end }}

{{/* What every process reads (apps/satellite-agents/src/runtime/config.ts). */}}
{{- define "fm-sat.commonEnv" -}}
- { name: FM_HUB_URL, value: {{ .root.Values.fleetManager.satellite.hubUrl | quote }} }
- { name: FM_CLIENT_ID, value: "{{ .clientPrefix }}-{{ .root.Values.satelliteName }}" }
- name: FM_CLIENT_SECRET
  valueFrom:
    secretKeyRef: { name: fleet-manager-satellite-hub-clients, key: {{ .agent }} }
- { name: FM_SATELLITE, value: {{ .root.Values.satelliteName | quote }} }
- { name: FM_SITE, value: {{ .root.Values.siteSlug | quote }} }
- { name: METRICS_PORT, value: "9464" }
- { name: LOG_LEVEL, value: {{ .root.Values.fleetManager.satellite.logLevel | quote }} }
{{- end }}

{{- define "fm-sat.temporalEnv" -}}
- { name: TEMPORAL_ADDRESS, value: {{ include "fm-sat.temporalHost" . | quote }} }
- { name: TEMPORAL_NAMESPACE, value: {{ .Values.temporal.namespace | quote }} }
{{- end }}

{{/* The clouds.yaml of each Ironic instance the site uses, as files. */}}
{{- define "fm-sat.openstackEnv" -}}
- { name: OPENSTACK_OVERCLOUD_CLOUDS_FILE, value: /etc/fleet-manager/openstack/overcloud/clouds.yaml }
{{- if .Values.fleetManager.satellite.openstack.undercloudsEnabled }}
- { name: OPENSTACK_UNDERCLOUD_CLOUDS_FILE, value: /etc/fleet-manager/openstack/undercloud/clouds.yaml }
{{- end }}
{{- end }}

{{- define "fm-sat.openstackMounts" -}}
- { name: openstack-overcloud, mountPath: /etc/fleet-manager/openstack/overcloud, readOnly: true }
{{- if .Values.fleetManager.satellite.openstack.undercloudsEnabled }}
- { name: openstack-undercloud, mountPath: /etc/fleet-manager/openstack/undercloud, readOnly: true }
{{- end }}
{{- end }}

{{- define "fm-sat.openstackVolumes" -}}
- name: openstack-overcloud
  secret:
    secretName: fleet-manager-satellite-openstack
    items: [{ key: overcloud-clouds.yaml, path: clouds.yaml }]
{{- if .Values.fleetManager.satellite.openstack.undercloudsEnabled }}
- name: openstack-undercloud
  secret:
    secretName: fleet-manager-satellite-openstack
    items: [{ key: undercloud-clouds.yaml, path: clouds.yaml }]
{{- end }}
{{- end }}

{{/*
One process of the satellite as its own Deployment: fleet-manager-satellite-<component>, container
<component>, the image's node running apps/satellite-agents/dist/main.js <process>; non-root, read-only
root file system, /healthz and /readyz probes and /metrics on port 9464.
Arguments: root, component, process, env (YAML list), volumes, mounts (YAML lists), resources.
*/}}
{{- define "fm-sat.deployment" -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: fleet-manager-satellite-{{ .component }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "fm-sat.labels" . | nindent 4 }}
spec:
  # One process per site and kind: the hub accepts each agent's view of its site from one writer.
  replicas: 1
  strategy:
    type: Recreate
  selector:
    matchLabels:
      {{- include "fm-sat.selector" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "fm-sat.labels" . | nindent 8 }}
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        fsGroup: 65532
        seccompProfile:
          type: RuntimeDefault
      # SIGTERM lets a running cycle or activity finish (FM_SHUTDOWN_TIMEOUT_MS, 10 s) and exits 0.
      terminationGracePeriodSeconds: 30
      containers:
        - name: {{ .component }}
          image: {{ .root.Values.image.repository }}:{{ .root.Values.image.tag | default .root.Chart.AppVersion }}
          imagePullPolicy: {{ .root.Values.image.pullPolicy }}
          args: ["apps/satellite-agents/dist/main.js", {{ .process | quote }}]
          ports:
            - name: metrics
              containerPort: 9464
          env:
            {{- .env | nindent 12 }}
          livenessProbe:
            httpGet: { path: /healthz, port: metrics }
            periodSeconds: 10
            failureThreshold: 3
          readinessProbe:
            httpGet: { path: /readyz, port: metrics }
            periodSeconds: 10
          resources:
            {{- toYaml .resources | nindent 12 }}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: [ALL]
          volumeMounts:
            - { name: tmp, mountPath: /tmp }
            {{- with .mounts }}
            {{- . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir: {}
        {{- with .volumes }}
        {{- . | nindent 8 }}
        {{- end }}
{{- end }}
