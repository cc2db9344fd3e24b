package dynosim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/cmdline"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// ScenarioFromDeployment reads a deployment's export scenario: backend, model,
// block size, the worker sets by role with their replicas and parallelism, and
// the frontend's router mode and configuration. notes says, in a fixed order,
// what could not be determined (and what was assumed instead). Trace and Seed
// are left for the caller; Hardware is never known (see Scenario.Hardware).
//
// A worker set is one (role, component): its replicas are its distinct
// multinode replicas (a leader and its workers count once), its GPUs per
// replica the GPUs of its replica's pods (the smallest, noted, when
// replicas differ). Engine knobs come from the
// leader's published runtime config (total_kv_blocks, max_num_seqs,
// max_num_batched_tokens, data_parallel_size) first, then its command line.
func ScenarioFromDeployment(dep *model.Deployment) (Scenario, []string) {
	var notes []string
	note := func(format string, a ...any) { notes = append(notes, fmt.Sprintf(format, a...)) }
	if dep == nil {
		return Scenario{}, []string{"no deployment"}
	}
	s := Scenario{Namespace: dep.Namespace, Deployment: dep.Name, RouterMode: dep.Router.Mode, RouterConfig: dep.Router.Config}
	if s.RouterMode == "" {
		note("router mode: the frontend's router mode is unknown")
	}
	if len(dep.Router.WorkerSetOverrides) > 0 {
		comps := make([]string, 0, len(dep.Router.WorkerSetOverrides))
		for _, o := range dep.Router.WorkerSetOverrides {
			comps = append(comps, o.Component)
		}
		sort.Strings(comps)
		note("router config: worker sets %s publish their own router_config; the frontend's is exported", strings.Join(comps, ", "))
	}

	type group struct {
		role    model.Role
		comp    string
		workers []*model.Worker
	}
	groups := map[string]*group{}
	var order []string
	for i := range dep.Workers {
		w := &dep.Workers[i]
		switch w.Role {
		case model.RolePrefill, model.RoleDecode, model.RoleAggregated:
		default:
			note("workers: %s (role %s) is not a prefill, decode or aggregated worker and is left out", w.Pod, w.Role)
			continue
		}
		key := string(w.Role) + "\x00" + w.Component
		g := groups[key]
		if g == nil {
			g = &group{role: w.Role, comp: w.Component}
			groups[key] = g
			order = append(order, key)
		}
		g.workers = append(g.workers, w)
	}
	sort.Strings(order)

	backends := map[string]bool{}
	models := map[string]bool{}
	blockSizes := map[int]bool{}
	for _, key := range order {
		g := groups[key]
		ws, backend, modelName, bs, wn := workerSet(g.comp, g.workers)
		notes = append(notes, wn...)
		if backend != "" {
			backends[backend] = true
		}
		if modelName != "" {
			models[modelName] = true
		}
		if bs > 0 {
			blockSizes[bs] = true
		}
		switch g.role {
		case model.RolePrefill:
			s.Prefill = append(s.Prefill, ws)
		case model.RoleDecode:
			s.Decode = append(s.Decode, ws)
		default:
			s.Aggregated = append(s.Aggregated, ws)
		}
	}
	if len(order) == 0 {
		note("workers: the deployment has no prefill, decode or aggregated workers")
	}
	s.Backend = pick(keys(backends), "backend", &notes)
	s.Model = pick(keys(models), "model", &notes)
	if bs := keys(blockSizes); len(bs) > 0 {
		s.BlockSize = atoiOr(pick(bs, "KV block size", &notes))
	} else if len(order) > 0 {
		note("block size: no worker publishes kv_cache_block_size or passes a block-size flag")
	}
	if s.Backend != "" {
		// Engine flags are read per backend: re-read sets whose args were
		// scanned before the backend was known.
		for _, sets := range [][]WorkerSet{s.Prefill, s.Decode, s.Aggregated} {
			for i := range sets {
				fillFromArgs(&sets[i], s.Backend)
			}
		}
	}
	for _, sets := range [][]WorkerSet{s.Prefill, s.Decode, s.Aggregated} {
		for i := range sets {
			ws := &sets[i]
			switch {
			case ws.TensorParallel > 0:
			case s.Backend == "trtllm" && hasFlag(ws.Args, "--extra-engine-args"):
				note("parallelism: %s's TensorRT-LLM settings are in an --extra-engine-args file, which kubectl-dynamo cannot read; its tensor-parallel size is unknown", nameOr(ws.Component))
			case s.Backend != "":
				// No flag: the engine's default is 1, but a replica holding more
				// GPUs than its pipeline × data ranks most likely shards the
				// model over them (the flag may sit in a script or file).
				per := int64(max(1, ws.PipelineParallel) * max(1, ws.DataParallel))
				ws.TensorParallel = 1
				if g := ws.GPUsPerReplica; g > per && g%per == 0 {
					ws.TensorParallel = int(g / per)
					note("parallelism: %s passes no tensor-parallel flag; %d is assumed from its %d GPUs per replica", nameOr(ws.Component), ws.TensorParallel, g)
				}
			default:
				note("parallelism: %s's tensor-parallel size is unknown", nameOr(ws.Component))
			}
		}
	}
	if p := dep.Policy; p != nil {
		source := "node label " + p.LabelKey
		if p.ClusterTopologyName != "" {
			source = "the Grove topology " + p.ClusterTopologyName
			if p.NodeLabelKey != "" {
				source += " (node label " + p.NodeLabelKey + ")"
			}
		}
		note("topology: the kvTransferPolicy (domain %s from %s, enforcement %s) has no DynoSim counterpart: DynoSim reaches every decode worker from every prefill worker, as under preferred enforcement with no cost across domains", p.Domain, source, p.Enforcement)
	}
	for _, c := range dep.Components {
		if strings.EqualFold(c.Type, "planner") {
			note("planner: the deployment runs a planner (%s); the export disables DynoSim's planner", c.Name)
		}
	}
	return s, notes
}

// workerSet builds one worker set from its pods.
func workerSet(comp string, pods []*model.Worker) (WorkerSet, string, string, int, []string) {
	var notes []string
	ws := WorkerSet{Component: comp}
	replicas := map[string][]*model.Worker{}
	var replicaOrder []string
	for _, w := range pods {
		r := w.Replica
		if r == "" {
			r = w.Pod
		}
		if _, ok := replicas[r]; !ok {
			replicaOrder = append(replicaOrder, r)
		}
		replicas[r] = append(replicas[r], w)
	}
	sort.Strings(replicaOrder)
	ws.Replicas = len(replicaOrder)
	var leader *model.Worker
	gpus := map[int64]bool{}
	domainsSeen := map[string]bool{}
	for _, r := range replicaOrder {
		sum := int64(0)
		for _, w := range replicas[r] {
			sum += w.GPUs
			domainsSeen[w.Domain.Effective()] = true
			if leader == nil && (w.Leader || len(replicas[r]) == 1) {
				leader = w
			}
		}
		gpus[sum] = true
	}
	if leader == nil {
		leader = replicas[replicaOrder[0]][0]
	}
	ws.GPUsPerReplica = firstKey64(gpus)
	if len(gpus) > 1 {
		notes = append(notes, fmt.Sprintf("GPUs: %s's replicas request different GPU counts; %d per replica is used", nameOr(comp), ws.GPUsPerReplica))
	}
	for d := range domainsSeen {
		if d != "" {
			ws.Domains = append(ws.Domains, d)
		}
	}
	sort.Strings(ws.Domains)
	if len(domainsSeen) == 1 {
		for d := range domainsSeen {
			ws.Domain = d
		}
	}
	ws.Args = cmdline.CommandWords(leader.Argv, leader.Env)
	backend := backendOf(ws.Args)
	if backend == "" {
		backend = backendFromName(comp)
		if backend != "" {
			notes = append(notes, fmt.Sprintf("backend: %s's command line names no dynamo.vllm/sglang/trtllm module; %s is taken from its component name", nameOr(comp), backend))
		}
	}
	model, _ := flag(ws.Args, flagsModel...)
	blockSize := 0
	if len(leader.Instances) > 0 {
		in := leader.Instances[0]
		rt := in.Runtime
		if rt.TotalKvBlocks != nil {
			ws.KvCapacityBlocks = *rt.TotalKvBlocks
		}
		if rt.MaxNumSeqs != nil {
			ws.MaxNumSeqs = *rt.MaxNumSeqs
		}
		if rt.MaxNumBatchedTokens != nil {
			ws.MaxNumBatchedTokens = *rt.MaxNumBatchedTokens
		}
		if dp := rt.DpSize(); dp > 0 && rt.DataParallelSizeSet {
			ws.DataParallel = int(dp)
		}
		blockSize = in.BlockSize
		if model == "" {
			model = in.Model
		}
	}
	if model == "" {
		model, _ = flag(ws.Args, "--served-model-name")
	}
	if blockSize == 0 && backend != "" {
		blockSize = intFlag(ws.Args, flagsBlockSize[backend]...)
	}
	if backend != "" {
		fillFromArgs(&ws, backend)
	}
	return ws, backend, model, blockSize, notes
}

// fillFromArgs fills the parallelism fields a worker set's command line
// states (fields already set are kept).
func fillFromArgs(ws *WorkerSet, backend string) {
	if ws.TensorParallel == 0 {
		ws.TensorParallel = intFlag(ws.Args, flagsTP[backend]...)
		if backend == "sglang" && hasFlag(ws.Args, "--enable-dp-attention") {
			dp := max(ws.DataParallel, intFlag(ws.Args, flagsDP[backend]...))
			if dp > 1 && ws.TensorParallel >= dp && ws.TensorParallel%dp == 0 {
				ws.TensorParallel /= dp
			}
		}
	}
	if ws.DataParallel == 0 {
		ws.DataParallel = intFlag(ws.Args, flagsDP[backend]...)
	}
	if ws.PipelineParallel == 0 {
		ws.PipelineParallel = intFlag(ws.Args, flagsPP[backend]...)
	}
}

// backendOf finds the Dynamo engine module on a command line.
func backendOf(words []string) string {
	for _, w := range words {
		switch strings.TrimSuffix(w, ".main") {
		case "dynamo.vllm":
			return "vllm"
		case "dynamo.sglang":
			return "sglang"
		case "dynamo.trtllm":
			return "trtllm"
		}
	}
	return ""
}

// backendFromName reads the backend from a component name such as upstream's
// VllmDecodeWorker, SGLangPrefillWorker or TRTLLMWorker.
func backendFromName(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "vllm"):
		return "vllm"
	case strings.Contains(n, "sglang"):
		return "sglang"
	case strings.Contains(n, "trtllm"), strings.Contains(n, "tensorrt"):
		return "trtllm"
	}
	return ""
}

// pick returns the one value, or the first (sorted) with a note when the
// worker sets disagree, or "" with a note when none is known.
func pick(vals []string, what string, notes *[]string) string {
	switch len(vals) {
	case 0:
		*notes = append(*notes, what+": unknown (no worker states it)")
		return ""
	case 1:
		return vals[0]
	}
	*notes = append(*notes, fmt.Sprintf("%s: the worker sets disagree (%s); %s is used", what, strings.Join(vals, ", "), vals[0]))
	return vals[0]
}

func keys[K comparable](m map[K]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, fmt.Sprint(k))
	}
	sort.Strings(out)
	return out
}

func firstKey64(m map[int64]bool) int64 {
	best, ok := int64(0), false
	for k := range m {
		if !ok || k < best {
			best, ok = k, true
		}
	}
	return best
}

func atoiOr(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
		if n > 1<<24 {
			return 0
		}
	}
	return n
}
