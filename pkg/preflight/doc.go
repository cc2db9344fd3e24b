// Package preflight predicts, before a DynamoGraphDeployment is applied, where
// its components' replicas can land and which values of its KV-transfer domain
// would end up with prefill but no decode capacity.
//
// It reads the same model as topology (pkg/model): the DGD is turned into a Snapshot by
// build.Build (its kvTransferPolicy, Grove topology object and router mode),
// and each component is rendered once as the pod the operator would create, so
// that pkg/build decides its role from the same signals topology uses (component
// type and sub-component type labels, engine args, component name). What is new
// here is the scheduling side: nodeSelector, required node affinity, tolerations
// against taints, nvidia.com/gpu requests against allocatable minus what running
// pods already request, and the DGD's topologyConstraint pack domains.
//
// Findings share their ids, severities and meaning with topology where they mean
// the same thing (PrefillDomainWithoutDecode, DecodeDomainWithoutPrefill,
// TopologyObjectMissing, RouterNotKV, WorkerRoleUnknown) and add their own for
// what only exists before apply (InvalidManifest, InvalidPolicy,
// DomainLabelMissing, ReplicasUnschedulable, MultinodeReplicaExceedsDomain).
// Each carries a certainty: certain (any placement the scheduler may choose has
// the problem) or possible (some placement has it).
//
// Nothing here talks to a cluster: the caller supplies the nodes, pods and Grove
// topology objects (read live with GET/LIST only, or from a capture file).
package preflight
