package kubeenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

// Pinned versions of the control-plane binaries. They must match
// hack/testbin/versions.env (a test checks this), because the default binary
// directory is derived from them.
const (
	KubernetesVersion = "v1.37.1"
	EtcdVersion       = "v3.6.16"
)

// EnvTestbin names the environment variable that points at the directory with
// kube-apiserver, kubectl and etcd (the output of hack/testbin/provision.sh).
const EnvTestbin = "KDYN_TESTBIN"

// ProvisionCommand builds and installs the binaries into DefaultBinDir; run it
// from the repository root. It prints the directory, so CI can also do
// `export KDYN_TESTBIN="$(hack/testbin/provision.sh)"`.
const ProvisionCommand = "hack/testbin/provision.sh"

// ErrNotProvisioned is returned (wrapped) by FindBinaries when the binaries are
// not installed. Run hack/testbin/provision.sh.
var ErrNotProvisioned = errors.New("kube-apiserver/etcd/kubectl test binaries not found")

// Binaries holds the absolute paths of the control-plane binaries.
type Binaries struct {
	Dir           string
	KubeAPIServer string
	Etcd          string
	Kubectl       string
}

// DefaultBinDir returns the directory hack/testbin/provision.sh installs into
// when KDYN_TESTBIN is not set: testbin/k8s-<v>-etcd-<v> under the test-data
// cache (KDYN_CACHE, else the user's cache directory's kubectl-dynamo/).
func DefaultBinDir() string {
	return filepath.Join(hermetic.CacheDir(), "testbin",
		"k8s-"+KubernetesVersion+"-etcd-"+EtcdVersion)
}

// FindBinaries locates the binaries in dir, or if dir is empty in $KDYN_TESTBIN,
// or else in DefaultBinDir. The error wraps ErrNotProvisioned and says which
// command installs them.
func FindBinaries(dir string) (Binaries, error) {
	if dir == "" {
		dir = os.Getenv(EnvTestbin)
	}
	if dir == "" {
		dir = DefaultBinDir()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Binaries{}, err
	}
	b := Binaries{
		Dir:           abs,
		KubeAPIServer: filepath.Join(abs, "kube-apiserver"),
		Etcd:          filepath.Join(abs, "etcd"),
		Kubectl:       filepath.Join(abs, "kubectl"),
	}
	var missing []string
	for _, p := range []string{b.KubeAPIServer, b.Etcd, b.Kubectl} {
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, filepath.Base(p))
		}
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("%w: %s missing in %s; build them by running %s from the repository root "+
			"(5-10 minutes once, then cached)", ErrNotProvisioned, strings.Join(missing, ", "), abs, ProvisionCommand)
	}
	return b, nil
}

// mustProvision reports whether missing binaries are an error rather than a
// reason to skip: under make test and in CI (hermetic.RequireData), or when
// KDYN_TESTBIN was set explicitly.
func mustProvision() bool {
	return os.Getenv(EnvTestbin) != "" || hermetic.RequireData()
}
