package behavior

import (
	"errors"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// RegistrationErrors returns the violations for which Dynamo's validator
// rejects a worker's published runtime config (routecore.ValidateTopology),
// except kv_transfer_domain missing from topology_domains, which topology
// reports as TransferDomainNotPublished and the router fails per request. It is
// the one worker validator: topology's InvalidWorkerTopology finding and
// explain-route's exclusion of unregistrable workers both use it, and the
// reading counts a worker whose every instance it rejects as not live.
func RegistrationErrors(rc routecore.RuntimeConfig) []string {
	err := routecore.ValidateTopology(rc)
	if err == nil {
		return nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var out []string
	for _, e := range errs {
		var tv *routecore.TopologyValidationError
		if errors.As(e, &tv) && tv.Code == "missing_kv_transfer_domain" && tv.Field == "kv_transfer_domain" {
			continue
		}
		out = append(out, e.Error())
	}
	return out
}
