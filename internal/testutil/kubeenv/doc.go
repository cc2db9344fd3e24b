// Package kubeenv runs a real, throwaway Kubernetes control plane -- an etcd
// server and a kube-apiserver, as separate processes -- for integration tests.
//
// There is no kubelet, scheduler or controller-manager: nothing is scheduled or
// reconciled, namespaces never finish deleting, and there is no default
// ServiceAccount (the ServiceAccount admission plugin is disabled). Tests create
// Nodes, Pods and custom resources directly and set their status themselves
// (Env.Apply writes the status subresource too).
//
// # Binaries
//
// The binaries are built from the Go module proxy by hack/testbin/provision.sh
// (pinned versions in hack/testbin/versions.env, mirrored by KubernetesVersion
// and EtcdVersion) and cached outside the repository:
//
//	export KDYN_TESTBIN="$(hack/testbin/provision.sh)"
//
// FindBinaries looks in $KDYN_TESTBIN, else in the script's default directory.
// When they are missing, tests are skipped locally (with the command to run) but
// fail when the CI environment variable is set or KDYN_TESTBIN points to an
// empty directory, so CI can never silently skip them.
//
// # Usage
//
// One control plane per test package, shared through TestMain (start-up costs
// about 3 s; use a namespace per test, see Env.NewNamespace):
//
//	var env *kubeenv.Env
//
//	func TestMain(m *testing.M) {
//		os.Exit(kubeenv.RunTests(m, kubeenv.Options{CRDs: []string{"../../test/crds"}}, &env))
//	}
//
//	func TestSomething(t *testing.T) {
//		e := kubeenv.Require(t, env)
//		cs, _ := e.Clientset()
//		...
//	}
//
// Or one per test with Start, which registers Stop with t.Cleanup. StartShared
// and Env.Stop are the building blocks for other setups.
//
// # Security setup
//
// The apiserver listens on 127.0.0.1 only, with TLS from a CA generated in Go.
// Authentication: client certificates (Env.KubeconfigFor issues one for any user
// and groups) and a static admin token (Env.AdminToken). Authorization is RBAC
// only, so a user without bindings gets 403 -- suitable for least-privilege tests.
// The admin identity is in group system:masters.
//
// # Audit log
//
// With Options.AuditLog every request is logged at Metadata level as JSON lines
// (Env.AuditLogPath). Env.AuditEvents, Env.AuditEventsFrom and
// Env.WaitForAuditEvent read them back: verb, URI, user, object, response code.
// The apiserver's own loopback requests (user system:apiserver) are in there
// too, and a shared Env sees other tests' requests: take Env.AuditOffset before
// the code under test runs and match on the user -- e.g. run the plugin with
// Env.KubeconfigFor("reader", ...) and assert no event of that user has
// AuditEvent.IsMutating.
//
// # CRDs
//
// test/crds holds the Dynamo and Grove CRDs (see its README); pass the
// directory in Options.CRDs. test/crds/legacy holds Grove's old ClusterTopology,
// which claims the same short name as ClusterTopologyBinding and therefore
// cannot be Established in the same cluster: give it its own Env.
//
// # Processes and cleanup
//
// etcd and kube-apiserver run in their own process groups and are killed
// (SIGKILL: the data is throwaway) by Stop. On Linux the kernel also kills them
// when the test process dies (Pdeathsig), so a SIGKILL of the test binary or a
// `go test -timeout` panic leaves no orphans; SIGINT, SIGTERM and SIGHUP are
// caught to kill them before the test binary exits. Always run with
// `go test -timeout ...` (the test binary's own timeout; the default is 10m)
// rather than killing `go test` from outside. On macOS there is no Pdeathsig:
// only Stop and the signal handler clean up.
//
// Logs go to files in Env.Dir; their tails are printed when the start fails, when
// a test using Start fails, and by RunTests when the package fails. Stop removes
// Env.Dir (set KDYN_KEEP=1 to keep it); a directory left by a killed test
// process is removed by the next start.
package kubeenv
