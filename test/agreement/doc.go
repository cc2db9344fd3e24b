// Package agreement holds the test that the commands read Dynamo one way:
// over every capture the project ships (examples/, test/fixtures), each router
// mode and transfer-policy what-if, and both sides of the readiness rule's
// release boundary, topology's findings, explain-route's all-prefill matrix,
// simulate's per-domain failures, preflight and the dashboard predict the same
// outcome per domain, the same readiness and the same registration. How they
// may legitimately differ is pkg/behavior's to say, not theirs.
package agreement
