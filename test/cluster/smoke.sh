#!/usr/bin/env bash
# Smoke test of a cluster started by cluster.sh, with curl and the bearer
# token only: test/cluster/smoke.sh DIR
# Checks: Deployment becomes Available (+ EndpointSlice for its Service),
# a Job completes, a bad image shows ImagePullBackOff, namespace deletion
# (namespace controller), ownerReference garbage collection, CRD Established.
set -euo pipefail

DIR="$(cd "${1:?usage: smoke.sh DIR}" && pwd)"
command -v curl >/dev/null 2>&1 || { echo "smoke.sh: curl not found: apt-get install curl" >&2; exit 1; }
# shellcheck disable=SC1091
. "$DIR/env"
TOKEN="$(cat "$DIR/token")"
NS=plumb-smoke
TIMEOUT="${SMOKE_TIMEOUT:-60}"
passed=0 failed=0

# api METHOD PATH [JSON]: prints the body; compact JSON (not a curl user agent)
api() {
  local m="$1" p="$2"; shift 2
  curl -sS -X "$m" --cacert "$DIR/ca.crt" -A plumb-smoke \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    "$PLUMB_CLUSTER_SERVER$p" ${1:+--data "$1"}
}
code() { # METHOD PATH: prints the HTTP status
  curl -sS -o /dev/null -w '%{http_code}' -X "$1" --cacert "$DIR/ca.crt" -A plumb-smoke \
    -H "Authorization: Bearer $TOKEN" "$PLUMB_CLUSTER_SERVER$2"
}
# until_ok NAME CMD...: retry CMD for up to TIMEOUT seconds, report
until_ok() {
  local name="$1" t0=$SECONDS; shift
  while ! "$@" >/dev/null 2>&1; do
    if ((SECONDS - t0 >= TIMEOUT)); then
      echo "FAIL $name (after ${TIMEOUT}s)"; failed=$((failed + 1)); return 0
    fi
    sleep 0.5
  done
  echo "ok   $name ($((SECONDS - t0))s)"; passed=$((passed + 1))
}
has() { api GET "$1" | grep -q -- "$2"; }
gone() { [[ "$(code GET "$1")" == 404 ]]; }

# clean leftovers of an earlier run
api DELETE "/api/v1/namespaces/$NS" >/dev/null 2>&1 || true
api DELETE /apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.smoke.plumb.dev >/dev/null 2>&1 || true
until_ok "leftovers gone" gone "/api/v1/namespaces/$NS"

api POST /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$NS\"}}" >/dev/null
until_ok "default serviceaccount in new namespace" has "/api/v1/namespaces/$NS/serviceaccounts/default" '"name":"default"'

# 1. Deployment with 2 replicas becomes Available; its Service gets endpoints.
api POST "/apis/apps/v1/namespaces/$NS/deployments" '{
  "apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nginx"},
  "spec":{"replicas":2,"selector":{"matchLabels":{"app":"nginx"}},
    "template":{"metadata":{"labels":{"app":"nginx"}},
      "spec":{"containers":[{"name":"nginx","image":"nginx:1.27","ports":[{"containerPort":80}]}]}}}}' >/dev/null
api POST "/api/v1/namespaces/$NS/services" '{
  "apiVersion":"v1","kind":"Service","metadata":{"name":"nginx"},
  "spec":{"selector":{"app":"nginx"},"ports":[{"port":80,"targetPort":80}]}}' >/dev/null
until_ok "deployment availableReplicas=2" has "/apis/apps/v1/namespaces/$NS/deployments/nginx" '"availableReplicas":2'
ready_endpoints() {
  [[ "$(api GET "/apis/discovery.k8s.io/v1/namespaces/$NS/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dnginx" \
        | grep -o '"ready":true' | wc -l)" -eq 2 ]]
}
until_ok "service endpointslice has 2 ready endpoints" ready_endpoints

# 2. A Job's pod succeeds and the Job completes.
api POST "/apis/batch/v1/namespaces/$NS/jobs" '{
  "apiVersion":"batch/v1","kind":"Job","metadata":{"name":"once"},
  "spec":{"backoffLimit":0,"template":{"spec":{"restartPolicy":"Never",
    "containers":[{"name":"c","image":"busybox:1.36","command":["true"]}]}}}}' >/dev/null
until_ok "job complete" has "/apis/batch/v1/namespaces/$NS/jobs/once" '"type":"Complete","status":"True"'

# 3. A pod with an image that does not exist waits in ImagePullBackOff.
api POST "/api/v1/namespaces/$NS/pods" '{
  "apiVersion":"v1","kind":"Pod","metadata":{"name":"badimage"},
  "spec":{"containers":[{"name":"c","image":"example.invalid/doesnotexist:1"}]}}' >/dev/null
until_ok "bad image -> ImagePullBackOff" has "/api/v1/namespaces/$NS/pods/badimage" '"reason":"ImagePullBackOff"'

# 4. Deleting a namespace removes it and its contents (namespace controller).
api POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"plumb-smoke-doomed"}}' >/dev/null
api POST /api/v1/namespaces/plumb-smoke-doomed/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"b"}}' >/dev/null
api DELETE /api/v1/namespaces/plumb-smoke-doomed >/dev/null
until_ok "namespace deleted" gone /api/v1/namespaces/plumb-smoke-doomed

# 5. Garbage collector deletes a dependent after its owner.
owner_uid="$(api POST "/api/v1/namespaces/$NS/configmaps" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owner"}}' \
  | grep -o '"uid":"[^"]*"' | head -1 | cut -d'"' -f4)"
api POST "/api/v1/namespaces/$NS/configmaps" "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"dependent\",
  \"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"owner\",\"uid\":\"$owner_uid\"}]}}" >/dev/null
api DELETE "/api/v1/namespaces/$NS/configmaps/owner" >/dev/null
until_ok "dependent configmap garbage-collected" gone "/api/v1/namespaces/$NS/configmaps/dependent"

# 6. A CRD becomes Established and serves its resource.
api POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions '{
  "apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
  "metadata":{"name":"widgets.smoke.plumb.dev"},
  "spec":{"group":"smoke.plumb.dev","scope":"Namespaced",
    "names":{"plural":"widgets","singular":"widget","kind":"Widget"},
    "versions":[{"name":"v1","served":true,"storage":true,
      "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}' >/dev/null
until_ok "CRD Established" has /apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.smoke.plumb.dev '"type":"Established","status":"True"'
create_widget() {
  api POST "/apis/smoke.plumb.dev/v1/namespaces/$NS/widgets" '{"apiVersion":"smoke.plumb.dev/v1","kind":"Widget","metadata":{"name":"w"},"size":3}' \
    | grep -q '"kind":"Widget"'
}
until_ok "custom resource created" create_widget

# cleanup
api DELETE "/api/v1/namespaces/$NS" >/dev/null
api DELETE /apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.smoke.plumb.dev >/dev/null
until_ok "cleanup: namespace with deployment, job, pods, custom resources deleted" gone "/api/v1/namespaces/$NS"

echo "smoke: $passed passed, $failed failed"
((failed == 0))
