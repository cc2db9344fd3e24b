package topology_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/cmdtest"
	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/memguard"
)

// TestTopologyCaptureAliasBomb: a 190 KB capture whose one 100 KB string is
// aliased 2,000 times took 2.5 GB in topology --from-file (issue 29). Every
// --from-file is read through cmdutil.ReadCaptureFile, which refuses YAML
// whose aliases expand beyond a bound proportional to its size.
func TestTopologyCaptureAliasBomb(t *testing.T) {
	data, err := os.ReadFile("../../../examples/prefill-only-zone-required.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.Write(data)
	b.WriteString("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    a: &big " + strings.Repeat("A", 100_000) + "\ndata:\n  refs:\n")
	b.WriteString(strings.Repeat("  - *big\n", 2000))
	path := filepath.Join(t.TempDir(), "capture.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	g := memguard.Watch(t, 256<<20)
	r := cmdtest.Run(t, "topology", "--from-file", path)
	t.Logf("peak %s", memguard.MiB(g.Stop()))
	if r.ExitCode != 1 || !strings.HasPrefix(r.Stderr, "error: --from-file "+path+": YAML document 2 expands its anchors and aliases to more than") {
		t.Errorf("exit %d, stderr %.400q", r.ExitCode, r.Stderr)
	}
}
