package build

import (
	"path"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/cmdline"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// Role recovery: which signal says whether a worker prefills or decodes.
//
// Upstream spreads the role over several places, and a deployment may carry any
// subset of them: the model card a worker publishes (worker_type), the operator's
// pod labels (nvidia.com/dynamo-component-type prefill|decode, or type worker plus
// nvidia.com/dynamo-sub-component-type), the DGD's declared types, the engine's
// command line (--disaggregation-mode prefill|decode|context|generation,
// --is-prefill-worker, --is-decode-worker), possibly nested in the shell wrappers
// the operator adds for multinode replicas (TRT-LLM's leader runs
// `sh -c "… mpirun … bash -c 'trtllm-llmapi-launch python3 -m dynamo.trtllm …'"`),
// and DYN_DISAGGREGATION_MODE in the environment. A multinode replica takes its
// leader's role: the other pods of a TRT-LLM or vLLM-on-Ray replica run only sshd
// or a Ray agent and carry no role of their own.

// bldRoleFlags are the engine flags that name a role.
var bldRoleFlags = []string{"--disaggregation-mode", "--disaggregation_mode", "--is-prefill-worker", "--is-decode-worker"}

// bldRoleWord maps a role word to a Role ("" when it is not one).
func bldRoleWord(s string) model.Role {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "prefill":
		return model.RolePrefill
	case "decode":
		return model.RoleDecode
	case "encode":
		return model.RoleEncode
	case "aggregated", "agg", "prefill|decode", "decode|prefill", "prefill_and_decode", "null", "none":
		return model.RoleAggregated
	}
	return ""
}

// bldEngineRoleWord maps an engine's --disaggregation-mode value to a Role: the
// role words, and TRT-LLM's context (prefill) and generation (decode).
func bldEngineRoleWord(s string) model.Role {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "context", "context_only":
		return model.RolePrefill
	case "generation", "generation_only":
		return model.RoleDecode
	}
	return bldRoleWord(s)
}

// assignRoles decides every worker's role. The pods of a multinode replica share
// one role: the leader's, else the first pod's that has a signal; a pod whose own
// signals do not say the same names the pod its role came from. Replicas without any signal fall back on
// the deployment: decode when it has prefill workers, else aggregated.
func (bd *bldBuilder) assignRoles(d *bldDeployment) {
	var keys []string
	groups := map[string][]*bldWorker{}
	for _, w := range d.workers {
		if _, ok := groups[w.out.Replica]; !ok {
			keys = append(keys, w.out.Replica)
		}
		groups[w.out.Replica] = append(groups[w.out.Replica], w)
	}
	hasPrefill := false
	single := bldSingleWorkerComponent(d)
	var undecided [][]*bldWorker
	for _, k := range keys {
		ws := bldLeaderFirst(groups[k])
		// Each pod's own signal, decided once (deciding may add notes).
		own := make([]struct {
			role   model.Role
			signal string
		}, len(ws))
		src := -1
		for i, w := range ws {
			own[i].role, own[i].signal = bd.role(d, w)
			if src < 0 && own[i].role != "" {
				src = i
			}
		}
		if src >= 0 && own[src].signal == model.SignalComponentName && single && model.IsWorkerType(ws[src].ctype) {
			src = -1 // the name alone does not make the only worker component prefill or decode
		}
		if src < 0 {
			undecided = append(undecided, ws)
			continue
		}
		role, signal := own[src].role, own[src].signal
		for i, w := range ws {
			w.out.Role, w.out.RoleSignal = role, signal
			if own[i].role == role {
				w.out.RoleSignal = own[i].signal
				continue
			}
			who := "leader"
			if !ws[src].out.Leader {
				who = "replica pod"
			}
			w.out.RoleSignal = who + " " + ws[src].out.Pod + ": " + signal
		}
		hasPrefill = hasPrefill || role == model.RolePrefill
	}
	for _, ws := range undecided {
		role, signal := model.RoleUnknown, model.SignalNone
		switch {
		case !model.IsWorkerType(ws[0].ctype):
		case single:
			role, signal = model.RoleAggregated, model.SignalOnlyWorkerComponent
		case hasPrefill:
			role, signal = model.RoleDecode, model.SignalFallbackDecode
		default:
			role, signal = model.RoleAggregated, model.SignalFallbackAggregated
		}
		for _, w := range ws {
			w.out.Role, w.out.RoleSignal = role, signal
		}
	}
}

// bldLeaderFirst returns the replica's pods with its leader first.
func bldLeaderFirst(ws []*bldWorker) []*bldWorker {
	out := make([]*bldWorker, 0, len(ws))
	for _, w := range ws {
		if w.out.Leader {
			out = append(out, w)
		}
	}
	for _, w := range ws {
		if !w.out.Leader {
			out = append(out, w)
		}
	}
	return out
}

// role decides a worker's role from the strongest signal present, or "" when
// only the deployment-wide fallback can decide.
func (bd *bldBuilder) role(d *bldDeployment, w *bldWorker) (model.Role, string) {
	for _, in := range w.out.Instances {
		if in.WorkerType == "" {
			continue
		}
		if r := bldRoleWord(in.WorkerType); r != "" {
			return r, "card worker_type"
		}
		bd.note(w.src(d), d.out.Key(), "instance %s of %s publishes an unknown worker_type %q; its role is taken from other signals", in.ID, bldWorkerRef(w), in.WorkerType)
	}
	for _, bi := range w.insts {
		if bi.legacyPrefill != "" {
			return model.RolePrefill, bi.legacyPrefill
		}
	}
	var labels map[string]string
	if w.p != nil {
		labels = w.p.pod.Labels
	}
	if r := bldRoleWord(labels[bldLabelSubComponentType]); r == model.RolePrefill || r == model.RoleDecode || r == model.RoleEncode {
		return r, "label " + bldLabelSubComponentType
	}
	if w.comp != nil {
		if r := bldRoleWord(w.comp.c.SubComponentType); r == model.RolePrefill || r == model.RoleDecode || r == model.RoleEncode {
			return r, "DGD subComponentType"
		}
	}
	if r := bldRoleWord(labels[bldLabelComponentType]); r == model.RolePrefill || r == model.RoleDecode {
		return r, "label " + bldLabelComponentType
	}
	if w.comp != nil && labels[bldLabelComponentType] == "" {
		if r := bldRoleWord(w.comp.c.Type); r == model.RolePrefill || r == model.RoleDecode {
			return r, "DGD component type"
		}
	}
	if r, flag := bldRoleFromArgs(w.argv, w.env); r != "" {
		return r, "arg " + flag
	}
	if w.env != nil {
		if v, ok := w.env("DYN_DISAGGREGATION_MODE"); ok {
			if r := bldEngineRoleWord(v); r != "" {
				return r, "env DYN_DISAGGREGATION_MODE"
			}
		}
	}
	name := strings.ToLower(w.out.Component)
	switch {
	case strings.Contains(name, "prefill"):
		return model.RolePrefill, model.SignalComponentName
	case strings.Contains(name, "decode"):
		return model.RoleDecode, model.SignalComponentName
	}
	return "", ""
}

// bldSingleWorkerComponent reports whether the deployment has exactly one
// worker component that is not an encoder: among the DGD's components of
// type worker, prefill or decode, and the components its worker pods belong to.
func bldSingleWorkerComponent(d *bldDeployment) bool {
	names := map[string]bool{}
	for _, c := range d.comps {
		if model.IsWorkerType(strings.ToLower(c.c.Type)) && bldRoleWord(c.c.SubComponentType) != model.RoleEncode {
			names[strings.ToLower(c.c.Name)] = true
		}
	}
	for _, w := range d.workers {
		if w.out.Component != "" && model.IsWorkerType(w.ctype) && w.out.Role != model.RoleEncode {
			names[strings.ToLower(w.out.Component)] = true
		}
	}
	return len(names) == 1
}

// bldRoleFromArgs reads --disaggregation-mode (vLLM, SGLang, TRT-LLM) and the
// older --is-prefill-worker / --is-decode-worker flags from a command line. A
// word that is itself a command line holding one of these flags (the script of
// a nested `bash -c`, as TRT-LLM's multinode leader runs under mpirun) is split
// and read too; the flag is then named with where it was found, e.g.
// "--disaggregation-mode (in mpirun › bash -c)".
func bldRoleFromArgs(argv []string, env func(string) (string, bool)) (model.Role, string) {
	return bldRoleFromArgsIn(argv, env, "", 0)
}

func bldRoleFromArgsIn(argv []string, env func(string) (string, bool), where string, depth int) (model.Role, string) {
	flag := func(f string) string {
		if where == "" {
			return f
		}
		return f + " (in " + where + ")"
	}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		name, val, hasVal := strings.Cut(a, "=")
		switch name {
		case "--disaggregation-mode", "--disaggregation_mode":
			if !hasVal {
				if i+1 >= len(argv) {
					continue
				}
				val = argv[i+1]
			}
			if r := bldEngineRoleWord(val); r != "" {
				return r, flag("--disaggregation-mode")
			}
		case "--is-prefill-worker":
			if !hasVal || bldTruthy(val) {
				return model.RolePrefill, flag("--is-prefill-worker")
			}
		case "--is-decode-worker":
			if !hasVal || bldTruthy(val) {
				return model.RoleDecode, flag("--is-decode-worker")
			}
		}
		if depth >= cmdline.MaxNesting || !strings.ContainsAny(a, " \t\n") || !bldHasRoleFlag(a) {
			continue
		}
		inner := cmdline.Words(a, env)
		if r, f := bldRoleFromArgsIn(inner, env, bldNestedWhere(where, argv[:i]), depth+1); r != "" {
			return r, f
		}
	}
	return "", ""
}

// bldHasRoleFlag reports whether s mentions one of the role flags.
func bldHasRoleFlag(s string) bool {
	for _, f := range bldRoleFlags {
		if strings.Contains(s, f) {
			return true
		}
	}
	return false
}

// bldNestedWhere names the command a nested command line belongs to: "bash -c"
// when the words before it end in a shell and its -c flag, with "mpirun › " in
// front when mpirun launches that shell; else "a nested command line".
func bldNestedWhere(outer string, before []string) string {
	here := "a nested command line"
	if n := len(before); n >= 2 && strings.HasPrefix(before[n-1], "-") && strings.Contains(before[n-1], "c") && cmdline.Shells[path.Base(before[n-2])] {
		here = path.Base(before[n-2]) + " " + before[n-1]
		for _, b := range before[:n-2] {
			if path.Base(b) == "mpirun" || path.Base(b) == "mpiexec" {
				here = path.Base(b) + " › " + here
				break
			}
		}
	}
	if outer == "" {
		return here
	}
	return outer + " › " + here
}

func bldTruthy(s string) bool {
	b, err := strconv.ParseBool(s)
	return err == nil && b
}
