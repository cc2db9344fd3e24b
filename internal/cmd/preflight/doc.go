// Package preflight implements `kubectl dynamo preflight`: before a
// DynamoGraphDeployment manifest is applied, validate it and predict where its
// replicas can land and which transfer-domain values would end up with prefill
// but no decode (pkg/preflight), against the live cluster's nodes (GET/LIST
// only), a capture file's nodes, or no cluster at all.
package preflight
