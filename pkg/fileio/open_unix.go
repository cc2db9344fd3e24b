//go:build unix

package fileio

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// openRegular opens a path that stat said is a regular file without
// blocking: if it was swapped for a named pipe in between, the open returns at
// once (and the caller's second stat refuses it) instead of waiting for a
// writer.
func openRegular(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// openDescriptor duplicates the descriptor a /dev/fd/N path names (the
// process's own): the pipe process substitution passed is read through the
// descriptor the shell gave, never re-opened (re-opening a pipe whose writer
// has finished waits for a new writer forever).
func openDescriptor(path string) (*os.File, error) {
	fd := 0
	if m := descriptorPath.FindStringSubmatch(path); m != nil {
		n, err := strconv.Atoi(m[2])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		fd = n
	}
	d, err := syscall.Dup(fd)
	if err != nil {
		return nil, fmt.Errorf("%s: descriptor %d is not open in this process: %w", path, fd, err)
	}
	syscall.CloseOnExec(d)
	return os.NewFile(uintptr(d), path), nil
}
