package fileio

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Named is a path and the flag that names it, for Output's checks.
type Named struct {
	What, Path string
}

// Output is a file the command will write, checked before it does any work.
type Output struct {
	what, path string
	// target is the file that will be replaced or created: path with its
	// symbolic links followed.
	target string
	// existing is the target's stat when it exists.
	existing os.FileInfo
}

// maxLinks bounds the symbolic links followed (as the kernel's ELOOP does).
const maxLinks = 40

// NewOutput checks that path (named by the flag what) can be written, before
// the command does any work:
//
//   - it is not "-" and not under /dev or /proc (the report goes to stdout; a
//     device or a descriptor is not a file to replace);
//   - with its symbolic links followed, it names a regular file or nothing
//     yet, in an existing directory that takes a new file;
//   - it is not the same file as any of others (the command's inputs and
//     its other outputs), compared by identity (device and inode) when both
//     exist and by cleaned path otherwise.
//
// The error names the flag and the path and says what to do.
func NewOutput(path, what string, others ...Named) (*Output, error) {
	o := &Output{what: what, path: path}
	if path == "" {
		return nil, o.errorf("give a file name")
	}
	if path == "-" {
		return nil, o.errorf("writes a file; the report goes to standard output, so give a file name")
	}
	target, err := resolve(path)
	if err != nil {
		return nil, o.errorf("%v", err)
	}
	o.target = target
	for _, p := range []string{path, target} {
		if abs, err := filepath.Abs(p); err == nil && (under(abs, "/dev") || under(abs, "/proc")) {
			return nil, o.errorf("%s is not a file kubectl-dynamo replaces (devices and descriptors are refused): give the path of a file", p)
		}
	}
	st, err := os.Stat(target)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return nil, o.errorf("%s is %s: kubectl-dynamo replaces only a regular file, or creates a new one; give another path", describePath(path, target), Describe(st.Mode()))
	case err == nil:
		o.existing = st
	case !errors.Is(err, fs.ErrNotExist):
		return nil, o.errorf("%v", unwrapPath(err))
	}
	for _, n := range others {
		if n.Path == "" || IsStdin(n.Path) {
			continue
		}
		if o.same(n.Path) {
			return nil, o.errorf("%s is the file %s names too: writing it would replace that file; give the output another name", path, n.What)
		}
	}
	dir := filepath.Dir(target)
	if dst, err := os.Stat(dir); err != nil {
		return nil, o.errorf("the directory %s: %v; create it first or give another path", dir, unwrapPath(err))
	} else if !dst.IsDir() {
		return nil, o.errorf("%s is not a directory", dir)
	}
	// Prove now that the directory takes a new file, not after the run.
	f, tmp, err := createTemp(dir, 0o600)
	if err != nil {
		return nil, o.errorf("cannot create a file in %s: %v", dir, unwrapPath(err))
	}
	_ = f.Close()
	_ = os.Remove(tmp)
	return o, nil
}

func describePath(path, target string) string {
	if path == target {
		return path
	}
	return path + " (a link to " + target + ")"
}

func under(abs, dir string) bool {
	return abs == dir || strings.HasPrefix(abs, dir+string(filepath.Separator))
}

// same reports whether other names the output's file.
func (o *Output) same(other string) bool {
	if o.existing != nil {
		if st, err := os.Stat(other); err == nil && os.SameFile(o.existing, st) {
			return true
		}
	}
	a, err1 := filepath.Abs(o.target)
	t, err := resolve(other)
	if err != nil {
		t = other
	}
	b, err2 := filepath.Abs(t)
	return err1 == nil && err2 == nil && a == b
}

// resolve follows path's symbolic links, including a last one that points to
// a file that does not exist yet (written through, it is created).
func resolve(path string) (string, error) {
	p := path
	for range maxLinks {
		st, err := os.Lstat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return p, nil
			}
			return "", unwrapPath(err)
		}
		if st.Mode()&os.ModeSymlink == 0 {
			return p, nil
		}
		dst, err := os.Readlink(p)
		if err != nil {
			return "", unwrapPath(err)
		}
		if !filepath.IsAbs(dst) {
			dst = filepath.Join(filepath.Dir(p), dst)
		}
		p = dst
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// Path is the path as the user gave it.
func (o *Output) Path() string { return o.path }

func (o *Output) errorf(format string, a ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{o.what}, a...)...)
}

// Write writes the file: write fills a temporary file beside the target, which
// then replaces the target by a rename (a failure leaves the target as it
// was, and no temporary file). A new file's mode is 0666 less the umask; a
// replaced file keeps its mode and, where the process may, its owner and
// group. The target is checked again just before the rename.
func (o *Output) Write(write func(io.Writer) error) (err error) {
	dir := filepath.Dir(o.target)
	f, tmp, err := createTemp(dir, 0o666)
	if err != nil {
		return o.errorf("%v", unwrapPath(err))
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if o.existing != nil {
		keepOwner(f, o.existing) // before the mode: a change of owner clears set-id bits
		if err := f.Chmod(o.existing.Mode().Perm()); err != nil {
			return o.errorf("%v", unwrapPath(err))
		}
	}
	w := bufio.NewWriterSize(f, 64<<10)
	if err := write(w); err != nil {
		return o.errorf("%v", unwrapPath(err))
	}
	if err := w.Flush(); err != nil {
		return o.errorf("%v", unwrapPath(err))
	}
	if err := f.Sync(); err != nil {
		return o.errorf("%v", unwrapPath(err))
	}
	if err := f.Close(); err != nil {
		return o.errorf("%v", unwrapPath(err))
	}
	if st, err := os.Lstat(o.target); err == nil && !st.Mode().IsRegular() {
		return o.errorf("%s became %s while the command ran; it was not replaced", o.target, Describe(st.Mode()))
	}
	if err := os.Rename(tmp, o.target); err != nil {
		return o.errorf("%v", unwrapPath(err))
	}
	return nil
}

// createTemp creates a new file with a random name in dir, exclusively, with
// perm less the umask (the kernel applies it).
func createTemp(dir string, perm os.FileMode) (*os.File, string, error) {
	for range 100 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		name := filepath.Join(dir, ".kubectl-dynamo-"+hex.EncodeToString(b[:])+".tmp")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", fmt.Errorf("cannot find an unused temporary name in %s", dir)
}

// unwrapPath drops the path from a file-system error: the messages name the
// user's path themselves, never the temporary file's.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
