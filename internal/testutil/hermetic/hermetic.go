package hermetic

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// EnvRequireData set to 1 makes a missing control plane or tokenizer data a
// test failure instead of a skip; `make test` sets it after provisioning both,
// and CI (CI set) implies it.
const EnvRequireData = "KDYN_REQUIRE_TESTDATA"

// EnvCache names the directory with the provisioned test data: tokenizers/
// (hack/tokenizer/fetch.sh) and testbin/ (hack/testbin/provision.sh). Apply
// resolves its default from the caller's real home before replacing HOME.
const EnvCache = "KDYN_CACHE"

// cleared are removed from the environment: each changes what the plugin or a
// tool it runs reads, prints or where it looks for files.
var cleared = []string{
	// where files are looked up
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS",
	"HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE", "HF_HUB_OFFLINE", "HF_ENDPOINT", "HF_TOKEN",
	"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "KUBECACHEDIR", "KREW_ROOT",
	// how output looks
	"NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLORTERM", "COLUMNS", "LINES", "PAGER", "KUBECTL_EXTERNAL_DIFF",
	"LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LANGUAGE", "TMUX", "STY",
	// where requests go
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
	// the plugin's own settings
	"KDYN_ETCD_USERNAME", "KDYN_ETCD_PASSWORD", "ETCDCTL_ENDPOINTS", "ETCD_ENDPOINTS",
	// decisions tests used to take from the caller (RequireData keeps the answer)
	"CI",
}

// set are given fixed values.
var set = map[string]string{
	"TERM": "dumb",
	"TZ":   "UTC",
	"LANG": "C.UTF-8",
}

var (
	once        sync.Once
	requireData bool
	home        string
)

// Main is a TestMain: it applies the hermetic environment, runs the tests,
// removes the temporary home and exits.
//
//	func TestMain(m *testing.M) { hermetic.Main(m) }
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run applies the hermetic environment and runs the tests, for a TestMain that
// does more (start a control plane, stop reference servers) before it exits.
func Run(m *testing.M) int {
	if err := Apply(); err != nil {
		log.Printf("hermetic: %v", err)
		return 1
	}
	defer Cleanup()
	return m.Run()
}

// Cleanup removes the temporary HOME made by Apply; Run calls it.
func Cleanup() {
	if home != "" {
		os.RemoveAll(home)
	}
}

// Apply makes the process environment independent of the caller's: HOME is a
// new empty directory (so no kubeconfig, Hugging Face cache or config file of
// the caller's is found) and KUBECONFIG names a missing file in it, the
// variables in cleared are removed, TERM, TZ and
// LANG are fixed, and time.Local is UTC. What the tests legitimately need from
// the caller stays: PATH, TMPDIR, the Go toolchain's settings (GOCACHE,
// GOMODCACHE, GOPATH and GOENV are pinned to the caller's values first, so a
// `go build` in a test neither starts from an empty cache nor reads a different
// go env file), KDYN_TESTBIN and KDYN_CACHE (the provisioned test data; the
// default is resolved from the caller's home) and KDYN_* knobs of the test
// harness. It is idempotent.
func Apply() error {
	var err error
	once.Do(func() { err = apply() })
	return err
}

func apply() error {
	requireData = truthy(os.Getenv("CI")) || os.Getenv(EnvRequireData) == "1"
	realCache, _ := os.UserCacheDir()
	if realCache != "" {
		if os.Getenv(EnvCache) == "" {
			os.Setenv(EnvCache, filepath.Join(realCache, "kubectl-dynamo"))
		}
	}
	// The Go toolchain's locations as the caller's go command resolves them
	// (environment, go env file, defaults under HOME), pinned before HOME moves.
	for name, value := range goEnv("GOCACHE", "GOMODCACHE", "GOPATH", "GOENV") {
		if os.Getenv(name) == "" && value != "" {
			os.Setenv(name, value)
		}
	}
	dir, err := os.MkdirTemp("", "kdyn-test-home-")
	if err != nil {
		return fmt.Errorf("temporary HOME: %w", err)
	}
	home = dir
	os.Setenv("HOME", dir)
	os.Setenv("USERPROFILE", dir)
	for _, name := range cleared {
		os.Unsetenv(name)
	}
	for k, v := range set {
		os.Setenv(k, v)
	}
	// KUBECONFIG names a file that does not exist, rather than being unset:
	// client-go computes its default path (~/.kube/config) when the package
	// is initialised, from the caller's HOME, before any TestMain runs.
	os.Setenv("KUBECONFIG", filepath.Join(dir, ".kube", "config"))
	time.Local = time.UTC
	return nil
}

// RequireData reports whether missing provisioned test data (control-plane
// binaries, tokenizer files) must fail a test rather than skip it: true under
// `make test` (KDYN_REQUIRE_TESTDATA=1) and in CI, as the caller's environment
// said before Apply cleared it.
func RequireData() bool {
	if done() {
		return requireData
	}
	return truthy(os.Getenv("CI")) || os.Getenv(EnvRequireData) == "1"
}

// CacheDir is the directory with the provisioned test data (KDYN_CACHE, else
// the user's cache directory's kubectl-dynamo/).
func CacheDir() string {
	if d := os.Getenv(EnvCache); d != "" {
		return d
	}
	c, err := os.UserCacheDir()
	if err != nil {
		c = os.TempDir()
	}
	return filepath.Join(c, "kubectl-dynamo")
}

// SkipOrFail skips t because provisioned data is missing, or fails it where
// RequireData says the data must be there. how says which command provides it.
func SkipOrFail(t testing.TB, what, how string) {
	t.Helper()
	if RequireData() {
		t.Fatalf("%s is missing: %s provides it (make test runs it)", what, how)
	}
	t.Skipf("%s is missing: run %s, or make test, which provisions it", what, how)
}

// goEnv asks the go command for the named settings; nil when it cannot run
// (a test binary copied elsewhere), in which case go's own defaults apply.
func goEnv(names ...string) map[string]string {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil
	}
	out, err := exec.Command(goBin, append([]string{"env", "-json"}, names...)...).Output()
	if err != nil {
		return nil
	}
	var m map[string]string
	if json.Unmarshal(out, &m) != nil {
		return nil
	}
	return m
}

func done() bool { return home != "" }

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "no":
		return false
	}
	return true
}

// EnvLong set to 1 runs the randomized tests at their long sizes (make
// test-full): Size returns its long value.
const EnvLong = "KDYN_TEST_LONG"

// Size is the iteration count of a randomized test: short under -short (the
// arm64 run under qemu), long under KDYN_TEST_LONG=1 (make test-full, nightly),
// normal otherwise (make test, CI). It is read from the caller's environment,
// which Apply leaves alone.
func Size(short, normal, long int) int {
	switch {
	case os.Getenv(EnvLong) == "1":
		return long
	case testing.Short():
		return short
	}
	return normal
}
