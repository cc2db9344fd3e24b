package cmdutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// AddSpecialTokensHelp is the help of --add-special-tokens, one rule for
// every command that tokenizes a prompt (hash, explain-route): on by default,
// because Dynamo's frontend tokenizes a completions prompt with the
// tokenizer's special tokens (its post-processor's BOS, …); off for text that
// already holds them, such as a rendered chat template. docs/tokenizer.md
// says the same.
const AddSpecialTokensHelp = "Add the tokenizer's special tokens (e.g. BOS), as Dynamo's frontend does for a prompt; =false for text that already holds them (a rendered chat template)"

// MaxInputFileBytes bounds every file or stdin read by the commands, so a wrong
// path (a disk image, /dev/zero) fails clearly instead of exhausting memory.
const MaxInputFileBytes = 256 << 20

// parallelReadMin is the file size from which readAtParallel splits a read.
const parallelReadMin = 8 << 20

// readAtParallel fills buf with the start of f in up to four concurrent
// ReadAt calls: the kernel's copy into fresh memory is most of the cost of
// reading a large capture, and it halves on two cores. It reports ok false
// (f's offset may then be anywhere) when the file is small, a read fails or
// the file turns out shorter than buf; otherwise f's offset is len(buf).
func readAtParallel(f *os.File, buf []byte) (int, bool) {
	parts := min(4, runtime.GOMAXPROCS(0), len(buf)/(parallelReadMin/2))
	if len(buf) < parallelReadMin || parts < 2 {
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
	if _, err := f.Seek(int64(len(buf)), io.SeekStart); err != nil {
		return 0, false
	}
	return len(buf), true
}

// ReadInput reads a named file, or standard input for "-", up to
// MaxInputFileBytes. what names the flag in errors.
func ReadInput(in io.Reader, path, what string) ([]byte, error) {
	return ReadInputLimit(in, path, what, MaxInputFileBytes)
}

// ReadInputLimit is ReadInput with another size limit (capture files may be
// larger than token or prompt files).
func ReadInputLimit(in io.Reader, path, what string, limit int64) ([]byte, error) {
	var r io.Reader
	if path == "-" {
		r = in
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err == nil && st.IsDir() {
			return nil, fmt.Errorf("read %s: %s is a directory, not a file", what, path)
		} else if err == nil && st.Mode().IsRegular() && st.Size() > limit {
			// Refuse a regular file that is too large before reading any of it
			// (reading up to the limit first would allocate the limit).
			return nil, fmt.Errorf("read %s: %s is larger than the %d MiB limit (%d MiB)", what, displayPath(path), limit>>20, st.Size()>>20)
		}
		r = f
		if err == nil && st.Mode().IsRegular() {
			// Read a file of known size into one buffer of that size (a large
			// capture would otherwise be copied as the buffer grows). The
			// buffer is made, not grown with bytes.Buffer.Grow, which would
			// write zeros over all of it first (~0.1 s for a 100 MB capture).
			buf := make([]byte, 0, st.Size()+bytes.MinRead)
			if n, ok := readAtParallel(f, buf[:st.Size()]); ok {
				buf = buf[:n] // then read on from there, in case the file grew
			} else if _, err := f.Seek(0, io.SeekStart); err != nil {
				return nil, fmt.Errorf("read %s: %w", what, err)
			}
			lr := io.LimitReader(f, limit+1-int64(len(buf)))
			for {
				if len(buf) == cap(buf) { // the file grew since Stat
					buf = append(buf, 0)[:len(buf)]
				}
				n, err := lr.Read(buf[len(buf):cap(buf)])
				buf = buf[:len(buf)+n]
				if err == io.EOF {
					break
				}
				if err != nil {
					return nil, fmt.Errorf("read %s: %w", what, err)
				}
			}
			if int64(len(buf)) > limit {
				return nil, fmt.Errorf("read %s: %s is larger than the %d MiB limit", what, displayPath(path), limit>>20)
			}
			return buf, nil
		}
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("read %s: %s is larger than the %d MiB limit", what, displayPath(path), limit>>20)
	}
	return data, nil
}

func displayPath(p string) string {
	if p == "-" {
		return "standard input"
	}
	return p
}

// ParseTokenList parses token ids given as text: a JSON array of integers, or
// integers separated by commas and/or whitespace, where lines starting with #
// are comments. Every id must be a decimal
// integer in [0, 2^32). source names the input in errors, and a bad id is
// named by its position counting from 1 ("--tokens, token 3: …").
func ParseTokenList(data []byte, source string) ([]uint32, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%s holds no token ids", source)
	}
	if trimmed[0] == '[' {
		return parseJSONTokens(trimmed, source)
	}
	// Lines starting with # are comments (token files can say what they hold).
	var text strings.Builder
	for line := range strings.Lines(string(trimmed)) {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			text.WriteString("\n")
			continue
		}
		text.WriteString(line)
	}
	fields := strings.FieldsFunc(text.String(), func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if len(fields) == 0 {
		return nil, fmt.Errorf("%s holds no token ids", source)
	}
	out := make([]uint32, len(fields))
	for i, fld := range fields {
		v, err := routecore.ParseTokenID(fld)
		if err != nil {
			return nil, fmt.Errorf("%s, token %d: %w", source, i+1, err)
		}
		out[i] = v
	}
	return out, nil
}

func parseJSONTokens(data []byte, source string) ([]uint32, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw []json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return nil, fmt.Errorf("%s: expected a JSON array of integer token ids, found a %s", source, ute.Value)
		}
		return nil, fmt.Errorf("%s: invalid JSON token array: %w", source, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: unexpected data after the JSON token array", source)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("%s holds no token ids", source)
	}
	out := make([]uint32, len(raw))
	for i, r := range raw {
		// Parse the literal text ourselves: json.Number would accept "1" in
		// quotes, and float64 would round large values.
		lit := bytes.TrimSpace(r)
		if len(lit) > 0 && lit[0] == '"' {
			return nil, fmt.Errorf("%s, token %d: %s is a JSON string; write token ids as bare integers", source, i+1, lit)
		}
		v, err := routecore.ParseTokenID(string(lit))
		if err != nil {
			return nil, fmt.Errorf("%s, token %d: %w", source, i+1, err)
		}
		out[i] = v
	}
	return out, nil
}
