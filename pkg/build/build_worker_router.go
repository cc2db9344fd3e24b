package build

import (
	"fmt"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/cmdline"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// workerRouterArgs reads the router settings each worker component passes on
// its own command line or env, as Dynamo's workers parse them
// (parse_worker_router_config in components/src/dynamo/common/configuration/
// groups/router_args.py, called by the vLLM, SGLang and TRT-LLM entrypoints):
// --router-mode (or DYN_ROUTER_MODE, its env) with no default, so that a
// worker that sets no mode advertises nothing; the KV-router flags and their
// env are carried only in kv mode (build_router_config). One component's
// settings come from its first worker pod that has a command line (leaders
// first), else from the DGD's component spec. Whether a release publishes them
// as the card's router_config is pkg/behavior's question, not this one's.
func (bd *bldBuilder) workerRouterArgs(d *bldDeployment) {
	type source struct {
		words  []string
		lookup func(string) (string, bool)
		from   string
	}
	byComp := map[string]source{}
	pick := func(leaders bool) {
		for _, w := range d.workers {
			if w.p == nil || w.p.main == nil || w.out.Component == "" || w.out.Leader != leaders {
				continue
			}
			if _, seen := byComp[w.out.Component]; seen {
				continue
			}
			byComp[w.out.Component] = source{words: cmdline.CommandWords(w.argv, nil), lookup: w.env, from: "pod " + w.out.Pod}
		}
	}
	pick(true)
	pick(false)
	dgdEnv, _ := bldEnvMap(d.env)
	for name, c := range d.comps {
		if _, seen := byComp[name]; seen || !model.IsWorkerType(strings.ToLower(c.c.Type)) {
			continue
		}
		compEnv, _ := bldEnvMap(c.env)
		lookup := bldLookup(compEnv, dgdEnv)
		byComp[name] = source{words: cmdline.CommandWords(cmdline.Argv(c.command, c.args, lookup), nil), lookup: lookup, from: "component " + name + " spec"}
	}
	r := &d.out.Router
	for _, comp := range bldSortedKeys(byComp) {
		s := byComp[comp]
		var how string
		switch {
		case bldHasFlag(s.words, "--router-mode"):
			how = " args"
		case bldHasEnv(s.lookup, "DYN_ROUTER_MODE"):
			how = " env DYN_ROUTER_MODE"
		default:
			continue
		}
		set, err := routecore.ParseFrontendSettings(s.words, s.lookup)
		if err != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("router flags of worker component %s (%s) could not be parsed: %v", comp, s.from, err))
			continue
		}
		o := model.RouterOverride{Component: comp, Mode: set.RouterMode, Source: s.from + how}
		if strings.EqualFold(set.RouterMode, string(routecore.RouterModeKV)) {
			o.Config = set.Config
		}
		r.WorkerArgs = append(r.WorkerArgs, o)
	}
}
