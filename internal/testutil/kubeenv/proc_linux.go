package kubeenv

import "syscall"

// sysProcAttr puts the child in its own process group (so Stop can kill the
// whole group, and a terminal's Ctrl-C does not reach it before our handler
// runs) and asks the kernel to SIGKILL it when the test process dies, which
// covers the cases where no Go code runs: SIGKILL, `go test -timeout` panics,
// crashes. (Pdeathsig fires when the creating OS thread exits; the Go runtime
// only exits threads that a goroutine left locked, which this package never does.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
