// Command watch-scale measures the memory of the two long-running views of
// kubectl-dynamo — `topology --watch` and the dashboard — holding a large
// deployment on a real kube-apiserver (internal/testutil/kubeenv) while a
// steady stream of watch events arrives (issue 8, "Scale").
//
// It creates N Nodes, one DynamoGraphDeployment and W worker Pods with one
// DynamoWorkerMetadata each (the objects of hack/scale-bench), starts
//
//   - the built binary: kubectl-dynamo topology DGD --watch -o json (a child
//     process; its reports are decoded from its stdout), and
//   - the dashboard, headless: ./dashboard-driver, a small program running the
//     dashboard command's own options, watches and Bubble Tea model without a
//     terminal (a child process too),
//
// then patches pods at a steady rate (alternately a label and the Ready
// condition, spread over all pods) for E events, sampling both processes'
// VmRSS and VmHWM from /proc every second, and prints a markdown table: RSS at
// the start and after each quarter of the events, the peak (VmHWM), and a
// verdict on whether memory is steady (the mean RSS over the last quarter of
// the events within 10% of the mean over the second quarter).
//
//	go run ./hack/watch-scale -pods 10000 -events 10000
//
// Linux only (/proc). The binaries of the test control plane must be
// provisioned (hack/testbin/provision.sh).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/kubeenv"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/scalefixture"
)

func main() {
	var (
		nodes    = flag.Int("nodes", 2000, "number of Nodes")
		pods     = flag.Int("pods", 10000, "number of worker pods (each with a DynamoWorkerMetadata)")
		events   = flag.Int("events", 10000, "number of watch events to generate (pod patches)")
		rate     = flag.Float64("rate", 25, "watch events per second")
		workers  = flag.Int("workers", 16, "concurrent create requests")
		interval = flag.Duration("watch-interval", 5*time.Second, "topology --watch-interval")
		settle   = flag.Duration("settle", 5*time.Minute, "after the last event, wait at most this long for both views to show it")
		crds     = flag.String("crds", "", "CRD directory (default: test/crds of the module root)")
		samples  = flag.String("samples", "", "also write every RSS sample to this CSV file")
		views    = flag.String("views", "topology,dashboard", "which views to run: topology, dashboard or both")
	)
	flag.Parse()
	if runtime.GOOS != "linux" {
		fatal(errors.New("watch-scale reads /proc: Linux only"))
	}
	root, err := scalefixture.ModuleRoot()
	if err != nil {
		fatal(err)
	}
	if *crds == "" {
		*crds = filepath.Join(root, "test", "crds")
	}
	tmp, err := os.MkdirTemp("", "watch-scale-")
	if err != nil {
		fatal(err)
	}
	if err := runAll(root, tmp, *crds, config{nodes: *nodes, pods: *pods, events: *events, rate: *rate, workers: *workers, interval: *interval,
		settle: *settle, samples: *samples, views: strings.Split(*views, ",")}); err != nil {
		_ = os.RemoveAll(tmp)
		fatal(err)
	}
	_ = os.RemoveAll(tmp)
}

// runAll builds the binaries into tmp, starts the control plane, measures and
// stops it.
func runAll(root, tmp, crds string, cfg config) error {
	// Build first: a compile error should not cost a control plane.
	t0 := time.Now()
	cfg.plugin, cfg.driver = filepath.Join(tmp, "kubectl-dynamo"), filepath.Join(tmp, "dashboard-driver")
	for _, b := range [][2]string{{cfg.plugin, "./cmd/kubectl-dynamo"}, {cfg.driver, "./hack/watch-scale/dashboard-driver"}} {
		build := exec.Command("go", "build", "-o", b[0], b[1])
		build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build %s: %w", b[1], err)
		}
	}
	scalefixture.Logf(os.Stderr, "built %s and %s in %s", cfg.plugin, cfg.driver, since(t0))

	t0 = time.Now()
	env, err := kubeenv.StartShared(kubeenv.Options{CRDs: []string{crds}})
	if err != nil {
		return err
	}
	scalefixture.Logf(os.Stderr, "control plane up in %s (%s)", since(t0), env.Dir)
	err = measure(env, cfg)
	if err != nil {
		scalefixture.Logf(os.Stderr, "FAILED: %v\n%s", err, env.LogTails(20))
	}
	if serr := env.Stop(); serr != nil {
		scalefixture.Logf(os.Stderr, "stop: %v", serr)
	}
	return err
}

type config struct {
	nodes, pods, events, workers int
	rate                         float64
	interval, settle             time.Duration
	samples                      string
	views                        []string
	plugin, driver               string
}

// view is one measured child process.
type view struct {
	name string
	cmd  *exec.Cmd
	pid  int

	mu sync.Mutex
	// updates counts what the view produced (reports printed, reloads shown);
	// lastAt is when the last one arrived, lastWorkers how many workers it had.
	updates     int
	lastAt      time.Time
	lastWorkers int
	lastReady   int
	firstErr    string
	ready       chan struct{}
	readyOnce   sync.Once
	exited      chan struct{}
}

func (v *view) update(workers, ready int, errText string) {
	v.mu.Lock()
	v.updates++
	v.lastAt = time.Now()
	if errText == "" {
		v.lastWorkers, v.lastReady = workers, ready
	} else if v.firstErr == "" {
		v.firstErr = errText
	}
	v.mu.Unlock()
	v.readyOnce.Do(func() { close(v.ready) })
}

func (v *view) state() (updates, lastWorkers, lastReady int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.updates, v.lastWorkers, v.lastReady
}

// sample is one reading of a view's memory.
type sample struct {
	at       time.Duration // since the first event
	events   int64
	rss, hwm int64 // KiB
}

func measure(env *kubeenv.Env, c config) error {
	ctx := context.Background()
	cs, dyn, err := scalefixture.Clients(env)
	if err != nil {
		return err
	}
	kc, err := env.KubeconfigFor("watch-scale", []string{"system:masters"})
	if err != nil {
		return err
	}
	createTime, err := populate(ctx, env, cs, dyn, c)
	if err != nil {
		return err
	}

	// The views.
	var vs []*view
	for _, name := range c.views {
		var v *view
		switch strings.TrimSpace(name) {
		case "topology":
			v, err = startTopology(c, kc)
		case "dashboard":
			v, err = startDashboard(c, kc)
		default:
			return fmt.Errorf("-views: unknown view %q (topology, dashboard)", name)
		}
		if err != nil {
			return err
		}
		vs = append(vs, v)
	}
	defer func() {
		for _, v := range vs {
			stopView(v)
		}
	}()
	t0 := time.Now()
	for _, v := range vs {
		select {
		case <-v.ready:
		case <-v.exited:
			return fmt.Errorf("%s exited before showing the deployment", v.name)
		case <-time.After(15 * time.Minute):
			return fmt.Errorf("%s showed nothing within 15 minutes", v.name)
		}
		_, w, _ := v.state()
		scalefixture.Logf(os.Stderr, "%s ready after %s: %d workers (pid %d)", v.name, since(t0), w, v.pid)
		if w != c.pods {
			return fmt.Errorf("%s shows %d workers, want %d", v.name, w, c.pods)
		}
	}

	// Sample every second from now on.
	var done atomic.Int64 // events applied
	began := time.Now()
	series := make([][]sample, len(vs))
	var smu sync.Mutex
	stopSampling := make(chan struct{})
	var sampling sync.WaitGroup
	sampling.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			smu.Lock()
			for i, v := range vs {
				if rss, hwm, err := procMem(v.pid); err == nil {
					series[i] = append(series[i], sample{at: time.Since(began), events: done.Load(), rss: rss, hwm: hwm})
				}
			}
			smu.Unlock()
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
		}
	})

	// The events: pod patches at a steady rate, spread over the pods. Every
	// patch changes the pod (a new label value, or the Ready condition
	// flipped), so each is one MODIFIED event on every pod watch. ready tracks
	// the Ready condition the harness set, to know when a view shows the end.
	scalefixture.Logf(os.Stderr, "generating %d watch events at %.0f/s", c.events, c.rate)
	ready := make([]bool, c.pods)
	for i := range ready {
		ready[i] = true
	}
	jobs := make(chan event)
	var patchers sync.WaitGroup
	var patchErr atomic.Pointer[error]
	for range 8 {
		patchers.Go(func() {
			for k := range jobs {
				if err := patch(ctx, cs, k); err != nil {
					patchErr.CompareAndSwap(nil, &err)
				}
				if n := done.Add(1); n%1000 == 0 {
					scalefixture.Logf(os.Stderr, "  %d/%d events (%s, %.1f/s)", n, c.events, since(began), float64(n)/time.Since(began).Seconds())
				}
			}
		})
	}
	step := time.Duration(float64(time.Second) / c.rate)
	for k := range c.events {
		if d := time.Until(began.Add(time.Duration(k) * step)); d > 0 {
			time.Sleep(d)
		}
		if p := patchErr.Load(); p != nil {
			break
		}
		e := event{k: k, pod: (k * 7919) % c.pods}
		if k%2 == 1 {
			ready[e.pod] = !ready[e.pod]
			e.ready = ready[e.pod]
		}
		jobs <- e
	}
	close(jobs)
	patchers.Wait()
	if p := patchErr.Load(); p != nil {
		return fmt.Errorf("patch: %w", *p)
	}
	lastEvent := time.Now()
	eventsTime := lastEvent.Sub(began)
	wantReady := 0
	for _, r := range ready {
		if r {
			wantReady++
		}
	}
	scalefixture.Logf(os.Stderr, "%d events in %s (%.1f/s); waiting for both views to show the end state (%d ready workers)",
		c.events, eventsTime.Round(100*time.Millisecond), float64(c.events)/eventsTime.Seconds(), wantReady)

	// Settle: each view shows the final number of ready workers.
	deadline := time.Now().Add(c.settle)
	for _, v := range vs {
		for {
			_, _, r := v.state()
			if r == wantReady {
				scalefixture.Logf(os.Stderr, "%s shows the end state %s after the last event", v.name, since(lastEvent))
				break
			}
			if time.Now().After(deadline) {
				scalefixture.Logf(os.Stderr, "%s still shows %d ready workers %s after the last event, want %d", v.name, r, c.settle, wantReady)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	settled := time.Since(began)
	time.Sleep(1500 * time.Millisecond) // one more sample after the settle
	close(stopSampling)
	sampling.Wait()

	if c.samples != "" {
		if err := writeSamples(c.samples, vs, series); err != nil {
			return err
		}
	}
	printTable(c, vs, series, createTime, eventsTime, settled)
	return nil
}

// populate creates the namespace, the nodes, the DGD, the pods and their DWMs.
func populate(ctx context.Context, env *kubeenv.Env, cs kubernetes.Interface, dyn dynamic.Interface, c config) (time.Duration, error) {
	t0 := time.Now()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: scalefixture.Namespace}}, metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	if err := scalefixture.Parallel(c.nodes, c.workers, func(i int) error { return scalefixture.CreateNode(ctx, cs, i) }); err != nil {
		return 0, fmt.Errorf("nodes: %w", err)
	}
	scalefixture.Logf(os.Stderr, "created %d nodes in %s", c.nodes, since(t0))
	if err := scalefixture.ApplyDGD(ctx, env, c.pods); err != nil {
		return 0, fmt.Errorf("dgd: %w", err)
	}
	var created atomic.Int64
	err := scalefixture.Parallel(c.pods, c.workers, func(i int) error {
		uid, err := scalefixture.CreatePod(ctx, cs, i, c.nodes)
		if err != nil {
			return fmt.Errorf("pod %d: %w", i, err)
		}
		if err := scalefixture.CreateDWM(ctx, dyn, i, uid, c.nodes); err != nil {
			return fmt.Errorf("dwm %d: %w", i, err)
		}
		if n := created.Add(1); n%2000 == 0 {
			scalefixture.Logf(os.Stderr, "  %d/%d pods+DWMs (%s)", n, c.pods, since(t0))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	scalefixture.Logf(os.Stderr, "created %d pods (+status) and %d DWMs in %s", c.pods, c.pods, since(t0))
	return time.Since(t0), nil
}

// event is one pod patch: even events set a label on the pod, odd ones set
// its Ready condition (status subresource) to ready, so that the report changes
// too. Consecutive events touch pods far apart (7919 is prime to the usual pod
// counts, so with as many pods as events each pod is patched once).
type event struct {
	k, pod int
	ready  bool
}

func patch(ctx context.Context, cs kubernetes.Interface, e event) error {
	if e.k%2 == 0 {
		p := fmt.Sprintf(`{"metadata":{"labels":{"kdyn-bench/seq":"%d"}}}`, e.k)
		_, err := cs.CoreV1().Pods(scalefixture.Namespace).Patch(ctx, scalefixture.PodName(e.pod), types.MergePatchType, []byte(p), metav1.PatchOptions{})
		return err
	}
	status := "False"
	if e.ready {
		status = "True"
	}
	p := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":%q}]}}`, status)
	_, err := cs.CoreV1().Pods(scalefixture.Namespace).Patch(ctx, scalefixture.PodName(e.pod), types.StrategicMergePatchType, []byte(p), metav1.PatchOptions{}, "status")
	return err
}

// startTopology starts `topology --watch -o json` and decodes its reports.
func startTopology(c config, kc string) (*view, error) {
	cmd := exec.Command(c.plugin, "topology", scalefixture.DGDName, "-n", scalefixture.Namespace, "-o", "json", "--watch", "--watch-interval", c.interval.String(),
		"--no-frontend", "--no-etcd", "--exit-zero", "--kubeconfig", kc)
	v := &view{name: "topology --watch", cmd: cmd, ready: make(chan struct{}), exited: make(chan struct{})}
	out, err := start(v)
	if err != nil {
		return nil, err
	}
	go func() {
		dec := json.NewDecoder(bufio.NewReaderSize(out, 1<<20))
		for {
			var r struct {
				Deployments []struct {
					Domains []struct {
						Prefill, Decode struct{ Ready, Total int }
					}
				}
			}
			if err := dec.Decode(&r); err != nil {
				if !errors.Is(err, io.EOF) {
					scalefixture.Logf(os.Stderr, "topology --watch output: %v", err)
				}
				_, _ = io.Copy(io.Discard, out)
				return
			}
			n, ready := 0, 0
			for _, d := range r.Deployments {
				for _, dom := range d.Domains {
					n += dom.Prefill.Total + dom.Decode.Total
					ready += dom.Prefill.Ready + dom.Decode.Ready
				}
			}
			v.update(n, ready, "")
		}
	}()
	return v, nil
}

// startDashboard starts the headless dashboard and reads its progress lines.
func startDashboard(c config, kc string) (*view, error) {
	cmd := exec.Command(c.driver, scalefixture.DGDName, "-n", scalefixture.Namespace, "--no-frontend", "--no-etcd", "--kubeconfig", kc)
	v := &view{name: "dashboard", cmd: cmd, ready: make(chan struct{}), exited: make(chan struct{})}
	out, err := start(v)
	if err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) >= 3 && f[0] == "ready":
				n, _ := strconv.Atoi(f[1])
				r, _ := strconv.Atoi(f[2])
				v.update(n, r, "")
			case len(f) >= 4 && f[0] == "reload":
				n, _ := strconv.Atoi(f[2])
				r, _ := strconv.Atoi(f[3])
				errText := ""
				if _, e, ok := strings.Cut(sc.Text(), " error: "); ok {
					errText = e
				}
				v.update(n, r, errText)
			case len(f) >= 1 && f[0] == "watch":
				scalefixture.Logf(os.Stderr, "dashboard: %s", sc.Text())
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	return v, nil
}

func start(v *view) (io.Reader, error) {
	v.cmd.Stderr = os.Stderr
	v.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := v.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := v.cmd.Start(); err != nil {
		return nil, err
	}
	v.pid = v.cmd.Process.Pid
	go func() { _ = v.cmd.Wait(); close(v.exited) }()
	return out, nil
}

func stopView(v *view) {
	_ = v.cmd.Process.Signal(os.Interrupt)
	select {
	case <-v.exited:
	case <-time.After(30 * time.Second):
		_ = v.cmd.Process.Kill()
		<-v.exited
	}
}

// procMem reads VmRSS and VmHWM (KiB) of pid.
func procMem(pid int) (rss, hwm int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		k, val, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	}
	if rss == 0 {
		return 0, 0, fmt.Errorf("no VmRSS for pid %d", pid)
	}
	return rss, hwm, nil
}

// at returns the first sample with at least n events applied (the last one
// when none has).
func at(s []sample, n int64) sample {
	for _, x := range s {
		if x.events >= n {
			return x
		}
	}
	return s[len(s)-1]
}

// meanRSS is the mean RSS of the samples with lo <= events < hi (hi inclusive
// when it is the total), and their maximum.
func meanRSS(s []sample, lo, hi int64, last bool) (mean, peak int64) {
	var sum, n int64
	for _, x := range s {
		if x.events >= lo && (x.events < hi || (last && x.events == hi)) {
			sum += x.rss
			n++
			peak = max(peak, x.rss)
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / n, peak
}

func printTable(c config, vs []*view, series [][]sample, createTime, eventsTime, settled time.Duration) {
	ev := int64(c.events)
	fmt.Printf("\n%d worker pods + %d DWMs, %d nodes; %d watch events (pod label / Ready patches) in %s (%.1f/s); objects created in %s; %s/%s, %d CPUs\n\n",
		c.pods, c.pods, c.nodes, c.events, eventsTime.Round(time.Second), float64(c.events)/eventsTime.Seconds(), createTime.Round(time.Second),
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Printf("| view | workers | events | duration | RSS at start | after %s | after %s | after %s | after %s | caught up | peak RSS (VmHWM) | mean RSS 2nd / 4th quarter | steady? | updates |\n",
		kilo(ev/4), kilo(ev/2), kilo(3*ev/4), kilo(ev))
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
	for i, v := range vs {
		s := series[i]
		if len(s) == 0 {
			fmt.Printf("| %s | no samples |\n", v.name)
			continue
		}
		q := func(f float64) sample { return at(s, int64(f*float64(ev))) }
		q2, _ := meanRSS(s, ev/4, ev/2, false)
		q4, _ := meanRSS(s, 3*ev/4, ev, true)
		verdict := "yes"
		switch {
		case q2 == 0 || q4 == 0:
			verdict = "too short to tell (a quarter without an RSS sample: raise -events or lower -rate)"
		case float64(q4) > 1.10*float64(q2):
			verdict = "NO"
		}
		hwm := s[len(s)-1].hwm
		updates, workers, _ := v.state()
		fmt.Printf("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s (%+.1f%%) | %s | %d |\n",
			v.name, workers, c.events, settled.Round(time.Second),
			mib(s[0].rss), mib(q(0.25).rss), mib(q(0.5).rss), mib(q(0.75).rss), mib(q(1).rss), mib(s[len(s)-1].rss), mib(hwm),
			mib(q2), mib(q4), 100*(float64(q4)/float64(max(q2, 1))-1), verdict, updates)
	}
	fmt.Println()
	fmt.Println("RSS is sampled every second (VmRSS); \"after N\" is the first sample once N events were applied, \"caught up\" the last one, once both views showed the end state; " +
		"duration runs from the first event until then; the quarters are the samples taken while the 2nd and the 4th quarter of the events were applied (the 4th until both views caught up); " +
		"updates are the reports topology --watch printed (it prints only on change) and the dashboard's reloads.")
	for _, v := range vs {
		if _, _, _ = v.state(); v.firstErr != "" {
			fmt.Printf("%s: first error: %s\n", v.name, v.firstErr)
		}
	}
}

func kilo(n int64) string {
	if n >= 1000 && n%100 == 0 {
		return strconv.FormatFloat(float64(n)/1000, 'f', -1, 64) + "k"
	}
	return strconv.FormatInt(n, 10)
}

func mib(kib int64) string { return fmt.Sprintf("%d MiB", kib>>10) }

func writeSamples(path string, vs []*view, series [][]sample) error {
	var b strings.Builder
	b.WriteString("view,seconds,events,rss_kib,hwm_kib\n")
	for i, v := range vs {
		for _, x := range series[i] {
			fmt.Fprintf(&b, "%s,%.1f,%d,%d,%d\n", v.name, x.at.Seconds(), x.events, x.rss, x.hwm)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }

func fatal(err error) {
	scalefixture.Logf(os.Stderr, "watch-scale: %v", err)
	os.Exit(1)
}
