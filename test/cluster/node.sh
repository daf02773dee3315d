# shellcheck shell=bash
# The real node of the test cluster (PLUMB_CLUSTER_NODE=kubelet), sourced by cluster.sh:
# containerd + runc (Debian packages) with a CNI bridge, the upstream kubelet and
# kube-scheduler (test/cluster/bin/plumb-node), and images built on this machine from
# busybox-static (imported into containerd: nothing is pulled from a registry).
#
# Everything a node leaves on the machine is named after DIR and removed by node_stop:
# processes (found by DIR in their command line), containers (their cgroup tree
# /plumb-<id> in every cgroup v1 hierarchy), mounts under DIR/node, the bridge plumb<id>.
# Needs root, cgroup v1 or v2, overlayfs, network namespaces.

NODE_BIN="${PLUMB_CLUSTER_NODE_BIN:-$HERE/bin/plumb-node}"
NODE_COMPONENTS=(kubelet kube-scheduler containerd) # stop order
# The images every real node has (tests name them): a shell, and the sandbox ("pause") image.
NODE_BUSYBOX_IMAGE="plumb.local/busybox:1"
NODE_PAUSE_IMAGE="plumb.local/pause:1"
NODE_MODE="" NODE_SUBNET_OCTET="" KUBELET_PORT="" # resolved by load_state / node_prepare

node_real() { [[ "$NODE_MODE" == kubelet ]]; }

# node_mode_from_env: PLUMB_CLUSTER_NODE picks the node of a start (default: the simulator).
node_mode_from_env() {
  case "${PLUMB_CLUSTER_NODE:-sim}" in
    sim | "") NODE_MODE=sim ;;
    kubelet) NODE_MODE=kubelet ;;
    *) die "PLUMB_CLUSTER_NODE=${PLUMB_CLUSTER_NODE}: want sim or kubelet" ;;
  esac
}

node_id() { printf '%s' "$DIR" | sha256sum | cut -c1-8; }

node_needs_build() {
  [[ -x "$NODE_BIN" ]] || return 0
  [[ -n "$(find "$HERE/go.mod" "$HERE/go.sum" "$HERE/cmd/plumb-node" -newer "$NODE_BIN" \
            \( -name '*.go' -o -name go.mod -o -name go.sum \) -print -quit 2>/dev/null)" ]]
}

node_build() {
  local missing=() c
  for c in containerd ctr runc containerd-shim-runc-v2 ip; do
    command -v "$c" >/dev/null 2>&1 || missing+=("$c")
  done
  [[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] || missing+=(cni-plugins)
  [[ -x /bin/busybox ]] && /bin/busybox --list >/dev/null 2>&1 || missing+=(busybox)
  if ((${#missing[@]})); then
    die "the real node needs ${missing[*]}: apt-get install containerd runc containernetworking-plugins busybox-static iproute2"
  fi
  [[ "$(ldd /bin/busybox 2>&1 || true)" == *"not a dynamic"* ]] ||
    die "/bin/busybox is not statically linked: apt-get install busybox-static"
  ((EUID == 0)) || die "the real node needs root (containers, mounts, cgroups, network namespaces)"
  local lock="$(dirname "$NODE_BIN")/.build-node.lock"
  mkdir -p "$(dirname "$NODE_BIN")"
  exec 8>"$lock"
  if command -v flock >/dev/null 2>&1; then flock 8; fi
  if ! node_needs_build; then exec 8>&-; return 0; fi
  log "building $NODE_BIN (kubelet + kube-scheduler; after plumb-cluster, most packages come from the Go build cache)"
  local t0=$SECONDS tmp="$NODE_BIN.tmp.$$" v ldflags="-s -w" pkg ticker
  v="$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$HERE/go.mod")"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=$(echo "${v#v}" | cut -d. -f1)"
    ldflags+=" -X $pkg.gitMinor=$(echo "${v#v}" | cut -d. -f2) -X $pkg.gitTreeState=clean"
  done
  progress "building plumb-node" & ticker=$!
  if ! (cd "$HERE" && go build -trimpath -buildvcs=false -ldflags="$ldflags" -o "$tmp" ./cmd/plumb-node); then
    kill "$ticker" 2>/dev/null || true
    rm -f "$tmp"; exec 8>&-
    die "go build of plumb-node failed"
  fi
  kill "$ticker" 2>/dev/null || true
  mv -f "$tmp" "$NODE_BIN"
  exec 8>&-
  log "built plumb-node in $((SECONDS - t0))s"
}

# node_certs: the kubelet's client identity (the Node authorizer's system:node:NAME in
# system:nodes), the scheduler's, and the apiserver's client certificate for the kubelet's
# API (logs, exec). Kept with DIR's other certificates.
node_certs() {
  local d="$DIR/pki"
  [[ -f "$d/node-done" && -f "$d/node-name" && "$(cat "$d/node-name")" == "$NODE_NAME" ]] && return 0
  (
    cd "$d"
    umask 077
    sign() {
      openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null
      openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
      printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' >"$1.ext"
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -sha256 \
        -extfile "$1.ext" -out "$1.crt" 2>/dev/null
      rm -f "$1.csr" "$1.ext"
    }
    sign kubelet "/O=system:nodes/CN=system:node:$NODE_NAME"
    sign kube-scheduler "/CN=system:kube-scheduler"
    sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
    rm -f ca.srl
    printf '%s' "$NODE_NAME" >node-name
    touch node-done
  )
}

# node_apiserver_args: flags the apiserver needs to reach the kubelet's API (kubectl logs/exec).
node_apiserver_args() {
  node_real || return 0
  printf '%s\n' "--kubelet-client-certificate=$DIR/pki/apiserver-kubelet-client.crt" \
    "--kubelet-client-key=$DIR/pki/apiserver-kubelet-client.key" \
    "--kubelet-preferred-address-types=InternalIP"
}

# node_subnet: a /24 for DIR's Pods, 10.244.X.0/24 with X from DIR's hash, moved on while a
# route of this machine already covers it (another node's bridge; DIR's own is fine).
node_subnet() {
  local x n bridge
  bridge="plumb$(node_id)"
  taken() {
    local route
    route="$(ip -4 route show "10.244.$1.0/24" 2>/dev/null)"
    [[ -n "$route" && "$route" != *" dev $bridge "* ]]
  }
  if [[ -n "$NODE_SUBNET_OCTET" ]] && ! taken "$NODE_SUBNET_OCTET"; then return 0; fi
  x=$((16#$(node_id | cut -c1-2)))
  for n in $(seq 0 255); do
    if ! taken $(((x + n) % 256)); then
      NODE_SUBNET_OCTET=$(((x + n) % 256))
      return 0
    fi
  done
  die "no free /24 in 10.244.0.0/16 for the node's Pods"
}

# node_prepare SERVER: configuration, certificates, cgroups and the bridge, before launch.
node_prepare() {
  local server="$1" id n="$DIR/node" cg h
  id="$(node_id)"
  node_certs
  node_subnet
  [[ -n "$KUBELET_PORT" ]] && port_free "$KUBELET_PORT" || KUBELET_PORT="$("$BIN" freeport 1)"
  local sock="$n/containerd.sock"
  ((${#sock} < 100)) || die "DIR is too long for a unix socket path ($sock): use a shorter DIR"
  mkdir -p "$n/cni/net.d" "$n/kubelet" "$n/pod-logs"
  local gw="10.244.$NODE_SUBNET_OCTET.1" bridge="plumb$id"
  NODE_IP="$gw"
  # The bridge exists before the kubelet starts: its address is the node's InternalIP (the
  # kubelet refuses a loopback one), so the kubelet's API listens only on this bridge.
  if ! ip link show "$bridge" >/dev/null 2>&1; then
    ip link add "$bridge" type bridge || die "cannot create bridge $bridge (need CAP_NET_ADMIN)"
  fi
  ip addr flush dev "$bridge"
  ip addr add "$gw/24" dev "$bridge"
  ip link set "$bridge" up
  # cgroupRoot must exist in every hierarchy; cpuset needs its cpus/mems set to take tasks.
  cg="plumb-$id"
  if [[ -d /sys/fs/cgroup/cpu ]]; then
    for h in /sys/fs/cgroup/*/; do
      [[ "$h" == */unified/ ]] && continue
      mkdir -p "$h$cg"
    done
    if [[ -f /sys/fs/cgroup/cpuset/cpuset.cpus ]]; then
      cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset/$cg/cpuset.cpus"
      cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/$cg/cpuset.mems"
    fi
  else
    mkdir -p "/sys/fs/cgroup/$cg"
  fi

  cat >"$n/cni/net.d/10-plumb.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "plumb-$id",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$bridge",
      "isGateway": true,
      "ipMasq": false,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "10.244.$NODE_SUBNET_OCTET.0/24", "gateway": "$gw" }]],
        "dataDir": "$n/cni/ipam"
      }
    }
  ]
}
EOF

  cat >"$n/containerd.toml" <<EOF
version = 2
root = "$n/containerd"
state = "$n/containerd-state"
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = "$sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "$n/containerd-opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$NODE_PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  # Lowering a process's oom_score_adj (the kubelet asks -998 for sandboxes) needs
  # CAP_SYS_RESOURCE, which a sandboxed test machine may lack: never go below containerd's.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "${PLUMB_CLUSTER_RUNC:-$(command -v runc)}"
        Root = "$n/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$n/cni/net.d"
EOF

  write_kubeconfig "$DIR/kubelet.kubeconfig" "$server" "system:node:$NODE_NAME" cert kubelet
  write_kubeconfig "$DIR/kube-scheduler.kubeconfig" "$server" system:kube-scheduler cert kube-scheduler

  cat >"$n/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine may have cgroup v1 (Kubernetes 1.35 refuses it unless told) and swap.
failCgroupV1: false
failSwapOn: false
cgroupDriver: cgroupfs
cgroupRoot: /$cg
cgroupsPerQOS: true
containerRuntimeEndpoint: unix://$sock
address: $gw
port: $KUBELET_PORT
readOnlyPort: 0
healthzPort: 0
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: $DIR/pki/ca.crt }
authorization: { mode: Webhook }
podLogsDir: $n/pod-logs
# No DNS add-on runs; a cluster DNS address keeps the kubelet from warning on every Pod.
clusterDNS: [10.96.0.10]
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
# A shared test machine: never evict Pods or delete the local images for disk or memory.
evictionHard: { memory.available: "1Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%", imagefs.inodesFree: "1%" }
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
shutdownGracePeriod: 0s
maxPods: 110
EOF
  printf 'NODE_MODE=%s\nNODE_SUBNET_OCTET=%s\nKUBELET_PORT=%s\n' "$NODE_MODE" "$NODE_SUBNET_OCTET" "$KUBELET_PORT" >>"$DIR/cluster.env"
}

node_launch() { # NAME BIN ARGS...: like launch, for the node's own binaries
  local name="$1" bin="$2"; shift 2
  : >"$DIR/$name.log"
  setsid "$bin" "$@" </dev/null >>"$DIR/$name.log" 2>&1 &
  echo $! >"$DIR/$name.pid"
}

# node_start: containerd, the local images, the scheduler and the kubelet. Returns once the
# kubelet runs; check-ready then waits for the node to be Ready.
node_start() {
  local n="$DIR/node" sock="$DIR/node/containerd.sock" deadline t0=$SECONDS kubelet_args
  read -r -a kubelet_args <<<"${PLUMB_CLUSTER_KUBELET_ARGS:-}"
  node_launch containerd "$(command -v containerd)" --config="$n/containerd.toml"
  "$NODE_BIN" oci-image --busybox=/bin/busybox --out="$n/images.tar" \
    --image="$NODE_BUSYBOX_IMAGE=" \
    --image="$NODE_PAUSE_IMAGE=[\"/bin/sh\",\"-c\",\"trap 'exit 0' TERM INT; while :; do sleep 3600 & wait; done\"]" ||
    fail_start "cannot build the node's images" containerd
  deadline=$((SECONDS + 60))
  until ctr --address "$sock" version >/dev/null 2>&1; do
    pid_of "$DIR" containerd >/dev/null || fail_start "containerd exited" containerd
    ((SECONDS < deadline)) || fail_start "containerd not serving after 60s" containerd
    sleep 0.2
  done
  ctr --address "$sock" -n k8s.io images import "$n/images.tar" >>"$DIR/containerd.log" 2>&1 ||
    fail_start "ctr images import failed" containerd
  node_launch kube-scheduler "$NODE_BIN" kube-scheduler \
    --kubeconfig="$DIR/kube-scheduler.kubeconfig" \
    --authentication-kubeconfig="$DIR/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig="$DIR/kube-scheduler.kubeconfig" \
    --leader-elect=false --bind-address=127.0.0.1 --secure-port=0 --v=1
  node_launch kubelet "$NODE_BIN" kubelet \
    --config="$n/kubelet.yaml" --kubeconfig="$DIR/kubelet.kubeconfig" \
    --root-dir="$n/kubelet" --cert-dir="$n/kubelet/pki" \
    --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --v="${PLUMB_CLUSTER_KUBELET_V:-1}" \
    "${kubelet_args[@]}"
  log "node: containerd serving and images imported in $((SECONDS - t0))s; kubelet started"
}

# node_pids [NAME]: processes of DIR's node, by DIR in their command line: NAME kubelet,
# kube-scheduler or containerd, or (no NAME) those and containerd's shims.
node_pids() {
  local f args base
  for f in /proc/[0-9]*/cmdline; do
    { mapfile -d '' args <"$f"; } 2>/dev/null || continue
    ((${#args[@]} > 1)) || continue
    [[ "${args[*]}" == *"$DIR/node/"* || "${args[*]}" == *"=$DIR/"* ]] || continue
    base="${args[0]##*/}"
    case "${1:-}" in
      kubelet | kube-scheduler) [[ "$base" == plumb-node && "${args[1]}" == "$1" ]] || continue ;;
      containerd) [[ "$base" == containerd ]] || continue ;;
      *) [[ "$base" == plumb-node || "$base" == containerd || "$base" == containerd-shim-runc-v2 ]] || continue ;;
    esac
    f="${f#/proc/}"
    echo "${f%/cmdline}"
  done
}

# node_kill_containers: every process in the node's cgroup tree, then the tree itself.
node_kill_containers() {
  local cg="plumb-$(node_id)" h pid procs n
  for n in $(seq 1 50); do
    procs=""
    for h in /sys/fs/cgroup/pids /sys/fs/cgroup; do
      [[ -d "$h/$cg" ]] || continue
      procs="$(find "$h/$cg" -name cgroup.procs -exec cat {} + 2>/dev/null)"
      break
    done
    [[ -n "$procs" ]] || break
    for pid in $procs; do kill -KILL "$pid" 2>/dev/null || true; done
    sleep 0.1
  done
  for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
    [[ -d "$h$cg" ]] || continue
    find "$h$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
}

# node_unmount: every mount under DIR/node, deepest first (rootfs overlays, network
# namespaces, the kubelet's volume tmpfs), so that rm -rf DIR never reaches into one.
node_unmount() {
  local m
  while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done < <(awk -v p="$DIR/node/" 'index($5, p) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
}

# node_stop: all the real node left on the machine, even if it never finished starting.
node_stop() {
  local pid c n
  for c in "${NODE_COMPONENTS[@]}"; do
    for pid in $(node_pids "$c"); do
      kill -TERM "$pid" 2>/dev/null || true
      for n in $(seq 1 50); do alive "$pid" || break; sleep 0.1; done
      if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    done
  done
  # The shims outlive containerd, and the containers outlive the shims.
  for pid in $(node_pids); do kill -KILL "$pid" 2>/dev/null || true; done
  node_kill_containers
  node_unmount
  ip link del "plumb$(node_id)" 2>/dev/null || true
  for c in "${NODE_COMPONENTS[@]}"; do rm -f "$DIR/$c.pid"; done
}

# running_components: the components DIR's cluster runs, in stop order.
running_components() {
  local c
  for c in "${COMPONENTS[@]}"; do
    if [[ "$c" == kubelet-sim ]] && node_real; then printf '%s\n' "${NODE_COMPONENTS[@]}"; else echo "$c"; fi
  done
}

# node_log: the log that tells why the node is not Ready.
node_log() { if node_real; then echo kubelet; else echo kubelet-sim; fi; }
