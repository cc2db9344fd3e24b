package cmdutil

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/fileio"
)

// FuzzParseTokenList: no input panics ParseTokenList, and whatever it accepts
// round-trips exactly through both accepted spellings (comma-separated text and a
// JSON array).
func FuzzParseTokenList(f *testing.F) {
	for _, s := range []string{
		"1,2,3", "1 2\n3\t4", "[1, 2, 3]", "# comment\n5,6\n# x\n7", "4294967295", "4294967296", "-1", "[\"1\"]",
		"[1.0]", "[1e3]", "[]", "", "   ", "1,,2", "[1,2] 3", "0x10", "\ufeff1", "１", "[9007199254740993]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ids, err := ParseTokenList(data, "fuzz")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if len(ids) == 0 {
			t.Fatal("accepted an input with no ids")
		}
		text := make([]string, len(ids))
		for i, id := range ids {
			text[i] = strconv.FormatUint(uint64(id), 10)
		}
		again, err := ParseTokenList([]byte(strings.Join(text, ",")), "again")
		if err != nil || !slices.Equal(again, ids) {
			t.Fatalf("comma form of %v: %v, %v", ids, again, err)
		}
		js, _ := json.Marshal(ids)
		again, err = ParseTokenList(js, "again")
		if err != nil || !slices.Equal(again, ids) {
			t.Fatalf("JSON form %s: %v, %v", js, again, err)
		}
	})
}

// TestReadInputHugeSparseFile: a 2 GiB file (sparse: no disk, no memory) is
// refused at once, without reading it, with the limit in the message.
func TestReadInputHugeSparseFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Skipf("cannot make a sparse 2 GiB file here: %v", err)
	}
	_ = f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	began := time.Now()
	_, err = ReadInputLimit(nil, path, "--from-file", 512<<20)
	elapsed := time.Since(began)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "is larger than the 512 MiB limit (2048 MiB)") {
		t.Fatalf("err = %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("refusing the file allocated %d bytes: it was read", alloc)
	}
	t.Logf("2 GiB sparse file refused in %v: %v", elapsed, err)
}

// endless yields 'x' forever (stdin that never ends).
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestReadInputEndlessStdin: standard input that never ends is cut at the limit.
func TestReadInputEndlessStdin(t *testing.T) {
	_, err := ReadInputLimit(io.MultiReader(endless{}), "-", "--token-file", 1<<20)
	if err == nil || !strings.Contains(err.Error(), "standard input is larger than the 1 MiB limit") {
		t.Fatalf("err = %v", err)
	}
}

// TestReadInputFileLargerThanStat reads a regular file whose Stat size is
// smaller than its content (a /proc file reports 0), so the sized buffer must
// grow, and the limit must still hold.
func TestReadInputFileLargerThanStat(t *testing.T) {
	const path = "/proc/self/maps"
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() || st.Size() != 0 {
		t.Skipf("%s is not a zero-size regular file here", path)
	}
	got, err := ReadInputLimit(nil, path, "--from-file", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) <= bytes.MinRead || !bytes.Contains(got, []byte("\n")) {
		t.Fatalf("read %d bytes: the buffer did not grow past its first %d", len(got), bytes.MinRead)
	}
	if _, err := ReadInputLimit(nil, path, "--from-file", 600); err == nil || !strings.Contains(err.Error(), "larger than the 0 MiB limit") {
		t.Errorf("over the limit: %v", err)
	}
}

// TestReadInputLargeFileInParallel reads a file big enough to be read in
// concurrent parts and checks every byte lands in place.
func TestReadInputLargeFileInParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	data := make([]byte, fileio.ParallelReadMin*2+12345)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range data {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		data[i] = byte(x)
	}
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadInputLimit(nil, path, "--from-file", int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("the file was not read back intact")
	}
	if _, err := ReadInputLimit(nil, path, "--from-file", int64(len(data))-1); err == nil {
		t.Error("a file one byte over the limit was accepted")
	}
}
