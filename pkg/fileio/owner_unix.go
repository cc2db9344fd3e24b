//go:build unix

package fileio

import (
	"os"
	"syscall"
)

// keepOwner gives f the owner and group of the file it replaces, where the
// process may (root may; others keep their own, which is all they can).
func keepOwner(f *os.File, old os.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}
