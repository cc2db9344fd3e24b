package build

import (
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/cmdline"
)

// The engine facts the model keeps for routing-health checks (pkg/analysis/health):
// each worker's and frontend's command line and DYN_* environment, read from the
// same pod and DGD fields that role detection and the router configuration read.

// bldDynEnv returns the DYN_* variables a worker pod sees: the pod's main
// container first, then its component's and the DGD's env (values from Secrets,
// ConfigMaps or field references are unknown and left out).
func bldDynEnv(d *bldDeployment, p *bldPod, comp *bldComponent) map[string]string {
	var layers []map[string]string
	if p != nil && p.main != nil {
		m, _ := p.mainEnv()
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
	podEnv, _ := p.mainEnv()
	var compEnv map[string]string
	if comp != nil {
		compEnv, _ = bldEnvMap(comp.env)
	}
	dgdEnv, _ := bldEnvMap(d.env)
	return cmdline.Argv(p.main.Command, p.main.Args, bldLookup(podEnv, compEnv, dgdEnv)), env
}
