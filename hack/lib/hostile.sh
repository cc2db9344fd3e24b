# The hostile environment (source it): every variable a test could depend on set
# to an odd value -- a kubeconfig and a home directory of someone else's
# pointing at a dead server, Hugging Face and XDG caches elsewhere, NO_COLOR and
# CLICOLOR_FORCE both set, 40 columns, a 256-colour terminal, a time zone 14
# hours ahead of UTC, a Turkish locale, a dead HTTPS proxy, etcd credentials. A
# test that reads any of them instead of setting what it depends on
# (internal/testutil/hermetic) fails under it.
#
#   hostile_env_init    creates its files in a temporary directory
#                       ($HOSTILE_DIR; the caller removes it) and sets the
#                       array HOSTILE_ENV (NAME=VALUE ...), for gotest's
#                       GOTEST_ENV (hack/lib/gotest.sh)
#
# The Go toolchain's own locations are exported first, so that the hostile
# HOME and XDG_CACHE_HOME do not send go to an empty build cache; KDYN_CACHE
# keeps the provisioned data.
hostile_env_init() {
  GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE) GOPATH=$(go env GOPATH) GOENV=$(go env GOENV)
  export GOCACHE GOMODCACHE GOPATH GOENV
  export KDYN_CACHE="${KDYN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dynamo}"
  local h
  h=$(mktemp -d "${TMPDIR:-/tmp}/kdyn-hostile.XXXXXX")
  HOSTILE_DIR=$h
  mkdir -p "$h/home/.kube" "$h/xdg cache/huggingface/hub/models--Qwen--Qwen3-0.6B" "$h/hf home/hub"
  cat >"$h/kubeconfig" <<'KC'
apiVersion: v1
kind: Config
current-context: hostile-context
contexts:
- name: hostile-context
  context: {cluster: hostile, user: hostile, namespace: hostile-namespace}
clusters:
- name: hostile
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: hostile
  user: {token: hostile-token}
KC
  cp "$h/kubeconfig" "$h/home/.kube/config"
  HOSTILE_ENV=(
    HOME="$h/home"
    XDG_CACHE_HOME="$h/xdg cache" XDG_CONFIG_HOME="$h/xdg config" XDG_DATA_HOME="$h/xdg data"
    HF_HOME="$h/hf home" HF_HUB_CACHE="$h/hf home/hub" HF_HUB_OFFLINE=1
    KUBECONFIG="$h/kubeconfig"
    NO_COLOR=1 CLICOLOR_FORCE=1 FORCE_COLOR=3 COLORTERM=truecolor TERM=xterm-256color
    COLUMNS=40 LINES=5
    TZ=Pacific/Kiritimati LANG=tr_TR.UTF-8 LC_ALL=tr_TR.UTF-8
    HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9
    KDYN_ETCD_USERNAME=hostile KDYN_ETCD_PASSWORD=hostile ETCD_ENDPOINTS=http://127.0.0.1:9
    PAGER=false
  )
}
