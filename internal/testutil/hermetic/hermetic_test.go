package hermetic

import (
	"os"
	"strings"
	"testing"
	"time"
)

// The caller's environment is hostile on purpose: TestMain sets it before
// Main applies the hermetic one, and the tests check what survived.
var hostile = map[string]string{
	"XDG_CACHE_HOME":     "/hostile/xdg cache",
	"XDG_CONFIG_HOME":    "/hostile/xdg config",
	"HF_HOME":            "/hostile/hf",
	"HF_HUB_CACHE":       "/hostile/hf/hub",
	"KUBECONFIG":         "/hostile/kubeconfig",
	"NO_COLOR":           "1",
	"CLICOLOR_FORCE":     "1",
	"COLUMNS":            "40",
	"LINES":              "5",
	"TZ":                 "Pacific/Kiritimati",
	"TERM":               "xterm-256color",
	"LC_ALL":             "tr_TR.UTF-8",
	"HTTPS_PROXY":        "http://127.0.0.1:9",
	"KDYN_ETCD_PASSWORD": "hostile",
	"CI":                 "true",
	EnvCache:             "",
}

var callerHome string

func TestMain(m *testing.M) {
	callerHome, _ = os.UserHomeDir()
	for k, v := range hostile {
		if v == "" {
			os.Unsetenv(k)
		} else {
			os.Setenv(k, v)
		}
	}
	Main(m)
}

func TestApplyClearsTheCallersEnvironment(t *testing.T) {
	for _, k := range []string{"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "HF_HOME", "HF_HUB_CACHE",
		"NO_COLOR", "CLICOLOR_FORCE", "COLUMNS", "LINES", "LC_ALL", "HTTPS_PROXY", "KDYN_ETCD_PASSWORD", "CI"} {
		if v, ok := os.LookupEnv(k); ok {
			t.Errorf("%s=%q survived Apply", k, v)
		}
	}
	for k, want := range map[string]string{"TERM": "dumb", "TZ": "UTC", "LANG": "C.UTF-8"} {
		if got := os.Getenv(k); got != want {
			t.Errorf("%s=%q, want %q", k, got, want)
		}
	}
	if time.Local != time.UTC {
		t.Errorf("time.Local is %v, want UTC", time.Local)
	}
	home := os.Getenv("HOME")
	if home == "" || home == callerHome {
		t.Fatalf("HOME=%q, want a new temporary directory (the caller's is %q)", home, callerHome)
	}
	if kc := os.Getenv("KUBECONFIG"); kc != home+"/.kube/config" {
		t.Errorf("KUBECONFIG=%q, want the missing file %s/.kube/config", kc, home)
	}
	entries, err := os.ReadDir(home)
	if err != nil || len(entries) != 0 {
		t.Errorf("HOME %s is not an empty directory: %v %v", home, entries, err)
	}
}

func TestApplyKeepsWhatTestsNeed(t *testing.T) {
	// The provisioned data is found where the caller's cache directory was,
	// not under the new HOME.
	if got, want := CacheDir(), "/hostile/xdg cache/kubectl-dynamo"; got != want {
		t.Errorf("CacheDir() = %q, want %q (resolved from the caller's XDG_CACHE_HOME before it was cleared)", got, want)
	}
	// The go command keeps its build cache: pinned before HOME moved.
	gocache := os.Getenv("GOCACHE")
	if gocache == "" || strings.HasPrefix(gocache, os.Getenv("HOME")) {
		t.Errorf("GOCACHE=%q, want the caller's build cache pinned", gocache)
	}
	if os.Getenv("PATH") == "" {
		t.Error("PATH was cleared")
	}
	// CI said data is required; the answer outlives the variable.
	if !RequireData() {
		t.Error("RequireData() = false although the caller had CI=true")
	}
}

func TestSize(t *testing.T) {
	t.Setenv(EnvLong, "")
	want := 10
	if testing.Short() {
		want = 1
	}
	if got := Size(1, 10, 100); got != want {
		t.Errorf("Size = %d, want %d", got, want)
	}
	t.Setenv(EnvLong, "1")
	if got := Size(1, 10, 100); got != 100 {
		t.Errorf("Size under %s=1 = %d, want 100", EnvLong, got)
	}
}
