package inspect

import "strings"

// The engine facts the model keeps for routing-health checks (pkg/inspect/health):
// each worker's and frontend's command line and DYN_* environment, read from the
// same pod and DGD fields that role detection and the router configuration read.

// bldDynEnv returns the DYN_* variables a worker pod sees: the pod's main
// container first, then its component's and the DGD's env (values from Secrets,
// ConfigMaps or field references are unknown and left out).
func bldDynEnv(d *bldDeployment, p *bldPod, comp *bldComponent) map[string]string {
	var layers []map[string]string
	if p != nil && p.main != nil {
		m, _ := bldEnvMap(p.main.Env)
		layers = append(layers, m)
	}
	if comp != nil {
		m, _ := bldEnvMap(comp.env)
		layers = append(layers, m)
	}
	m, _ := bldEnvMap(d.env)
	layers = append(layers, m)
	out := map[string]string{}
	for i := len(layers) - 1; i >= 0; i-- {
		for k, v := range layers[i] {
			if strings.HasPrefix(k, "DYN_") {
				out[k] = v
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// bldFrontendEngine returns a frontend pod's command line and DYN_* environment,
// resolved as routerConfig resolves them (pod env, then its component's, then
// the DGD's).
func bldFrontendEngine(d *bldDeployment, p *bldPod) ([]string, map[string]string) {
	if p.main == nil {
		return nil, nil
	}
	comp := d.component(p.pod.Labels[bldLabelComponent])
	env := bldDynEnv(d, p, comp)
	podEnv, _ := bldEnvMap(p.main.Env)
	var compEnv map[string]string
	if comp != nil {
		compEnv, _ = bldEnvMap(comp.env)
	}
	dgdEnv, _ := bldEnvMap(d.env)
	return bldArgv(p.main.Command, p.main.Args, bldLookup(podEnv, compEnv, dgdEnv)), env
}

// CommandWords returns argv with every word that is itself a command line (the
// script of a nested `bash -c`, as mpirun runs TRT-LLM's multinode leader) split
// into its words in place, $VAR expanded from env, up to the nesting depth role
// detection opens. The result is a fresh slice.
func CommandWords(argv []string, env map[string]string) []string {
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	return bldOpenNested(argv, lookup, 0)
}

func bldOpenNested(argv []string, env func(string) (string, bool), depth int) []string {
	out := make([]string, 0, len(argv))
	for _, a := range argv {
		if depth < bldMaxShellNesting && strings.ContainsAny(a, " \t\n") && strings.Contains(a, "--") && !bldLooksLikeJSON(a) {
			out = append(out, bldOpenNested(bldShellWords(a, env), env, depth+1)...)
			continue
		}
		out = append(out, a)
	}
	return out
}

// bldLooksLikeJSON reports whether a word is a JSON value (a flag's argument
// such as --kv-events-config '{"publisher": "zmq"}'), which is kept whole.
func bldLooksLikeJSON(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")
}
