#!/usr/bin/env bash
# A real local Kubernetes control plane for plumb's e2e tests:
# etcd + kube-apiserver + kube-controller-manager (upstream code, built from
# Go modules into test/cluster/bin/plumb-cluster) and kubelet-sim, a fake
# node that schedules pods and marks them Running/Ready. Loopback only.
# PLUMB_CLUSTER_NODE=kubelet: a real node instead (kubelet, kube-scheduler, containerd;
# node.sh).
#
#   test/cluster/cluster.sh build          build (or refresh) the binary
#   test/cluster/cluster.sh start DIR      start a cluster whose state lives in DIR
#   test/cluster/cluster.sh stop DIR       stop it (idempotent)
#   test/cluster/cluster.sh status DIR     exit 0 if its processes run and it is ready
#
# After start: DIR/kubeconfig (admin, client cert), DIR/kubeconfig-token
# (admin, bearer token), DIR/token, DIR/ca.crt, DIR/env (shell-sourceable:
# PLUMB_CLUSTER_SERVER, KUBECONFIG, ...), logs DIR/*.log, pids DIR/*.pid.
# Starting again on an existing DIR keeps its certificates and etcd data;
# remove DIR for a fresh cluster. See README.md for the env knobs.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="${PLUMB_CLUSTER_BIN:-$HERE/bin/plumb-cluster}"
NODE_NAME="" # resolved by load_state: env, then DIR/cluster.env, then plumb-node
SERVICE_CIDR="${PLUMB_CLUSTER_SERVICE_CIDR:-10.96.0.0/16}"
FIRST_SERVICE_IP="${PLUMB_CLUSTER_FIRST_SERVICE_IP:-10.96.0.1}"
# How long start waits for the components to be ready: only a hang should reach it (at load 20
# on 2 cores a start takes a minute or two).
START_TIMEOUT="${PLUMB_CLUSTER_START_TIMEOUT:-900}"
COMPONENTS=(kubelet-sim kube-controller-manager kube-apiserver etcd) # stop order
# shellcheck source=node.sh
. "$HERE/node.sh" # the real node, PLUMB_CLUSTER_NODE=kubelet (instead of kubelet-sim)

die() { echo "cluster.sh: $*" >&2; exit 1; }
log() { echo "cluster.sh: $*" >&2; }

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

# --- build -------------------------------------------------------------------

needs_build() {
  [[ -x "$BIN" ]] || return 0
  [[ -n "$(find "$HERE/go.mod" "$HERE/go.sum" "$HERE/cmd" -newer "$BIN" \
            \( -name '*.go' -o -name go.mod -o -name go.sum \) -print -quit 2>/dev/null)" ]]
}

build() {
  command -v go >/dev/null 2>&1 || die "go not found in PATH (need Go >= 1.25)"
  mkdir -p "$(dirname "$BIN")"
  local lock
  lock="$(dirname "$BIN")/.build.lock"
  exec 9>"$lock"
  if command -v flock >/dev/null 2>&1; then flock 9; fi
  if [[ "${1:-}" != force ]] && ! needs_build; then exec 9>&-; return 0; fi
  if [[ -x "$BIN" ]]; then
    log "rebuilding $BIN (sources changed)"
  else
    log "building $BIN (the first build downloads ~600 MB of modules and compiles Kubernetes: 7-15 min on 2 cores)"
  fi
  local t0=$SECONDS tmp="$BIN.tmp.$$" v ldflags ticker
  # Stamp the Kubernetes version (kubectl version, /version, discovery clients).
  v="$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$HERE/go.mod")"
  ldflags="-s -w"
  local pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=$(echo "${v#v}" | cut -d. -f1)"
    ldflags+=" -X $pkg.gitMinor=$(echo "${v#v}" | cut -d. -f2) -X $pkg.gitTreeState=clean"
  done
  progress "building" & ticker=$!
  if ! (cd "$HERE" && go build -trimpath -buildvcs=false -ldflags="$ldflags" -o "$tmp" ./cmd/plumb-cluster); then
    kill "$ticker" 2>/dev/null || true
    rm -f "$tmp"; exec 9>&-
    die "go build failed"
  fi
  kill "$ticker" 2>/dev/null || true
  mv -f "$tmp" "$BIN"
  exec 9>&-
  log "built in $((SECONDS - t0))s"
}

# --- helpers -----------------------------------------------------------------

# progress WHAT: every 30 s, say that WHAT is still going, for how long, and how big the Go
# module cache has grown (a first build is 7-15 silent minutes otherwise). Run it in the
# background and kill it when done.
progress() {
  local start cache
  start=$(date +%s)
  cache="$(go env GOMODCACHE 2>/dev/null || true)"
  while sleep 30; do
    local size=""
    [[ -n "$cache" && -d "$cache" ]] && size=", module cache $(du -sh "$cache" 2>/dev/null | cut -f1)"
    log "still $1 ($(( $(date +%s) - start ))s so far$size)"
  done
}

abs_dir() { mkdir -p "$1" && (cd "$1" && pwd -P); }

# pid_of DIR NAME: print the pid if that component of DIR's cluster is alive.
pid_of() {
  local dir="$1" name="$2" pidfile="$1/$2.pid" pid
  [[ -f "$pidfile" ]] || return 1
  pid="$(cat "$pidfile" 2>/dev/null)" || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ -r "/proc/$pid/cmdline" ]] || return 1
  # Guard against pid reuse: the process must be ours and about this DIR.
  local cmd; cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
  [[ "$cmd" == *"$name"* && "$cmd" == *"$dir/"* ]] || return 1
  echo "$pid"
}

# dir_pids NAME: pids of DIR's NAME component found by scanning /proc (also
# finds processes whose pid files are gone, e.g. after rm -rf DIR).
dir_pids() {
  local f args
  for f in /proc/[0-9]*/cmdline; do
    { mapfile -d '' args <"$f"; } 2>/dev/null || continue
    ((${#args[@]} > 2)) || continue
    [[ "${args[0]}" == *plumb-cluster && "${args[1]}" == "$1" && "${args[*]}" == *"=$DIR/"* ]] || continue
    f="${f#/proc/}"
    echo "${f%/cmdline}"
  done
}

# alive PID: running and not a zombie (exited children of a detached
# process wait for init to reap them)
alive() {
  local _pid _comm state
  { read -r _pid _comm state _ <"/proc/$1/stat"; } 2>/dev/null || return 1
  [[ "$state" != Z && "$state" != X ]]
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

b64() { base64 | tr -d '\n'; }

gen_certs() {
  local d="$1/pki"
  command -v openssl >/dev/null 2>&1 || die "openssl not found: apt-get install openssl"
  mkdir -p "$d"
  [[ -f "$d/done" ]] && return 0
  log "generating certificates in $d"
  (
    cd "$d"
    umask 077
    key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
    key ca.key
    openssl req -x509 -new -key ca.key -sha256 -days 3650 -subj "/CN=plumb-cluster-ca" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -out ca.crt 2>/dev/null
    # sign NAME SUBJECT EXTENSIONS
    sign() {
      key "$1.key"
      openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
      printf '%s\n' "$3" >"$1.ext"
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -sha256 \
        -extfile "$1.ext" -out "$1.crt" 2>/dev/null
      rm -f "$1.csr" "$1.ext"
    }
    sign apiserver "/CN=kube-apiserver" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost,IP:$FIRST_SERVICE_IP,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
    sign admin "/O=system:masters/CN=plumb-admin" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
    sign controller-manager "/O=system:masters/CN=system:kube-controller-manager" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
    sign kubelet-sim "/O=system:masters/CN=plumb-kubelet-sim" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
    key sa.key
    openssl pkey -in sa.key -pubout -out sa.pub 2>/dev/null
    openssl rand -hex 32 >admin.token
    printf '%s,plumb-admin-token,plumb-admin-token,"system:masters"\n' "$(cat admin.token)" >tokens.csv
    rm -f ca.srl
    touch ./done
  )
}

# write_kubeconfig FILE SERVER USER-NAME (cert NAME | token TOKEN)
write_kubeconfig() {
  local file="$1" server="$2" user="$3" kind="$4" val="$5" d="$DIR/pki" auth
  if [[ "$kind" == cert ]]; then
    auth="    client-certificate-data: $(b64 <"$d/$val.crt")
    client-key-data: $(b64 <"$d/$val.key")"
  else
    auth="    token: $val"
  fi
  (umask 077; cat >"$file.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: plumb
  cluster:
    server: $server
    certificate-authority-data: $(b64 <"$d/ca.crt")
users:
- name: $user
  user:
$auth
contexts:
- name: plumb
  context:
    cluster: plumb
    user: $user
    namespace: default
current-context: plumb
EOF
  mv -f "$file.tmp" "$file")
}

launch() { # NAME ARGS...: start a component in the background, own session, logs to DIR
  local name="$1" pid cmd; shift
  setsid "$BIN" "$name" "$@" </dev/null >>"$DIR/$name.log" 2>&1 &
  pid=$!
  # The pid file once the process runs the component (until its exec it is a copy of this
  # shell, which pid_of would take for an exited component).
  while alive "$pid"; do
    cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || break
    [[ "$cmd" != *" $name "* ]] || break
    sleep 0.01
  done
  echo "$pid" >"$DIR/$name.pid"
}

tail_logs() {
  local n
  for n in "$@"; do
    [[ -f "$DIR/$n.log" ]] || continue
    echo "----- tail of $DIR/$n.log -----" >&2
    tail -n 40 "$DIR/$n.log" >&2
  done
}

fail_start() { # MSG COMPONENTS-TO-SHOW...
  local msg="$1"; shift
  log "start failed: $msg"
  tail_logs "$@"
  stop_cluster quiet
  exit 1
}

# wait_ready NAME WHAT CHECK...: wait until CHECK succeeds, while every component started so far
# lives, until the start's deadline; every 30 s say what it is still waiting for and what the
# last probe said (a loaded machine takes minutes, and silence looks like a hang).
wait_ready() {
  local name="$1" what="$2"; shift 2
  local out c t0=$SECONDS said=$SECONDS
  while ! out="$("$@" 2>&1)"; do
    for c in $(running_components); do
      [[ -f "$DIR/$c.pid" ]] || continue
      pid_of "$DIR" "$c" >/dev/null || fail_start "$c exited" "$c"
    done
    ((SECONDS < DEADLINE)) ||
      fail_start "$name not ready after $((SECONDS - START_T0))s: ${out:0:300}" "$name" "$(node_log)"
    if ((SECONDS - said >= 30)); then
      said=$SECONDS
      log "still waiting for $what ($((SECONDS - t0))s so far): ${out:0:200}"
    fi
    sleep 0.3
  done
  log "$what ($((SECONDS - t0))s)"
}

# etcd_healthy PORT: etcd's /health on its client port says true (plain HTTP on loopback).
etcd_healthy() {
  (
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf 'GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
    reply="$(timeout 30 cat <&3)" || true
    [[ "$reply" == *'"health":"true"'* ]] || { echo "etcd /health: ${reply##*$'\n'}"; exit 1; }
  )
}

# The probes' own deadline: long enough that a loaded machine answers within it (the wait
# around them retries until the start's deadline).
PROBE_TIMEOUT=30s

# --- start / stop ------------------------------------------------------------

# load_state: what DIR used last time (DIR/cluster.env), node name env override.
ETCD_PORT="" ETCD_PEER_PORT="" APISERVER_PORT=""
load_state() {
  if [[ -f "$DIR/cluster.env" ]]; then
    # shellcheck disable=SC1091
    . "$DIR/cluster.env"
  fi
  NODE_NAME="${PLUMB_CLUSTER_NODE_NAME:-${NODE_NAME:-plumb-node}}"
}

START_T0=0 DEADLINE=0
start_cluster() {
  build
  START_T0=$SECONDS DEADLINE=$((SECONDS + START_TIMEOUT))
  local c
  for c in "${COMPONENTS[@]}"; do
    if [[ -n "$(dir_pids "$c")" ]]; then
      die "a cluster is already running in $DIR ($c); run: $0 stop $DIR"
    fi
  done
  [[ -z "$(node_pids)" ]] || die "a node is already running in $DIR; run: $0 stop $DIR"
  rm -f "$DIR"/*.pid
  gen_certs "$DIR"

  # Ports: env wins, then the ones DIR used last time (if still free), then free ones.
  load_state
  node_mode_from_env
  if node_real; then node_build; fi
  if [[ -n "$APISERVER_PORT" ]]; then
    for c in "$ETCD_PORT" "$ETCD_PEER_PORT" "$APISERVER_PORT"; do
      port_free "$c" || { ETCD_PORT=""; ETCD_PEER_PORT=""; APISERVER_PORT=""; break; }
    done
  fi
  if [[ -z "$APISERVER_PORT" ]]; then
    local free; mapfile -t free < <("$BIN" freeport 3)
    ETCD_PORT="${free[0]}" ETCD_PEER_PORT="${free[1]}" APISERVER_PORT="${free[2]}"
  fi
  ETCD_PORT="${PLUMB_CLUSTER_ETCD_PORT:-$ETCD_PORT}"
  ETCD_PEER_PORT="${PLUMB_CLUSTER_ETCD_PEER_PORT:-$ETCD_PEER_PORT}"
  APISERVER_PORT="${PLUMB_CLUSTER_APISERVER_PORT:-$APISERVER_PORT}"
  printf 'ETCD_PORT=%s\nETCD_PEER_PORT=%s\nAPISERVER_PORT=%s\nNODE_NAME=%q\n' \
    "$ETCD_PORT" "$ETCD_PEER_PORT" "$APISERVER_PORT" "$NODE_NAME" >"$DIR/cluster.env"
  local server="https://127.0.0.1:$APISERVER_PORT" p="$DIR/pki"

  write_kubeconfig "$DIR/kubeconfig" "$server" plumb-admin cert admin
  write_kubeconfig "$DIR/kubeconfig-token" "$server" plumb-admin-token token "$(cat "$p/admin.token")"
  write_kubeconfig "$DIR/controller-manager.kubeconfig" "$server" kube-controller-manager cert controller-manager
  write_kubeconfig "$DIR/kubelet-sim.kubeconfig" "$server" plumb-kubelet-sim cert kubelet-sim
  cp "$p/ca.crt" "$DIR/ca.crt"
  if node_real; then node_prepare "$server"; fi
  (umask 077; cp "$p/admin.token" "$DIR/token")
  for c in "${COMPONENTS[@]}"; do : >"$DIR/$c.log"; done

  # extra flags per component (word-split, no quoting support)
  local apiserver_args kcm_args sim_args
  read -r -a apiserver_args <<<"${PLUMB_CLUSTER_APISERVER_ARGS:-}"
  read -r -a kcm_args <<<"${PLUMB_CLUSTER_CONTROLLER_MANAGER_ARGS:-}"
  read -r -a sim_args <<<"${PLUMB_CLUSTER_KUBELET_SIM_ARGS:-}"
  mapfile -t -O "${#apiserver_args[@]}" apiserver_args < <(node_apiserver_args)

  # One component at a time, each once the one it talks to is ready: a component started early
  # gives up on its own deadline (kube-controller-manager waits 10 s for the API server's
  # /healthz), which a loaded machine passes.
  launch etcd --data-dir="$DIR/etcd" \
    --listen-client="127.0.0.1:$ETCD_PORT" --listen-peer="127.0.0.1:$ETCD_PEER_PORT"
  wait_ready etcd "etcd healthy" etcd_healthy "$ETCD_PORT"

  launch kube-apiserver \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
    --cert-dir="$DIR/apiserver-certs" \
    --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" \
    --client-ca-file="$p/ca.crt" --token-auth-file="$p/tokens.csv" \
    --authorization-mode=Node,RBAC \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
    --endpoint-reconciler-type=none \
    --allow-privileged=true --profiling=false --v="${PLUMB_CLUSTER_APISERVER_V:-1}" \
    "${apiserver_args[@]}"
  wait_ready kube-apiserver "kube-apiserver /readyz" \
    "$BIN" kubectl --kubeconfig="$DIR/kubeconfig" --cache-dir="$DIR/kubectl-cache" \
      --request-timeout="$PROBE_TIMEOUT" get --raw=/readyz

  launch kube-controller-manager \
    --kubeconfig="$DIR/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$DIR/controller-manager.kubeconfig" \
    --authorization-kubeconfig="$DIR/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port=0 \
    --leader-elect=false --use-service-account-credentials="${PLUMB_CLUSTER_SA_CREDENTIALS:-false}" \
    --controllers='*' \
    --service-account-private-key-file="$p/sa.key" --root-ca-file="$p/ca.crt" \
    --cluster-signing-cert-file="$p/ca.crt" --cluster-signing-key-file="$p/ca.key" \
    --flex-volume-plugin-dir="$DIR/flexvolume" \
    --profiling=false --v="${PLUMB_CLUSTER_CONTROLLER_MANAGER_V:-1}" \
    "${kcm_args[@]}"
  # Working: it has created the default ServiceAccount and the root CA ConfigMap.
  wait_ready kube-controller-manager "kube-controller-manager working" \
    "$BIN" check-ready --kubeconfig="$DIR/kubeconfig" --node-name="" --timeout="$PROBE_TIMEOUT"

  if node_real; then
    node_start
  else
    launch kubelet-sim --kubeconfig="$DIR/kubelet-sim.kubeconfig" --node-name="$NODE_NAME" \
      "${sim_args[@]}"
  fi
  wait_ready "$(node_log)" "node $NODE_NAME Ready" \
    "$BIN" check-ready --kubeconfig="$DIR/kubeconfig" --node-name="$NODE_NAME" --timeout="$PROBE_TIMEOUT"

  cat >"$DIR/env" <<EOF
export KUBECONFIG='$DIR/kubeconfig'
export PLUMB_CLUSTER_DIR='$DIR'
export PLUMB_CLUSTER_SERVER='$server'
export PLUMB_CLUSTER_TOKEN_FILE='$DIR/token'
export PLUMB_CLUSTER_CA_FILE='$DIR/ca.crt'
export PLUMB_CLUSTER_NODE_NAME='$NODE_NAME'
export PLUMB_CLUSTER_NODE='$NODE_MODE'
EOF
  log "cluster ready in $((SECONDS - START_T0))s: $server (kubeconfig: $DIR/kubeconfig)"
}

stop_cluster() {
  local quiet="${1:-}" c pid pids=() n
  node_stop
  for c in "${COMPONENTS[@]}"; do
    for pid in $(dir_pids "$c"); do
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
      # let the clients go before the servers they talk to
      if [[ "$c" != etcd ]]; then
        for n in $(seq 1 30); do alive "$pid" || break; sleep 0.1; done
      fi
    done
  done
  for n in $(seq 1 100); do
    local any=0
    for pid in "${pids[@]}"; do if alive "$pid"; then any=1; fi; done
    ((any)) || break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do
    if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  for c in "${COMPONENTS[@]}"; do rm -f "$DIR/$c.pid"; done
  [[ -n "$quiet" ]] || log "stopped cluster in $DIR (${#pids[@]} processes)"
}

status_cluster() {
  local c ok=0
  load_state
  for c in $(running_components); do
    if pid="$(pid_of "$DIR" "$c")"; then echo "$c: running (pid $pid)"; else echo "$c: not running"; ok=1; fi
  done
  ((ok == 0)) || return 1
  [[ -x "$BIN" ]] || return 1
  "$BIN" check-ready --kubeconfig="$DIR/kubeconfig" --node-name="$NODE_NAME" --timeout="$PROBE_TIMEOUT"
}

cmd="${1:-}"
case "$cmd" in
  build)
    build "${2:-}"
    node_mode_from_env
    if node_real; then node_build; fi ;;
  start|stop|status)
    [[ $# -eq 2 ]] || usage
    if [[ "$cmd" == start ]]; then
      DIR="$(abs_dir "$2")"
    else
      DIR="$(realpath -m "$2")" # DIR may be gone while its processes still run
    fi
    case "$cmd" in
      start) start_cluster ;;
      stop) stop_cluster ;;
      status) status_cluster ;;
    esac ;;
  *) usage ;;
esac
