// Package e2e runs the built kubectl-dynamo binary through a real kubectl, as users
// do: kubectl discovers it as a plugin on PATH, dispatches `kubectl dynamo …` to it,
// and completes its arguments through kubectl_complete-dynamo.
package e2e
