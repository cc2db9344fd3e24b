package fileio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"runtime"
	"sync"
	"sync/atomic"
)

// Input is one input the user named, opened once.
type Input struct {
	name, what string
	limit      int64
	// A regular file: kept open, read from the start with ReadAt by every
	// pass; info is its stat, for SameFile.
	f    *os.File
	info os.FileInfo
	// A stream (standard input, a descriptor the shell passed): read once,
	// in chunks (no copy as it grows).
	chunks [][]byte
	n      int64
	// whole caches Bytes.
	whole []byte
}

// descriptorPath matches the paths that name one of this process's own open
// descriptors, as process substitution <(…) passes them.
var descriptorPath = regexp.MustCompile(`^(/dev/fd/|/proc/self/fd/)([0-9]+)$`)

// IsStdin reports whether path reads the process's standard input: "-",
// /dev/stdin, /dev/fd/0 or /proc/self/fd/0.
func IsStdin(path string) bool {
	switch path {
	case "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0":
		return true
	}
	return false
}

// Open opens the input path names for the flag what ("--trace"), reading at
// most limit bytes: "-" is stdin (read once, here); a descriptor path
// (/dev/fd/N, /proc/self/fd/N, /dev/stdin) that is not a regular file is
// read once, here, the same way; anything else must be a regular file no
// larger than limit, and is opened without being read. Errors start with
// "read WHAT:" and say what to give instead.
func Open(stdin io.Reader, path, what string, limit int64) (*Input, error) {
	return OpenLimits(stdin, path, what, limit, limit)
}

// OpenLimits is Open with one limit for a regular file, which is never held
// in memory by NewReader (a trace replayed by streaming it), and another for
// a stream, which is.
func OpenLimits(stdin io.Reader, path, what string, fileLimit, streamLimit int64) (*Input, error) {
	in := &Input{name: path, what: what, limit: streamLimit}
	if path == "-" {
		if stdin == nil {
			stdin = eofReader{}
		}
		if err := in.readStream(stdin); err != nil {
			return nil, err
		}
		return in, nil
	}
	if m := descriptorPath.FindStringSubmatch(path); m != nil || path == "/dev/stdin" {
		f, err := openDescriptor(path)
		if err != nil {
			return nil, in.errorf("%w", err)
		}
		st, err := f.Stat()
		if err == nil && st.Mode().IsRegular() {
			in.f, in.info, in.limit = f, st, fileLimit
			if err := in.checkSize(st); err != nil {
				_ = f.Close()
				return nil, err
			}
			return in, nil
		}
		defer f.Close()
		if err == nil && st.IsDir() {
			return nil, in.errorf("%s is a directory, not a file", path)
		}
		if err := in.readStream(f); err != nil {
			return nil, err
		}
		return in, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Op = "open" // what the user asked for
		}
		return nil, in.errorf("%w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, in.notRegular(st.Mode())
	}
	in.limit = fileLimit
	if err := in.checkSize(st); err != nil {
		return nil, err
	}
	f, err := openRegular(path)
	if err != nil {
		return nil, in.errorf("%w", err)
	}
	// The path may have changed between the two looks: read only the file
	// that was checked.
	fst, err := f.Stat()
	if err != nil || !fst.Mode().IsRegular() || !os.SameFile(st, fst) {
		_ = f.Close()
		return nil, in.errorf("%s changed while it was opened; run the command again", path)
	}
	in.f, in.info = f, fst
	return in, nil
}

// ReadFile opens path with Open and returns its whole content.
func ReadFile(stdin io.Reader, path, what string, limit int64) ([]byte, error) {
	in, err := Open(stdin, path, what, limit)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	return in.Bytes()
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

func (in *Input) errorf(format string, a ...any) error {
	return fmt.Errorf("read %s: "+format, append([]any{in.what}, a...)...)
}

func (in *Input) display() string {
	if in.name == "-" {
		return "standard input"
	}
	return in.name
}

func (in *Input) checkSize(st os.FileInfo) error {
	if st.Size() > in.limit {
		// Refused from its size without reading any of it (reading up to the
		// limit first would allocate the limit).
		return in.errorf("%s is larger than the %d MiB limit (%d MiB)", in.name, in.limit>>20, st.Size()>>20)
	}
	return nil
}

func (in *Input) tooLarge() error {
	return in.errorf("%s is larger than the %d MiB limit", in.display(), in.limit>>20)
}

// notRegular is the error for a path that is not a regular file.
func (in *Input) notRegular(mode os.FileMode) error {
	switch {
	case mode.IsDir():
		return in.errorf("%s is a directory, not a file", in.name)
	case mode&os.ModeNamedPipe != 0:
		return in.errorf("%s is a named pipe (FIFO), not a regular file: kubectl-dynamo reads only regular files, standard input and process substitution; pipe the data in (… | kubectl dynamo … %s -) or pass <(…)", in.name, in.what)
	}
	return in.errorf("%s is %s, not a regular file: give the path of a file", in.name, Describe(mode))
}

// Describe names what a mode is, for messages ("a character device").
func Describe(mode os.FileMode) string {
	switch {
	case mode.IsRegular():
		return "a regular file"
	case mode.IsDir():
		return "a directory"
	case mode&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&os.ModeSocket != 0:
		return "a socket"
	case mode&os.ModeCharDevice != 0:
		return "a character device"
	case mode&os.ModeDevice != 0:
		return "a block device"
	case mode&os.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// chunkSize is the unit a stream is read in: no chunk is ever copied as the
// stream grows, so memory is the stream's size plus at most one chunk.
const chunkSize = 4 << 20

func (in *Input) readStream(r io.Reader) error {
	for {
		c := make([]byte, 0, chunkSize)
		for len(c) < cap(c) {
			n, err := r.Read(c[len(c):cap(c)])
			c = c[:len(c)+n]
			in.n += int64(n)
			if in.n > in.limit {
				in.chunks = nil
				return in.tooLarge()
			}
			if errors.Is(err, io.EOF) {
				if len(c) > 0 {
					in.chunks = append(in.chunks, c)
				}
				return nil
			}
			if err != nil {
				in.chunks = nil
				return in.errorf("%w", err)
			}
		}
		in.chunks = append(in.chunks, c)
	}
}

// Name is the path as the user gave it.
func (in *Input) Name() string { return in.name }

// Stream reports whether the input was read once into memory (standard
// input, a pipe the shell passed) rather than kept open as a file.
func (in *Input) Stream() bool { return in.f == nil }

// Info is the regular file's stat, nil for a stream.
func (in *Input) Info() os.FileInfo { return in.info }

// NewReader returns a reader of the whole input from its start. A regular
// file is read from its one descriptor; reading past the limit is an error.
func (in *Input) NewReader() io.Reader {
	if in.f == nil {
		rs := make([]io.Reader, len(in.chunks))
		for i, c := range in.chunks {
			rs[i] = bytes.NewReader(c)
		}
		return io.MultiReader(rs...)
	}
	return &fileReader{in: in}
}

// fileReader reads the input's file from the start with ReadAt.
type fileReader struct {
	in  *Input
	off int64
}

func (r *fileReader) Read(p []byte) (int, error) {
	n, err := r.in.f.ReadAt(p, r.off)
	r.off += int64(n)
	if r.off > r.in.limit {
		return n, r.in.tooLarge()
	}
	if n > 0 && errors.Is(err, io.EOF) {
		err = nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		err = r.in.errorf("%w", err)
	}
	return n, err
}

// Bytes returns the whole input. A regular file is read once, into a buffer
// of its size (in concurrent parts when it is large), and on past its stated
// size up to the limit (a /proc file says 0). The result is cached: the
// caller must not modify it.
func (in *Input) Bytes() ([]byte, error) {
	if in.whole != nil {
		return in.whole, nil
	}
	if in.f == nil {
		switch len(in.chunks) {
		case 0:
			in.whole = []byte{}
		case 1:
			in.whole = in.chunks[0]
		default:
			in.whole = bytes.Join(in.chunks, nil)
			in.chunks = [][]byte{in.whole}
		}
		return in.whole, nil
	}
	size := in.info.Size()
	// make, not bytes.Buffer.Grow, which writes zeros over the whole buffer
	// before reading into it (~0.1 s for a 100 MB capture).
	buf := make([]byte, 0, size+bytes.MinRead)
	if n, ok := readAtParallel(in.f, buf[:size]); ok {
		buf = buf[:n]
	}
	for {
		if len(buf) == cap(buf) { // the file is longer than its stat said
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := in.f.ReadAt(buf[len(buf):cap(buf)], int64(len(buf)))
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > in.limit {
			return nil, in.tooLarge()
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, in.errorf("%w", err)
		}
	}
	in.whole = buf
	return buf, nil
}

// Close closes the file; a stream's copy is released.
func (in *Input) Close() error {
	in.chunks, in.whole = nil, nil
	if in.f != nil {
		return in.f.Close()
	}
	return nil
}

// ParallelReadMin is the file size from which Bytes reads in concurrent parts.
const ParallelReadMin = 8 << 20

// readAtParallel fills buf with the start of f in up to four concurrent
// ReadAt calls: the kernel's copy into fresh memory is most of the cost of
// reading a large capture, and it halves on two cores. It reports ok false
// when the file is small, a read fails or the file turns out shorter than buf
// (the caller then reads it sequentially from the start).
func readAtParallel(f *os.File, buf []byte) (int, bool) {
	parts := min(4, runtime.GOMAXPROCS(0), len(buf)/(ParallelReadMin/2))
	if len(buf) < ParallelReadMin || parts < 2 {
		return 0, false
	}
	var failed atomic.Bool
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := len(buf)*p/parts, len(buf)*(p+1)/parts
		wg.Go(func() {
			if n, err := f.ReadAt(buf[lo:hi], int64(lo)); n != hi-lo || err != nil && !errors.Is(err, io.EOF) {
				failed.Store(true)
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return 0, false
	}
	return len(buf), true
}
