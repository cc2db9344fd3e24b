//go:build !linux

package kubeenv

import "syscall"

// sysProcAttr puts the child in its own process group so Stop can kill the
// whole group. Without Linux's Pdeathsig, a test binary that is killed with
// SIGKILL leaves the children behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
