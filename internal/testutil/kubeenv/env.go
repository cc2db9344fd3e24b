package kubeenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options configures a control plane.
type Options struct {
	// AuditLog enables the audit log: every request, at Metadata level, as JSON
	// lines in Env.AuditLogPath. Read it with Env.AuditEvents.
	AuditLog bool
	// CRDs are CRD manifest files or directories (their *.yaml, *.yml and *.json
	// files) installed, and waited for until Established and discoverable,
	// before the Env is returned. Relative paths are relative to the test's
	// working directory (its package directory).
	CRDs []string
	// APIServerFlags are extra kube-apiserver flags ("--name=value"); a flag given
	// here replaces the default of the same name.
	APIServerFlags []string
	// BinDir overrides where the binaries are looked up (see FindBinaries).
	BinDir string
	// StartTimeout bounds the start-up, CRD installation included. Default 2m
	// (a busy 2-core machine needs 5-10 s; an idle one about 3 s).
	StartTimeout time.Duration
}

// AdminUser is the user name of the admin identity (group system:masters).
const AdminUser = "kubeenv-admin"

// Env is a running control plane: etcd plus kube-apiserver. All fields are
// read-only; copy RESTConfig (rest.CopyConfig) before changing it.
type Env struct {
	// Dir holds certificates, kubeconfigs, the etcd data, logs and the audit log.
	Dir string
	// Bin are the binaries in use.
	Bin Binaries
	// Host is the apiserver URL, https://127.0.0.1:<port>.
	Host string
	// RESTConfig authenticates as AdminUser (system:masters) with a client cert.
	RESTConfig *rest.Config
	// Kubeconfig is the path of a kubeconfig file for AdminUser.
	Kubeconfig string
	// AdminToken is a static bearer token for AdminUser (group system:masters).
	AdminToken string
	// CAFile is the PEM file of the CA that signed the serving certificate and
	// all client certificates.
	CAFile string
	// EtcdEndpoint is the client URL of the cluster's own etcd (plain HTTP,
	// keys under /registry). Tests may also use it as a Dynamo discovery etcd,
	// under their own prefix; StartEtcd gives a separate one.
	EtcdEndpoint string
	// AuditLogPath is the audit log file, or "" when Options.AuditLog is false.
	AuditLogPath string
	// APIServerLog and EtcdLog are the processes' log files.
	APIServerLog, EtcdLog string

	pki       *pki
	etcd      *Etcd
	apiserver *process
	mapper    *restmapper.DeferredDiscoveryRESTMapper
	kcSeq     atomic.Int64
	stopOnce  sync.Once
	stopErr   error
}

// Start starts a control plane for t and stops it with t.Cleanup. When the
// binaries are missing it skips t locally and fails it in CI (see FindBinaries);
// any other start-up problem fails t with the tail of the logs. If t fails, the
// cleanup logs the tails of the etcd and apiserver logs.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	bin := findOrSkip(t, opts.BinDir)
	e, err := start(bin, opts)
	if err != nil {
		t.Fatalf("kubeenv: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kubeenv: %s", e.LogTails(30))
		}
		if err := e.Stop(); err != nil {
			t.Errorf("kubeenv: %v", err)
		}
	})
	return e
}

// StartShared starts a control plane that is not tied to a test, for use in
// TestMain; the caller must call Stop. The error wraps ErrNotProvisioned when
// the binaries are missing. RunTests wraps this for the common case.
func StartShared(opts Options) (*Env, error) {
	bin, err := FindBinaries(opts.BinDir)
	if err != nil {
		return nil, err
	}
	return start(bin, opts)
}

func findOrSkip(t testing.TB, dir string) Binaries {
	t.Helper()
	bin, err := FindBinaries(dir)
	if err != nil {
		if errors.Is(err, ErrNotProvisioned) && !mustProvision() {
			t.Skipf("kubeenv: %v\n(skipped: run make test, which provisions them)", err)
		}
		t.Fatalf("kubeenv: %v", err)
	}
	return bin
}

func start(bin Binaries, opts Options) (_ *Env, err error) {
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	removeStaleDirs()
	dir, err := os.MkdirTemp("", "kubeenv-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return nil, err
	}
	e := &Env{Dir: dir, Bin: bin}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, e.LogTails(40))
			_ = e.Stop()
		}
	}()

	e.etcd, err = startEtcd(ctx, bin, dir)
	if err != nil {
		return e, err
	}
	e.EtcdEndpoint, e.EtcdLog = e.etcd.Endpoint, e.etcd.LogPath

	if err := e.writeSecurityFiles(); err != nil {
		return e, err
	}
	if opts.AuditLog {
		e.AuditLogPath = filepath.Join(dir, "audit.log")
		if err := os.WriteFile(filepath.Join(dir, "audit-policy.yaml"), []byte(auditPolicy), 0o600); err != nil {
			return e, err
		}
	}
	for attempt := 0; ; attempt++ {
		err = e.startAPIServer(ctx, opts)
		if err == nil || attempt == 2 || !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	if err != nil {
		return e, err
	}
	if len(opts.CRDs) > 0 {
		if err := e.InstallCRDs(ctx, opts.CRDs...); err != nil {
			return e, err
		}
	}
	return e, nil
}

// writeSecurityFiles generates the CA, serving cert, admin credentials, token
// file and service-account keys.
func (e *Env) writeSecurityFiles() error {
	p, err := newPKI()
	if err != nil {
		return err
	}
	e.pki = p
	serving, err := p.serving([]net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"})
	if err != nil {
		return err
	}
	saKey, saPub, err := serviceAccountKeys()
	if err != nil {
		return err
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return err
	}
	e.AdminToken = hex.EncodeToString(tok)
	e.CAFile = filepath.Join(e.Dir, "ca.crt")
	files := map[string][]byte{
		"ca.crt":      p.certPEM,
		"serving.crt": serving.CertPEM,
		"serving.key": serving.KeyPEM,
		"sa.key":      saKey,
		"sa.pub":      saPub,
		"tokens.csv":  fmt.Appendf(nil, "%s,%s,%s-uid,\"system:masters\"\n", e.AdminToken, AdminUser, AdminUser),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(e.Dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (e *Env) startAPIServer(ctx context.Context, opts Options) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	port := strconv.Itoa(ports[0])
	e.Host = "https://127.0.0.1:" + port
	f := func(name string) string { return filepath.Join(e.Dir, name) }
	flags := []string{
		"--etcd-servers=" + e.EtcdEndpoint,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + port,
		"--cert-dir=" + f("apiserver-certs"),
		"--tls-cert-file=" + f("serving.crt"),
		"--tls-private-key-file=" + f("serving.key"),
		"--client-ca-file=" + f("ca.crt"),
		"--token-auth-file=" + f("tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + f("sa.pub"),
		"--service-account-signing-key-file=" + f("sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--disable-admission-plugins=ServiceAccount",
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
	}
	if e.AuditLogPath != "" {
		flags = append(flags,
			"--audit-policy-file="+f("audit-policy.yaml"),
			"--audit-log-path="+e.AuditLogPath,
			"--audit-log-format=json",
			"--audit-log-mode=blocking",
			"--audit-log-maxbackup=0",
			"--audit-log-maxsize=0",
		)
	}
	flags = mergeFlags(flags, opts.APIServerFlags)
	e.APIServerLog = f("kube-apiserver.log")
	p, err := startProcess("kube-apiserver", e.Bin.KubeAPIServer, flags, e.APIServerLog)
	if err != nil {
		return err
	}
	e.apiserver = p

	admin, err := e.pki.client(AdminUser, []string{"system:masters"})
	if err != nil {
		return err
	}
	e.RESTConfig = e.restConfig(admin)
	e.Kubeconfig = f("admin.kubeconfig")
	if err := e.writeKubeconfig(e.Kubeconfig, AdminUser, admin); err != nil {
		return err
	}

	// /readyz covers etcd, the RBAC bootstrap roles and the CRD/aggregator
	// post-start hooks; the default namespace is created asynchronously after.
	cs, err := kubernetes.NewForConfig(e.RESTConfig)
	if err != nil {
		return err
	}
	err = poll(ctx, 100*time.Millisecond, "kube-apiserver "+e.Host+"/readyz", []*process{p, e.etcd.proc}, func(ctx context.Context) (bool, error) {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Raw()
		if err != nil {
			return false, err
		}
		return strings.TrimSpace(string(body)) == "ok", nil
	})
	if err != nil {
		_ = p.stop(10 * time.Second)
		return fmt.Errorf("kube-apiserver did not become ready: %w", err)
	}
	err = poll(ctx, 100*time.Millisecond, "namespace default", []*process{p}, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		return err == nil, err
	})
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(e.RESTConfig)
	if err != nil {
		return err
	}
	e.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	return nil
}

// ownerFile in Env.Dir holds the pid of the test process that owns it.
const ownerFile = "owner.pid"

// removeStaleDirs removes the Env directories of test processes that died
// without running Stop (SIGKILL, a -timeout panic); their children are gone
// already (Pdeathsig).
func removeStaleDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "kubeenv-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(d)
		}
	}
}

// mergeFlags appends extra to base; an extra flag replaces a base flag of the
// same name.
func mergeFlags(base, extra []string) []string {
	name := func(f string) string { n, _, _ := strings.Cut(f, "="); return n }
	override := map[string]bool{}
	for _, x := range extra {
		override[name(x)] = true
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, b := range base {
		if !override[name(b)] {
			out = append(out, b)
		}
	}
	return append(out, extra...)
}

func (e *Env) restConfig(kp keyPair) *rest.Config {
	return &rest.Config{
		Host: e.Host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   e.pki.certPEM,
			CertData: kp.CertPEM,
			KeyData:  kp.KeyPEM,
		},
		QPS:   200,
		Burst: 400,
	}
}

func (e *Env) writeKubeconfig(path, user string, kp keyPair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubeenv"] = &clientcmdapi.Cluster{Server: e.Host, CertificateAuthorityData: e.pki.certPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.CertPEM, ClientKeyData: kp.KeyPEM}
	cfg.Contexts["kubeenv"] = &clientcmdapi.Context{Cluster: "kubeenv", AuthInfo: user, Namespace: metav1.NamespaceDefault}
	cfg.CurrentContext = "kubeenv"
	return clientcmd.WriteToFile(*cfg, path)
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// KubeconfigFor writes a kubeconfig that authenticates as user, member of
// groups, with a fresh client certificate, and returns its path. Without RBAC
// bindings that user may do nothing but discovery; grant rights with
// Roles/ClusterRoles and bindings through Apply. The kubeconfig's namespace is
// "default".
func (e *Env) KubeconfigFor(user string, groups []string) (string, error) {
	kp, err := e.pki.client(user, groups)
	if err != nil {
		return "", err
	}
	path := filepath.Join(e.Dir, "kubeconfigs",
		fmt.Sprintf("%03d-%s.kubeconfig", e.kcSeq.Add(1), unsafeFileChars.ReplaceAllString(user, "_")))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	return path, e.writeKubeconfig(path, user, kp)
}

// RESTConfigFor returns a rest.Config that authenticates as user, member of
// groups, with a fresh client certificate.
func (e *Env) RESTConfigFor(user string, groups []string) (*rest.Config, error) {
	kp, err := e.pki.client(user, groups)
	if err != nil {
		return nil, err
	}
	return e.restConfig(kp), nil
}

// Clientset returns a typed clientset for the admin user.
func (e *Env) Clientset() (kubernetes.Interface, error) {
	return kubernetes.NewForConfig(rest.CopyConfig(e.RESTConfig))
}

// Dynamic returns a dynamic client for the admin user.
func (e *Env) Dynamic() (dynamic.Interface, error) {
	return dynamic.NewForConfig(rest.CopyConfig(e.RESTConfig))
}

// NewNamespace creates a namespace with a unique name that starts with prefix
// and returns its name. Namespaces are never deleted: without a
// controller-manager their deletion would not finish, and the whole control
// plane is thrown away at Stop anyway.
func (e *Env) NewNamespace(ctx context.Context, prefix string) (string, error) {
	cs, err := e.Clientset()
	if err != nil {
		return "", err
	}
	prefix = strings.Trim(strings.ToLower(unsafeFileChars.ReplaceAllString(prefix, "-")), "-._")
	if prefix == "" {
		prefix = "test"
	}
	if len(prefix) > 40 {
		prefix = prefix[:40]
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	created, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("create namespace %s*: %w", prefix, err)
	}
	return created.Name, nil
}

// Kubectl returns a command that runs the provisioned kubectl (same version as
// the apiserver) with the given kubeconfig ("" = the admin kubeconfig). The
// discovery cache goes to Env.Dir, not ~/.kube; Bin.Dir is put first on PATH so
// plugins placed there are found too. Add more PATH entries via cmd.Env.
func (e *Env) Kubectl(ctx context.Context, kubeconfig string, args ...string) *exec.Cmd {
	if kubeconfig == "" {
		kubeconfig = e.Kubeconfig
	}
	cmd := exec.CommandContext(ctx, e.Bin.Kubectl, args...)
	cmd.Env = append(os.Environ(),
		"KUBECONFIG="+kubeconfig,
		"KUBECACHEDIR="+filepath.Join(e.Dir, "kubectl-cache"),
		"PATH="+e.Bin.Dir+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
	return cmd
}

// LogTails returns the last n lines of the etcd and kube-apiserver logs.
func (e *Env) LogTails(n int) string {
	var b strings.Builder
	for _, l := range []struct{ name, path string }{{"etcd", e.EtcdLog}, {"kube-apiserver", e.APIServerLog}} {
		if l.path == "" {
			continue
		}
		fmt.Fprintf(&b, "last %d lines of %s (%s):\n%s\n", n, l.name, l.path, tailFile(l.path, n))
	}
	return b.String()
}

// PIDs returns the process ids (also process-group ids) of the running
// kube-apiserver and etcd, for tests of the harness itself.
func (e *Env) PIDs() []int {
	var pids []int
	if e.apiserver != nil {
		pids = append(pids, e.apiserver.pid())
	}
	if e.etcd != nil && e.etcd.proc != nil {
		pids = append(pids, e.etcd.proc.pid())
	}
	return pids
}

// Stop kills kube-apiserver and etcd (their whole process groups), waits until
// they have exited, and removes Env.Dir unless KDYN_KEEP=1. It is idempotent
// and safe on a partially started Env.
func (e *Env) Stop() error {
	e.stopOnce.Do(func() {
		var errs []error
		if e.apiserver != nil {
			errs = append(errs, e.apiserver.stop(30*time.Second))
		}
		if e.etcd != nil {
			errs = append(errs, e.etcd.Stop())
		}
		for _, pid := range e.PIDs() {
			if groupAlive(pid) {
				errs = append(errs, fmt.Errorf("process group %d still has processes after Stop", pid))
			}
		}
		if e.Dir != "" && os.Getenv("KDYN_KEEP") != "1" {
			errs = append(errs, os.RemoveAll(e.Dir))
		}
		e.stopErr = errors.Join(errs...)
	})
	return e.stopErr
}

// isNotFound is a small helper shared by the apply code.
func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
