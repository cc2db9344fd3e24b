package source

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/fakefrontend"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/frontend"
)

// TestFrontendSourcePlacements: with Placements the frontend source records the
// placements snapshot as the deployment's KvEvents, exactly, and degrades to a
// note when the frontend has no stream.
func TestFrontendSourcePlacements(t *testing.T) {
	parent := routecore.SequenceHash(1<<63 + 5)
	ev := routecore.RouterEvent{WorkerID: 1<<53 + 1, Event: routecore.KvCacheEvent{EventID: 3, DpRank: 1,
		Data: routecore.KvCacheEventData{Stored: &routecore.KvCacheStoreData{ParentHash: &parent,
			Blocks: []routecore.KvCacheStoredBlock{{BlockHash: 1<<64 - 1, TokensHash: 42}}}}}}
	dgd := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
		"metadata": map[string]any{"name": "llm", "namespace": "ns"}}}
	tests := []struct {
		name     string
		cfg      fakefrontend.Config
		events   int
		noteText string
		noteSev  model.NoteSeverity
	}{
		{"snapshot", fakefrontend.Config{Metrics: "", Sources: []fakefrontend.PlacementSource{
			{Model: "m", Namespace: "dyn", Component: "prefill", Endpoint: "generate", BlockSize: 16, Events: []routecore.RouterEvent{ev, ev}}}}, 2, "", ""},
		{"incomplete", fakefrontend.Config{Incomplete: true, Sources: []fakefrontend.PlacementSource{
			{Model: "m", Namespace: "dyn", Component: "decode", Endpoint: "generate", BlockSize: 16, Events: []routecore.RouterEvent{ev}}}}, 1, "incomplete", model.NoteWarning},
		{"no stream", fakefrontend.Config{Status: map[string]int{fakefrontend.PathPlacements: http.StatusNotFound}}, 0, "treat the cache as cold", model.NoteInfo},
		{"server error", fakefrontend.Config{Status: map[string]int{fakefrontend.PathPlacements: http.StatusInternalServerError}}, 0, "treat the cache as cold", model.NoteWarning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fe := fakefrontend.New(tt.cfg)
			defer fe.Close()
			b := &raw.Bundle{Objects: decode.FromObject(dgd.Object)}
			src := &FrontendSource{URL: fe.URL, Placements: true, Options: frontend.Options{HTTPClient: http.DefaultClient, Timeout: 5 * time.Second}}
			if err := src.Collect(context.Background(), b); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, kv := range b.KvEvents {
				if kv.Namespace != "ns" || kv.Deployment != "llm" || kv.BlockSize != 16 || !strings.Contains(kv.Source, "placements") {
					t.Errorf("KvEvents header %+v", kv)
				}
				for _, e := range kv.Events {
					n++
					if e.WorkerID != ev.WorkerID || e.Event.DpRank != 1 || *e.Event.Data.Stored.ParentHash != parent ||
						e.Event.Data.Stored.Blocks[0].BlockHash != 1<<64-1 {
						t.Errorf("event not exact: %+v", e)
					}
				}
			}
			if n != tt.events {
				t.Errorf("%d events, want %d", n, tt.events)
			}
			found := tt.noteText == ""
			for _, note := range b.Notes {
				if strings.Contains(note.Message, tt.noteText) && tt.noteText != "" {
					found = true
					if note.Severity != tt.noteSev {
						t.Errorf("note %q severity %s, want %s", note.Message, note.Severity, tt.noteSev)
					}
				}
			}
			if !found {
				t.Errorf("no note with %q in %+v", tt.noteText, b.Notes)
			}
			if m := fe.Mutating(); len(m) != 0 {
				t.Errorf("mutating requests %v", m)
			}
		})
	}
}
