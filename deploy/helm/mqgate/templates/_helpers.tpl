{{/* Names and labels, the usual way. */}}
{{- define "mqgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "mqgate.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "mqgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mqgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "mqgate.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "mqgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: {{ .Values.mode }}
{{- end -}}

{{- define "mqgate.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "mqgate.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "mqgate.handleKeySecret" -}}
{{- default (printf "%s-handle-key" (include "mqgate.fullname" .)) .Values.jetstream.handleKey.existingSecret -}}
{{- end -}}

{{- define "mqgate.scheme" -}}
{{- if .Values.tls.existingSecret -}}HTTPS{{- else -}}HTTP{{- end -}}
{{- end -}}

{{/*
mqgate.bytes: a Kubernetes memory quantity ("512Mi", "1.5Gi", "1G",
"268435456") as a whole number of bytes.
*/}}
{{- define "mqgate.bytes" -}}
{{- $q := toString . -}}
{{- $units := dict "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "k" 1000.0 "K" 1000.0 "M" 1000000.0 "G" 1000000000.0 "T" 1000000000000.0 -}}
{{- $mult := 1.0 -}}
{{- $num := $q -}}
{{- range $suffix, $m := $units -}}
{{- if and (hasSuffix $suffix $q) (eq $mult 1.0) -}}
{{- $mult = $m -}}
{{- $num = trimSuffix $suffix $q -}}
{{- end -}}
{{- end -}}
{{- if not (regexMatch "^[0-9]+(\\.[0-9]+)?$" $num) -}}
{{- fail (printf "resources.limits.memory %q: want a quantity such as 512Mi or 2Gi" $q) -}}
{{- end -}}
{{- mulf (float64 $num) $mult | floor | int64 -}}
{{- end -}}

{{/* GOMEMLIMIT: goMemLimitPercent of the memory limit, in bytes. */}}
{{- define "mqgate.goMemLimit" -}}
{{- $limit := include "mqgate.bytes" .Values.resources.limits.memory | float64 -}}
{{- divf (mulf $limit (float64 .Values.goMemLimitPercent)) 100.0 | floor | int64 -}}
{{- end -}}

{{/* The checks both modes share; a bad combination fails the render. */}}
{{- define "mqgate.validate" -}}
{{- if not (has .Values.mode (list "embedded" "jetstream")) -}}
{{- fail (printf "mode %q: want embedded or jetstream" .Values.mode) -}}
{{- end -}}
{{- if and (eq .Values.mode "embedded") (ne (int .Values.replicaCount) 1) -}}
{{- fail (printf "mode embedded runs exactly one replica (replicaCount is %v): the embedded store is single-writer, a second pod cannot share its volume or its data. Scale out with mode jetstream (docs/kubernetes.md)." .Values.replicaCount) -}}
{{- end -}}
{{- if lt (int .Values.replicaCount) 1 -}}
{{- fail "replicaCount must be at least 1" -}}
{{- end -}}
{{- if not (has .Values.shutdown.method (list "delay" "preStopSleep")) -}}
{{- fail (printf "shutdown.method %q: want delay or preStopSleep" .Values.shutdown.method) -}}
{{- end -}}
{{- if or (lt (int .Values.shutdown.timeoutSeconds) 1) (lt (int .Values.shutdown.delaySeconds) 0) (lt (int .Values.shutdown.closeSeconds) 0) -}}
{{- fail "shutdown.timeoutSeconds must be at least 1, delaySeconds and closeSeconds at least 0" -}}
{{- end -}}
{{- if or (lt (int .Values.goMemLimitPercent) 10) (gt (int .Values.goMemLimitPercent) 100) -}}
{{- fail "goMemLimitPercent must be between 10 and 100" -}}
{{- end -}}
{{- if and (not .Values.apiKeys.existingSecret) (not .Values.insecureOpen) -}}
{{- fail "set apiKeys.existingSecret (a Secret with keys.json, docs/security.md), or insecureOpen=true to serve an open /v1 on purpose: mqgate refuses to listen beyond loopback without API keys" -}}
{{- end -}}
{{- $hk := .Values.jetstream.handleKey.value | toString -}}
{{- if and $hk (not (regexMatch "^[0-9a-fA-F]{64,}$" $hk)) -}}
{{- fail "jetstream.handleKey.value: want 64 or more hex digits (openssl rand -hex 32)" -}}
{{- end -}}
{{- end -}}

{{/*
The pod template both workloads share: one mqgate container, non-root,
read-only root file system, probes on /readyz and /healthz.
*/}}
{{- define "mqgate.podTemplate" -}}
{{- $delay := int .Values.shutdown.delaySeconds -}}
{{- $binDelay := $delay -}}
{{- if eq .Values.shutdown.method "preStopSleep" -}}{{- $binDelay = 0 -}}{{- end -}}
metadata:
  labels:
    {{- include "mqgate.selectorLabels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- $ann := deepCopy (.Values.podAnnotations | default dict) }}
  {{- if and (eq .Values.mode "jetstream") (not .Values.jetstream.handleKey.existingSecret) }}
  {{- /* A changed key restarts the pods: each reads it once, at start. */}}
  {{- $_ := set $ann "checksum/handle-key" (include (print $.Template.BasePath "/secret.yaml") . | sha256sum) }}
  {{- end }}
  {{- with $ann }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  serviceAccountName: {{ include "mqgate.serviceAccountName" . }}
  automountServiceAccountToken: false
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  # --shutdown-delay + --shutdown-timeout + time to close the store.
  terminationGracePeriodSeconds: {{ add $delay .Values.shutdown.timeoutSeconds .Values.shutdown.closeSeconds }}
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    runAsGroup: 65532
    fsGroup: 65532
    fsGroupChangePolicy: OnRootMismatch
    seccompProfile:
      type: RuntimeDefault
  containers:
    - name: mqgate
      image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args:
        - serve
        - --shutdown-delay={{ $binDelay }}s
        - --shutdown-timeout={{ .Values.shutdown.timeoutSeconds }}s
        {{- if eq .Values.mode "jetstream" }}
        - --backend=jetstream
        - --nats-url={{ .Values.jetstream.url }}
        - --nats-replicas={{ .Values.jetstream.natsReplicas }}
        - --handle-key-file=/etc/mqgate/handle/{{ .Values.jetstream.handleKey.secretKey }}
        {{- if .Values.jetstream.credsSecret }}
        - --nats-creds=/etc/mqgate/nats/nats.creds
        {{- end }}
        {{- end }}
        {{- if .Values.apiKeys.existingSecret }}
        - --api-keys=/etc/mqgate/keys/keys.json
        {{- else if .Values.insecureOpen }}
        - --insecure-open
        {{- end }}
        {{- range .Values.extraArgs }}
        - {{ . | quote }}
        {{- end }}
      env:
        - name: MQGATE_ADDR
          value: ":{{ .Values.port }}"
        - name: MQGATE_DATA
          value: /data
        - name: MQGATE_LOG_FORMAT
          value: json
        - name: MQGATE_LOG_LEVEL
          value: {{ .Values.logLevel | quote }}
        {{- if .Values.tls.existingSecret }}
        - name: MQGATE_TLS_CERT
          value: /etc/mqgate/tls/tls.crt
        - name: MQGATE_TLS_KEY
          value: /etc/mqgate/tls/tls.key
        {{- end }}
        {{- if .Values.resources.limits.memory }}
        # {{ .Values.goMemLimitPercent }}% of the memory limit ({{ .Values.resources.limits.memory }}).
        - name: GOMEMLIMIT
          value: {{ include "mqgate.goMemLimit" . | quote }}
        {{- end }}
        {{- with .Values.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      ports:
        - name: http
          containerPort: {{ .Values.port }}
          protocol: TCP
      startupProbe:
        httpGet:
          path: /healthz
          port: http
          scheme: {{ include "mqgate.scheme" . }}
        periodSeconds: {{ .Values.probes.startup.periodSeconds }}
        timeoutSeconds: {{ .Values.probes.startup.timeoutSeconds }}
        failureThreshold: {{ .Values.probes.startup.failureThreshold }}
      readinessProbe:
        httpGet:
          path: /readyz
          port: http
          scheme: {{ include "mqgate.scheme" . }}
        periodSeconds: {{ .Values.probes.readiness.periodSeconds }}
        timeoutSeconds: {{ .Values.probes.readiness.timeoutSeconds }}
        failureThreshold: {{ .Values.probes.readiness.failureThreshold }}
      livenessProbe:
        httpGet:
          path: /healthz
          port: http
          scheme: {{ include "mqgate.scheme" . }}
        periodSeconds: {{ .Values.probes.liveness.periodSeconds }}
        timeoutSeconds: {{ .Values.probes.liveness.timeoutSeconds }}
        failureThreshold: {{ .Values.probes.liveness.failureThreshold }}
      {{- if and (eq .Values.shutdown.method "preStopSleep") (gt $delay 0) }}
      lifecycle:
        preStop:
          sleep:
            seconds: {{ $delay }}
      {{- end }}
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        runAsNonRoot: true
        capabilities:
          drop: [ALL]
      volumeMounts:
        {{- if eq .Values.mode "embedded" }}
        - name: data
          mountPath: /data
        {{- else }}
        - name: handle-key
          mountPath: /etc/mqgate/handle
          readOnly: true
        {{- if .Values.jetstream.credsSecret }}
        - name: nats-creds
          mountPath: /etc/mqgate/nats
          readOnly: true
        {{- end }}
        {{- end }}
        {{- if .Values.apiKeys.existingSecret }}
        - name: api-keys
          mountPath: /etc/mqgate/keys
          readOnly: true
        {{- end }}
        {{- if .Values.tls.existingSecret }}
        - name: tls
          mountPath: /etc/mqgate/tls
          readOnly: true
        {{- end }}
  {{- if or (eq .Values.mode "jetstream") .Values.apiKeys.existingSecret .Values.tls.existingSecret }}
  volumes:
    {{- if eq .Values.mode "jetstream" }}
    - name: handle-key
      secret:
        secretName: {{ include "mqgate.handleKeySecret" . }}
        defaultMode: 0440
    {{- if .Values.jetstream.credsSecret }}
    - name: nats-creds
      secret:
        secretName: {{ .Values.jetstream.credsSecret }}
        defaultMode: 0440
    {{- end }}
    {{- end }}
    {{- if .Values.apiKeys.existingSecret }}
    # Mounted whole (no subPath), so an edit of the Secret reaches the file;
    # the server rereads it on SIGHUP (or at the next rollout).
    - name: api-keys
      secret:
        secretName: {{ .Values.apiKeys.existingSecret }}
        defaultMode: 0440
    {{- end }}
    {{- if .Values.tls.existingSecret }}
    - name: tls
      secret:
        secretName: {{ .Values.tls.existingSecret }}
        defaultMode: 0440
    {{- end }}
  {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
