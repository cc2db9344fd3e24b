// Command scale-bench measures `kubectl dynamo topology -A -o json` against a
// real kube-apiserver (internal/testutil/kubeenv) holding a large generated
// deployment: many Nodes, worker Pods and DynamoWorkerMetadata objects.
//
// For each size it reports the plugin's API request count (from the audit log,
// via a dedicated client-certificate user), its wall time as a ratio to
// `kubectl get pods -A -o json` measured in the same run, and its peak RSS.
//
//	go run ./hack/scale-bench -nodes 2000 -sizes 1000,10000
//
// The binaries of the test control plane must be provisioned
// (hack/testbin/provision.sh); see internal/testutil/kubeenv.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/scalefixture"
)

func main() {
	var (
		nodes   = flag.Int("nodes", 2000, "number of Nodes")
		pods    = flag.Int("pods", 0, "number of worker pods (shorthand for -sizes N)")
		sizesS  = flag.String("sizes", "1000,10000", "comma-separated worker-pod counts to measure, ascending; objects are added between sizes")
		runs    = flag.Int("runs", 3, "timed runs per command and size")
		workers = flag.Int("workers", 16, "concurrent create requests")
		crds    = flag.String("crds", "", "CRD directory (default: test/crds of the module root)")
		kubectl = flag.String("kubectl", "kubectl", "kubectl binary for the baseline")
	)
	flag.Parse()
	sizes, err := parseSizes(*sizesS)
	if *pods > 0 {
		sizes, err = []int{*pods}, nil
	}
	if err != nil {
		fatal(err)
	}
	root, err := scalefixture.ModuleRoot()
	if err != nil {
		fatal(err)
	}
	if *crds == "" {
		*crds = filepath.Join(root, "test", "crds")
	}
	kubectlPath, err := exec.LookPath(*kubectl)
	if err != nil {
		fatal(err)
	}

	// Build the plugin first: a compile error should not cost a control plane.
	tmp, err := os.MkdirTemp("", "scale-bench-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	plugin := filepath.Join(tmp, "kubectl-dynamo")
	t0 := time.Now()
	build := exec.Command("go", "build", "-o", plugin, "./cmd/kubectl-dynamo")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fatal(fmt.Errorf("go build: %w", err))
	}
	scalefixture.Logf(os.Stderr, "built %s in %s", plugin, since(t0))

	t0 = time.Now()
	env, err := kubeenv.StartShared(kubeenv.Options{CRDs: []string{*crds}, AuditLog: true})
	if err != nil {
		fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			scalefixture.Logf(os.Stderr, "stop: %v", err)
		}
	}()
	scalefixture.Logf(os.Stderr, "control plane up in %s (%s)", since(t0), env.Dir)

	if err := bench(env, plugin, kubectlPath, *nodes, sizes, *runs, *workers); err != nil {
		scalefixture.Logf(os.Stderr, "FAILED: %v\n%s", err, env.LogTails(20))
		_ = env.Stop()
		os.Exit(1) //nolint:gocritic // the control plane was stopped just above
	}
}

type result struct {
	size, pods, dwms, nodes int
	createTime              time.Duration
	kubectlTimes            []time.Duration
	pluginTimes             []time.Duration
	kubectlReqs             []int
	pluginReqs              []int
	pluginFirstReqs         []int // requests without a continue token (one per list call, not per page)
	pluginReqDetail         string
	pluginRSS, kubectlRSS   []int64 // KiB
}

func bench(env *kubeenv.Env, plugin, kubectlPath string, nodes int, sizes []int, runs, workers int) error {
	ctx := context.Background()
	cs, dyn, err := scalefixture.Clients(env)
	if err != nil {
		return err
	}
	pluginKC, err := env.KubeconfigFor("bench-plugin", []string{"system:masters"})
	if err != nil {
		return err
	}
	kubectlKC, err := env.KubeconfigFor("bench-kubectl", []string{"system:masters"})
	if err != nil {
		return err
	}

	t0 := time.Now()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: scalefixture.Namespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := scalefixture.Parallel(nodes, workers, func(i int) error { return scalefixture.CreateNode(ctx, cs, i) }); err != nil {
		return fmt.Errorf("nodes: %w", err)
	}
	scalefixture.Logf(os.Stderr, "created %d nodes in %s", nodes, since(t0))

	var results []*result
	have := 0
	for _, size := range sizes {
		t0 := time.Now()
		if err := scalefixture.ApplyDGD(ctx, env, size); err != nil {
			return fmt.Errorf("dgd: %w", err)
		}
		var created atomic.Int64
		err := scalefixture.Parallel(size-have, workers, func(j int) error {
			i := have + j
			uid, err := scalefixture.CreatePod(ctx, cs, i, nodes)
			if err != nil {
				return fmt.Errorf("pod %d: %w", i, err)
			}
			if err := scalefixture.CreateDWM(ctx, dyn, i, uid, nodes); err != nil {
				return fmt.Errorf("dwm %d: %w", i, err)
			}
			if n := created.Add(1); n%2000 == 0 {
				scalefixture.Logf(os.Stderr, "  %d/%d pods+DWMs (%s)", n, size-have, since(t0))
			}
			return nil
		})
		if err != nil {
			return err
		}
		r := &result{size: size, pods: size, dwms: size, nodes: nodes, createTime: time.Since(t0)}
		scalefixture.Logf(os.Stderr, "size %d: created %d pods (+status) and %d DWMs in %s", size, size-have, size-have, since(t0))
		have = size

		// Warm-up (discovery caches, page cache) -- not measured.
		if _, err := run(exec.Command(kubectlPath, "get", "pods", "-A", "-o", "json"), kubectlKC); err != nil {
			return err
		}
		if _, err := run(pluginCmd(plugin, pluginKC), ""); err != nil {
			return err
		}
		// Sanity check: the plugin sees the generated deployment (table output).
		show := exec.Command(plugin, "topology", "-A", "--no-frontend", "--no-etcd", "--exit-zero", "--kubeconfig", pluginKC)
		out, err := show.CombinedOutput()
		if err != nil {
			return fmt.Errorf("topology: %w\n%s", err, out)
		}
		lines := strings.SplitN(string(out), "\n", 16)
		scalefixture.Logf(os.Stderr, "  plugin table output (head):\n%s", strings.Join(lines[:min(len(lines), 15)], "\n"))
		for k := 0; k < runs; k++ {
			// kubectl baseline
			off, err := env.AuditOffset()
			if err != nil {
				return err
			}
			m, err := run(exec.Command(kubectlPath, "get", "pods", "-A", "-o", "json"), kubectlKC)
			if err != nil {
				return err
			}
			n, _, err := countRequests(env, off, "bench-kubectl")
			if err != nil {
				return err
			}
			r.kubectlTimes = append(r.kubectlTimes, m.wall)
			r.kubectlRSS = append(r.kubectlRSS, m.maxRSS)
			r.kubectlReqs = append(r.kubectlReqs, n)

			// plugin
			if off, err = env.AuditOffset(); err != nil {
				return err
			}
			m, err = run(pluginCmd(plugin, pluginKC), "")
			if err != nil {
				return err
			}
			n, detail, err := countRequests(env, off, "bench-plugin")
			if err != nil {
				return err
			}
			first, _, err := countRequests(env, off, "bench-plugin", withoutContinue)
			if err != nil {
				return err
			}
			r.pluginFirstReqs = append(r.pluginFirstReqs, first)
			r.pluginTimes = append(r.pluginTimes, m.wall)
			r.pluginRSS = append(r.pluginRSS, m.maxRSS)
			r.pluginReqs = append(r.pluginReqs, n)
			r.pluginReqDetail = detail
			scalefixture.Logf(os.Stderr, "  run %d: kubectl %s (%d req, %d MiB)  plugin %s (%d req, %d MiB)", k+1,
				r.kubectlTimes[k].Round(time.Millisecond), r.kubectlReqs[k], r.kubectlRSS[k]>>10,
				r.pluginTimes[k].Round(time.Millisecond), r.pluginReqs[k], r.pluginRSS[k]>>10)
		}
		results = append(results, r)
	}
	printTable(results, nodes, runs)
	return nil
}

func pluginCmd(plugin, kc string) *exec.Cmd {
	return exec.Command(plugin, "topology", "-A", "-o", "json", "--no-frontend", "--no-etcd", "--exit-zero", "--kubeconfig", kc)
}

type measurement struct {
	wall   time.Duration
	maxRSS int64 // KiB
}

// run runs cmd with stdout discarded, timing the wall clock and reading the
// child's peak RSS from its rusage.
func run(cmd *exec.Cmd, kubeconfig string) (measurement, error) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return measurement{}, err
	}
	defer devnull.Close()
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = devnull, &stderr
	cmd.Env = os.Environ()
	if kubeconfig != "" {
		cmd.Env = append(cmd.Env, "KUBECONFIG="+kubeconfig)
	}
	t0 := time.Now()
	err = cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		return measurement{}, fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	m := measurement{wall: wall}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.maxRSS = ru.Maxrss
		if runtime.GOOS == "darwin" {
			m.maxRSS >>= 10 // bytes there, KiB on Linux
		}
	}
	return m, nil
}

// countRequests counts the audit events of user since offset; the audit log is
// written in blocking mode, so all of a finished client's requests are in it.
func countRequests(env *kubeenv.Env, offset int64, user string, filters ...func(kubeenv.AuditEvent) bool) (int, string, error) {
	evs, _, err := env.AuditEventsFrom(offset)
	if err != nil {
		return 0, "", err
	}
	by := map[string]int{}
	n := 0
	for _, ev := range evs {
		if ev.User != user || !all(ev, filters) {
			continue
		}
		n++
		key := ev.Verb + " "
		if ev.ObjectRef != nil {
			key += ev.ObjectRef.Resource
		} else {
			key += "(discovery)"
		}
		by[key]++
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s×%d", k, by[k]))
	}
	return n, strings.Join(parts, ", "), nil
}

func withoutContinue(ev kubeenv.AuditEvent) bool {
	return !strings.Contains(ev.RequestURI, "continue=")
}

func all(ev kubeenv.AuditEvent, fs []func(kubeenv.AuditEvent) bool) bool {
	for _, f := range fs {
		if !f(ev) {
			return false
		}
	}
	return true
}

// --- object generation ------------------------------------------------------

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func maxInt(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func maxI64(xs []int64) int64 {
	var m int64
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func printTable(rs []*result, nodes, runs int) {
	fmt.Printf("\n%d nodes, %d runs per command (median wall time; max of requests and RSS), %s/%s, %d CPUs\n\n",
		nodes, runs, runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Println("| pods | DWMs | create time | `kubectl get pods -A -o json` | plugin `topology -A -o json` | ratio | kubectl requests | plugin requests (calls + continue pages) | kubectl peak RSS | plugin peak RSS |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rs {
		k, p := median(r.kubectlTimes), median(r.pluginTimes)
		fmt.Printf("| %d | %d | %s | %s | %s | %.2f | %d | %d (%d + %d) | %d MiB | %d MiB |\n",
			r.pods, r.dwms, r.createTime.Round(100*time.Millisecond), k.Round(time.Millisecond), p.Round(time.Millisecond),
			float64(p)/float64(k), maxInt(r.kubectlReqs), maxInt(r.pluginReqs), maxInt(r.pluginFirstReqs), maxInt(r.pluginReqs)-maxInt(r.pluginFirstReqs), maxI64(r.kubectlRSS)>>10, maxI64(r.pluginRSS)>>10)
	}
	fmt.Println()
	for _, r := range rs {
		fmt.Printf("plugin requests at %d pods: %s\n", r.pods, r.pluginReqDetail)
		fmt.Printf("  raw: kubectl %v  plugin %v\n", roundAll(r.kubectlTimes), roundAll(r.pluginTimes))
	}
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad -sizes %q", s)
		}
		out = append(out, n)
	}
	sort.Ints(out)
	return out, nil
}

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }

func fatal(err error) {
	scalefixture.Logf(os.Stderr, "scale-bench: %v", err)
	os.Exit(1)
}
