package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

func TestMain(m *testing.M) { hermetic.Main(m) }

// TestPanicExitsOne: a panic anywhere in a command is an internal error,
// exit 1 with a message, never Go's exit status 2, which means "the
// deployment fails requests" (issue 29, case 7).
func TestPanicExitsOne(t *testing.T) {
	defer func(f func(*cmdutil.Factory) *cobra.Command) { newRoot = f }(newRoot)
	newRoot = func(*cmdutil.Factory) *cobra.Command {
		return &cobra.Command{Use: "kubectl-dynamo", SilenceUsage: true, SilenceErrors: true,
			RunE: func(*cobra.Command, []string) error { panic("boom") }}
	}
	errFile, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer func(f *os.File) { os.Stderr = f }(os.Stderr)
	os.Stderr = errFile
	code := run(nil)
	os.Stderr.Close()
	out, _ := os.ReadFile(errFile.Name())
	if code != cmdutil.ExitError || !strings.HasPrefix(string(out), "error: internal error: boom\nThis is a bug in kubectl-dynamo") {
		t.Errorf("exit %d, stderr %.200q; want exit 1 and the internal-error message", code, out)
	}
}
