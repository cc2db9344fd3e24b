package audit_test

import (
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/audit"
)

// TestExcerpt: an excerpt keeps only router lines, re-written with the
// fields the audit reads (span fields and other text gone), request ids
// replaced by stable pseudonyms, the last max records; and it audits the
// same as the original lines.
func TestExcerpt(t *testing.T) {
	const uuid = "5f0c8f3e-6a1b-4c2d-9e8f-0a1b2c3d4e5f"
	lines := []string{
		lineOther,
		`2026-11-20T12:04:00.000010Z DEBUG dynamo_llm::kv_router: [ROUTING_INPUT] request local hashes request_id="` + uuid + `" isl_tokens=40 block_size=16 num_blocks=2 local_hashes=[1, 2] uri=/v1/chat/completions user="alice@example.com"`,
		`2026-11-20T12:04:00.000100Z  INFO dynamo_kv_router::scheduling::selector: Selected worker router_mode="kv" request_id="` + uuid + `" worker_id=3 worker_type=decode dp_rank=0 logit=41.0 host_pinned_blocks=0 disk_blocks=0 prompt="secret"`,
		`2026-11-20T12:04:00.000400Z DEBUG http-request: dynamo_llm::kv_router::push_router::selection: [ROUTING] Best: worker_3 dp_rank=0 with 0/3 blocks overlap request_id=` + uuid + ` worker_id=3 dp_rank=0 overlap_blocks=0 total_blocks=3 x_request_id=alice-42`,
		`2026-11-20T12:04:01.000100Z  INFO dynamo_kv_router::scheduling::selector: Selected worker router_mode="kv" request_id="other" worker_id=4 worker_type=decode dp_rank=0 logit=2.0 host_pinned_blocks=0 disk_blocks=0`,
	}
	recs, _, err := audit.ReadLogs(strings.NewReader(strings.Join(lines, "\n")), "f", audit.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var p audit.Pseudonyms
	got, dropped, err := audit.Excerpt(recs, 3, &p)
	if err != nil {
		t.Fatal(err)
	}
	if dropped != 1 || len(got) != 3 {
		t.Fatalf("%d lines, %d dropped, want 3 and 1:\n%s", len(got), dropped, strings.Join(got, "\n"))
	}
	text := strings.Join(got, "\n")
	for _, gone := range []string{uuid, "alice", "secret", "uri=", "http-request", "[ROUTING_INPUT]"} {
		if strings.Contains(text, gone) {
			t.Errorf("the excerpt carries %q:\n%s", gone, text)
		}
	}
	for _, kept := range []string{`request_id="req-000001"`, "request_id=req-000001 ", `request_id="req-000002"`, "logit=41.0", "overlap_blocks=0"} {
		if !strings.Contains(text, kept) {
			t.Errorf("the excerpt lacks %q:\n%s", kept, text)
		}
	}
	// The excerpt reads back as the same decisions.
	back, st, err := audit.ReadLogs(strings.NewReader(text), "excerpt", audit.Limits{})
	if err != nil || st.Malformed != 0 || len(back) != 3 {
		t.Fatalf("the excerpt does not read back: %v %+v", err, st)
	}
	if p.Of(uuid) != "req-000001" || p.Of("") != "" {
		t.Errorf("pseudonyms are not stable: %q", p.Of(uuid))
	}
}
