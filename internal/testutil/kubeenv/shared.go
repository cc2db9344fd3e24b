package kubeenv

import (
	"errors"
	"log"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

// sharedErr records why RunTests did not start an Env, for Require.
var sharedErr error

// RunTests is a TestMain helper: it starts one Env for the package, stores it in
// *env, runs the tests, stops the Env and returns the exit code:
//
//	func TestMain(m *testing.M) { os.Exit(kubeenv.RunTests(m, kubeenv.Options{}, &env)) }
//
// It applies the hermetic test environment first (internal/testutil/hermetic).
// When the binaries are missing and nothing requires them (see mustProvision), *env
// stays nil and the tests still run, so that tests not needing the cluster
// pass; the others call Require, which skips them with the provisioning
// command. In CI, missing binaries or a failed start make the run fail.
// Diagnostics go to the standard logger (stderr).
func RunTests(m *testing.M, opts Options, env **Env) int {
	if err := hermetic.Apply(); err != nil {
		log.Printf("kubeenv: %v", err)
		return 1
	}
	defer hermetic.Cleanup()
	began := time.Now()
	e, err := StartShared(opts)
	if err != nil {
		if errors.Is(err, ErrNotProvisioned) && !mustProvision() {
			sharedErr = err
			log.Printf("kubeenv: control-plane tests will be skipped: %v", err)
			return m.Run()
		}
		log.Printf("kubeenv: cannot start the control plane: %v", err)
		return 1
	}
	log.Printf("kubeenv: control plane %s up at %s in %v (logs in %s)",
		KubernetesVersion, e.Host, time.Since(began).Round(time.Millisecond), e.Dir)
	*env = e
	code := m.Run()
	if code != 0 {
		log.Printf("kubeenv: tests failed; %s", e.LogTails(30))
	}
	if err := e.Stop(); err != nil {
		log.Printf("kubeenv: stop: %v", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Require returns env, or skips t when RunTests could not start it because the
// binaries are missing locally (the skip message says how to install them).
// A nil env for any other reason fails t.
func Require(t testing.TB, env *Env) *Env {
	t.Helper()
	if env != nil {
		return env
	}
	if sharedErr != nil {
		t.Skipf("kubeenv: %v", sharedErr)
	}
	t.Fatal("kubeenv: no Env: start one in TestMain with kubeenv.RunTests")
	return nil
}
