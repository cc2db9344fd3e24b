package fileio

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadAtParallelShortFile: a file shorter than expected (it shrank after
// Stat) is not read in parts; one of the right size is.
func TestReadAtParallelShortFile(t *testing.T) {
	data := make([]byte, ParallelReadMin*2+12345)
	for i := range data {
		data[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := readAtParallel(f, make([]byte, len(data)+1)); ok {
		t.Error("readAtParallel filled a buffer longer than the file")
	}
	buf := make([]byte, len(data))
	if n, ok := readAtParallel(f, buf); !ok || n != len(data) || string(buf) != string(data) {
		t.Fatalf("readAtParallel = %d, %v", n, ok)
	}
}
