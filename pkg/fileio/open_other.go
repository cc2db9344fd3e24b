//go:build !unix

package fileio

import "os"

func openRegular(path string) (*os.File, error) { return os.Open(path) }

func openDescriptor(path string) (*os.File, error) { return os.Open(path) }
