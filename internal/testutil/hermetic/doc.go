// Package hermetic gives each test binary of the module the same environment
// whoever runs it: a fresh empty HOME, no XDG_*/HF_* cache locations, no
// KUBECONFIG, no colour or terminal-size variables, TERM=dumb, TZ=UTC, and no
// CI (whether provisioned data is required is captured first; see
// RequireData). Every package with tests calls it from its TestMain, which
// hack/verify-code-patterns.sh enforces; `make test` proves it by running the
// printing packages a second time under a hostile environment
// (hack/hostile-env.sh).
package hermetic
