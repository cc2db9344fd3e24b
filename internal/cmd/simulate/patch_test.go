package simulate

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/build"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/simulate"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// applyUnified applies a unified diff made by unifiedDiff to a, checking
// every context and removed line.
func applyUnified(t *testing.T, a, diff string) string {
	t.Helper()
	src := strings.SplitAfter(a, "\n")
	lines := strings.SplitAfter(diff, "\n")
	var out []string
	pos := 0 // next line of src to copy
	for k := 2; k < len(lines) && lines[k] != ""; {
		var la, na, lb, nb int
		if _, err := fmt.Sscanf(lines[k], "@@ -%d,%d +%d,%d @@", &la, &na, &lb, &nb); err != nil {
			t.Fatalf("hunk header %q: %v", lines[k], err)
		}
		start := la - 1
		if na == 0 {
			start = la
		}
		out = append(out, src[pos:start]...)
		pos = start
		k++
		for k < len(lines) && lines[k] != "" && !strings.HasPrefix(lines[k], "@@") {
			l := lines[k]
			switch l[0] {
			case ' ', '-':
				if src[pos] != l[1:] {
					t.Fatalf("line %d is %q, the diff says %q", pos+1, src[pos], l[1:])
				}
				if l[0] == ' ' {
					out = append(out, src[pos])
				}
				pos++
			case '+':
				out = append(out, l[1:])
			}
			k++
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, "")
}

// TestUnifiedDiff: the diff of small texts, by hand, and a round trip over
// many edits: applying the diff to the first text gives the second.
func TestUnifiedDiff(t *testing.T) {
	got := unifiedDiff("a", "b", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n")
	want := "--- a\n+++ b\n@@ -2,9 +2,10 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n 10\n+11\n"
	if got != want {
		t.Errorf("diff\n%s\nwant\n%s", got, want)
	}
	// Two changes far apart: two hunks.
	var a, b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&a, "%d\n", i)
		switch i {
		case 3:
			b.WriteString("three\n")
		case 25:
		default:
			fmt.Fprintf(&b, "%d\n", i)
		}
	}
	got = unifiedDiff("a", "b", a.String(), b.String())
	if strings.Count(got, "@@ -") != 2 || !strings.Contains(got, "@@ -1,7 +1,7 @@\n 0\n 1\n 2\n-3\n+three\n") || !strings.Contains(got, "@@ -23,7 +23,6 @@\n 22\n 23\n 24\n-25\n 26\n") {
		t.Errorf("two hunks:\n%s", got)
	}
	for seed := range 200 {
		x, y := randomText(seed, 40), randomText(seed+1000, 40)
		if seed%3 == 0 {
			y = x[:len(x)/2] + "inserted\n" + x[len(x)/2:]
		}
		if back := applyUnified(t, x, unifiedDiff("x", "y", x, y)); back != y {
			t.Fatalf("seed %d: the diff does not turn x into y:\n%s", seed, unifiedDiff("x", "y", x, y))
		}
	}
}

func randomText(seed, n int) string {
	var b strings.Builder
	v := uint32(seed*2654435761 + 1)
	for range n {
		v = v*1664525 + 1013904223
		b.WriteString(strconv.Itoa(int(v>>28)) + "\n") // 16 distinct lines: many matches
	}
	return b.String()
}

// TestDGDPatch: the recommended change on the v1beta1 example (a list of
// components) and the v1alpha1 one (a map of services): a copy of the
// component pinned to the zone by a nodeSelector on the policy's node
// label, or more replicas of one that already is, and the policy switch.
// Applying the diff to the DGD as deployed gives the changed DGD.
func TestDGDPatch(t *testing.T) {
	w := 0.3
	for _, tc := range []struct {
		file string
		c    simulate.Candidate
		want []string
	}{
		{"prefill-only-zone-required.yaml", simulate.Candidate{Enforcement: "preferred", PreferredWeight: &w,
			Add: []simulate.AddWorkers{{Role: "decode", Count: 1, Value: "us-east-1c"}, {Role: "prefill", Count: 2, Value: "us-east-1b"}}}, []string{
			"+  - name: Decode-us-east-1c\n", "+          topology.kubernetes.io/zone: us-east-1c\n", "+    replicas: 1\n",
			"+  - name: Prefill-us-east-1b\n", "+    replicas: 2\n",
			"-      enforcement: required\n+      enforcement: preferred\n", "+      preferredWeight: 0.3\n",
		}},
		{"etcd-discovery-v1alpha1.yaml", simulate.Candidate{Add: []simulate.AddWorkers{{Role: "decode", Count: 2, Value: "6f3c2a1e-9b7d-4c55-a1e2-0d9f8b7c6a51.2"}}}, []string{
			"+    VllmDecodeWorker-6f3c2a1e-9b7d-4c55-a1e2-0d9f8b7c6a51.2:\n+      componentType: worker\n+      extraPodSpec:\n+        nodeSelector:\n+          nvidia.com/gpu.clique: 6f3c2a1e-9b7d-4c55-a1e2-0d9f8b7c6a51.2\n+      replicas: 2\n",
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile("../../../examples/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			b, err := capture.Read(bytes.NewReader(data), tc.file)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := build.Build(b)
			if err != nil {
				t.Fatal(err)
			}
			dep := &snap.Deployments[0]
			patch, from, to, notes, err := dgdTexts(b, dep, &tc.c)
			if err != nil || len(notes) != 0 {
				t.Fatalf("err %v, notes %q", err, notes)
			}
			for _, w := range tc.want {
				if !strings.Contains(patch, w) {
					t.Errorf("the patch lacks %q:\n%s", w, patch)
				}
			}
			if got := applyUnified(t, from, patch); got != to {
				t.Errorf("applying the patch does not give the changed DGD")
			}
			if strings.Contains(patch, "status:") || strings.Contains(patch, "managedFields") {
				t.Errorf("the patch carries more than the spec:\n%s", patch)
			}
		})
	}
}
