package simulate_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSimulateSilentNoOps (issue 31, item 3): what used to replay as if it
// changed something, or as if nothing were wrong, now says so.
func TestSimulateSilentNoOps(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../../../" + mooncake)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	// Line 3 spells hash_ids without its underscore.
	typo := filepath.Join(dir, "typo.jsonl")
	if err := os.WriteFile(typo, []byte(lines[0]+lines[1]+strings.Replace(lines[2], `"hash_ids"`, `"hashids"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"simulate", "--from-file", prefillOnly, "--assume-idle", "--seed", "1", "--fail-on", "none"}
	tr := append(append([]string(nil), base...), "--trace", mooncake, "--max-requests", "20")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"a typo'd zone is a new zone", append(slices.Clone(tr), "--variant", "decode+2@us-east-9z"), 0, []string{
			"decode+2@us-east-9z: 12 of 20 requests routed, 8 failed (40%)",
			"⚠ decode+2@us-east-9z: us-east-9z is a new zone value (the deployment's are us-east-1a, us-east-1b, us-east-1c): the added workers form a zone of their own; check the spelling",
		}, nil},
		{"a weight under required", append(slices.Clone(tr), "--variant", "weight=0.3"), 1, nil, []string{
			`error: --variant "weight=0.3" changes nothing — weight=0.3: the preferred weight applies to prefill workers under preferred enforcement, and none is (they run 4 required); add enforcement=preferred to the variant`,
		}},
		{"a weight beside a change", append(slices.Clone(tr), "--variant", "weight=0.3,decode+1@us-east-1c"), 0, []string{
			"  ⚠ weight=0.3 changes nothing",
		}, nil},
		{"an unknown key in the trace", append(append([]string(nil), base...), "--trace", typo), 1, nil, []string{
			`error: the trace: line 3: unknown key "hashids" (did you mean "hash_ids"?)`,
		}},
		{"a trace block size the hash ids do not fill", append(slices.Clone(tr), "--trace-block-size", "16"), 0, []string{
			"⚠ the trace: line 1: input_length 6758 fills 423 blocks of 16 tokens but the row has only 14 hash_ids (20 of 20 rows are so)",
			"set --trace-block-size 512 (Mooncake's published traces)",
		}, nil},
		{"a bare manifest", []string{"simulate", "--from-file", "test/fixtures/upstream/manifest-vllm-agg-v1beta1.yaml", "--trace", mooncake}, 1, nil, []string{
			"error: DynamoGraphDeployment vllm-agg has no pods and no status: it is a manifest that has not been applied",
			"To check a manifest before it is applied: kubectl dynamo preflight -f test/fixtures/upstream/manifest-vllm-agg-v1beta1.yaml",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runIn(t, tt.args...)
			if r.ExitCode != tt.code {
				t.Fatalf("exit %d, want %d: %s", r.ExitCode, tt.code, r.Stderr)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(r.Stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, r.Stdout)
				}
			}
			for _, w := range tt.stderr {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.Stderr)
				}
			}
		})
	}
}
