// Package scalefixture creates the large synthetic Dynamo deployment the scale
// harnesses (hack/scale-bench, hack/watch-scale) measure on a real API server:
// nodes over three zones, one DynamoGraphDeployment with a zone/required KV
// transfer policy, and worker pods with one DynamoWorkerMetadata each.
package scalefixture
