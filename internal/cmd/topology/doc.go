// Package topology implements `kubectl dynamo topology`: per deployment, prefill
// and decode capacity in every value of the KV-transfer domain, and the findings
// that would make `required` policy fail, with CI-friendly exit codes.
package topology
