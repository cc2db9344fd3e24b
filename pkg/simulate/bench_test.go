package simulate

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/explain"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate/trace"
)

// syntheticDeployment builds a disaggregated deployment of prefill and
// decode workers spread over zones, with a required zone policy, in the shape
// pkg/build builds from a real cluster (one instance per worker, a card with
// block size 16 and the worker's zone in its runtime config).
func syntheticDeployment(prefill, decode int, zones []string) *model.Deployment {
	dep := &model.Deployment{
		Name: "bench", Namespace: "sim",
		Policy: &model.TransferPolicy{Domain: "zone", Enforcement: routecore.EnforcementRequired},
		Router: model.RouterInfo{Mode: "kv", ModeSource: "frontend args", Config: routecore.DefaultKvRouterConfig()},
	}
	id := routecore.WorkerID(1000)
	add := func(role model.Role, i int) {
		zone := zones[i%len(zones)]
		id++
		rc := routecore.RuntimeConfig{TopologyDomains: map[string]string{"zone": zone}}
		if role == model.RolePrefill {
			rc.KvTransferDomain, rc.KvTransferEnforcement = "zone", routecore.EnforcementRequired
		}
		dep.Workers = append(dep.Workers, model.Worker{
			Pod: fmt.Sprintf("bench-%s-%s-%d", role, zone, i), Namespace: "sim", Role: role, Replica: fmt.Sprintf("r-%s-%d", role, i),
			Leader: true, Ready: true, GPUs: 1,
			Domain:    model.DomainValues{Published: zone},
			Instances: []model.Instance{{ID: id, Endpoint: "sim/worker/generate", Model: "bench", WorkerType: string(role), BlockSize: 16, Runtime: rc}},
		})
	}
	for i := range prefill {
		add(model.RolePrefill, i)
	}
	for i := range decode {
		add(model.RoleDecode, i)
	}
	return dep
}

// conversationLike is a synthetic trace shaped like Mooncake's conversation
// trace (pkg/simulate/trace/testdata/README.md: 12,031 requests over 59 min,
// input mean ≈12k tokens, output mean ≈343, 37 % of prompt tokens cacheable).
const conversationLike = "rate=3.4,isl=1000-23000,osl=100-600,prefix-share=0.37,prefixes=1,requests=12031"

func runBench(b *testing.B, dep *model.Deployment, spec string) {
	b.Helper()
	runBenchEngine(b, dep, spec, DefaultEngine())
}

func runBenchEngine(b *testing.B, dep *model.Deployment, spec string, eng Engine) {
	b.Helper()
	b.ReportAllocs()
	var peak uint64
	sample := func(Progress) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	for b.Loop() {
		r, err := Run(context.Background(), Options{
			Deployment: dep, Base: explain.Options{Seed: 1}, Engine: eng,
			Open:     func() (trace.Reader, error) { return trace.Synthetic(spec, 1) },
			Progress: sample, ProgressEvery: 2000,
		})
		if err != nil {
			b.Fatal(err)
		}
		if r.Variants[0].Requests == 0 {
			b.Fatal("no requests")
		}
		b.ReportMetric(float64(r.Variants[0].Requests), "requests")
	}
	// The heap in use at its highest sample (every 2,000 requests): with the
	// trace streamed it follows the KV caches and index, not the request count.
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// BenchmarkMemoryByTraceLength: the same deployment and traffic shape with
// caches small enough to fill early (4,096 blocks a rank), then 4× the
// requests: the peak heap stays the same — it is bounded by the caches and
// the index, not by the trace.
func BenchmarkMemoryByTraceLength(b *testing.B) {
	dep := syntheticDeployment(32, 32, []string{"us-east-1a", "us-east-1b", "us-east-1c"})
	eng := DefaultEngine()
	eng.KvCapacityBlocks = 4096
	for _, n := range []int{10000, 40000} {
		b.Run(fmt.Sprintf("requests=%d", n), func(b *testing.B) {
			runBenchEngine(b, dep, fmt.Sprintf("rate=20,isl=500-3000,osl=50-300,prefix-share=0.4,prefixes=16,requests=%d", n), eng)
		})
	}
}

// BenchmarkMooncakeConversation64: the conversation-shaped trace (12,031
// requests) against 64 workers (32 prefill, 32 decode, 3 zones). Target: under
// 5 s on one core (-cpu 1).
func BenchmarkMooncakeConversation64(b *testing.B) {
	runBench(b, syntheticDeployment(32, 32, []string{"us-east-1a", "us-east-1b", "us-east-1c"}), conversationLike)
}

// BenchmarkScale100kx1000: 100,000 requests against 1,000 workers. Target:
// under 60 s.
func BenchmarkScale100kx1000(b *testing.B) {
	runBench(b, syntheticDeployment(500, 500, []string{"us-east-1a", "us-east-1b", "us-east-1c"}),
		"rate=400,isl=500-3000,osl=50-400,prefix-share=0.4,prefixes=64,requests=100000")
}

// BenchmarkMooncakeConversationFile64 replays the real Mooncake conversation
// trace (kvcache-ai/Mooncake FAST25-release/traces/conversation_trace.jsonl,
// 12,031 requests, 3 MB, not shipped) against 64 workers when
// KDYN_MOONCAKE_TRACE names the file; skipped otherwise.
func BenchmarkMooncakeConversationFile64(b *testing.B) {
	path := os.Getenv("KDYN_MOONCAKE_TRACE")
	if path == "" {
		b.Skip("set KDYN_MOONCAKE_TRACE to conversation_trace.jsonl")
	}
	dep := syntheticDeployment(32, 32, []string{"us-east-1a", "us-east-1b", "us-east-1c"})
	b.ReportAllocs()
	for b.Loop() {
		r, err := Run(context.Background(), Options{
			Deployment: dep, Base: explain.Options{Seed: 1}, Engine: DefaultEngine(),
			Open: func() (trace.Reader, error) {
				f, err := os.Open(path)
				if err != nil {
					return nil, err
				}
				b.Cleanup(func() { _ = f.Close() })
				return trace.Open(f, trace.Mooncake, trace.Options{})
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		v := r.Variants[0]
		b.ReportMetric(float64(v.Requests), "requests")
		b.ReportMetric(100*v.HitRate, "kv-hit-%")
	}
}

// recommendDeployment is a 3-zone deployment with two prefill workers a
// zone and three decode workers in us-east-1a and us-east-1b only, under a
// required zone policy: the requests prefilled in us-east-1c fail at the
// decode hop, the case --recommend answers.
func recommendDeployment() *model.Deployment {
	dep := syntheticDeployment(6, 9, []string{"us-east-1a", "us-east-1b", "us-east-1c"})
	var keep []model.Worker
	for _, w := range dep.Workers {
		if w.Role == model.RoleDecode && w.Domain.Published == "us-east-1c" {
			continue
		}
		keep = append(keep, w)
	}
	dep.Workers = keep
	return dep
}

// BenchmarkRecommendConversation3Zones: --recommend over the
// conversation-shaped trace (12,031 requests, 59 min) and
// recommendDeployment. Target: a recommendation in under 60 s on one core.
func BenchmarkRecommendConversation3Zones(b *testing.B) {
	benchRecommend(b, func() (trace.Reader, error) { return trace.Synthetic(conversationLike, 1) })
}

// BenchmarkRecommendConversationFile3Zones is the same over the real
// Mooncake conversation trace (KDYN_MOONCAKE_TRACE; skipped without it).
func BenchmarkRecommendConversationFile3Zones(b *testing.B) {
	path := os.Getenv("KDYN_MOONCAKE_TRACE")
	if path == "" {
		b.Skip("set KDYN_MOONCAKE_TRACE to conversation_trace.jsonl")
	}
	benchRecommend(b, func() (trace.Reader, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		b.Cleanup(func() { _ = f.Close() })
		return trace.Open(f, trace.Mooncake, trace.Options{})
	})
}

func benchRecommend(b *testing.B, open func() (trace.Reader, error)) {
	dep := recommendDeployment()
	for b.Loop() {
		rec, err := Recommend(context.Background(), Options{Deployment: dep, Base: explain.Options{Seed: 1, AssumeIdle: true}, Engine: DefaultEngine(), Open: open},
			RecommendOptions{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if rec.Recommended == nil {
			b.Fatalf("no recommendation: %+v", rec.Alternatives)
		}
		b.ReportMetric(float64(rec.Runs), "runs")
		b.ReportMetric(float64(rec.Recommended.AddedGPUs), "added-GPUs")
		b.Logf("recommended %s (%d GPUs): failed %d; alternatives %d; runs %d", rec.Recommended.Spec, rec.Recommended.AddedGPUs, rec.Recommended.Result.Failed, len(rec.Alternatives), rec.Runs)
		for _, a := range rec.Alternatives {
			b.Logf("alternative %s (%d GPUs): failed %d, meets %v", a.Spec, a.AddedGPUs, a.Result.Failed, a.MeetsGoal)
		}
	}
}

// overloadedAggregated is two aggregated workers of one GPU (20,000 prompt
// tok/s under the built-in engine model) in one zone, the KV router with
// Dynamo's defaults: the conversation-shaped trace offers about twice that.
func overloadedAggregated() *model.Deployment {
	dep := syntheticDeployment(0, 2, []string{"us-east-1a"})
	dep.Policy = nil
	for i := range dep.Workers {
		dep.Workers[i].Role = model.RoleAggregated
		dep.Workers[i].Instances[0].WorkerType = string(model.RoleAggregated)
	}
	return dep
}

// BenchmarkMemoryOverloadAggregated (issue 31): the conversation-shaped
// trace over overloadedAggregated, 2× its capacity, so that the prefill
// queue holds thousands of requests for most of the run. The peak heap must
// follow the caches and the index, not the queue.
func BenchmarkMemoryOverloadAggregated(b *testing.B) {
	runBench(b, overloadedAggregated(), conversationLike)
}
