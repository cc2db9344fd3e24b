package tui

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/capture"
)

// qualityMetrics are the router decision-quality series of a frontend with
// ai-dynamo/dynamo#14776's counters (router_kv_hit_rate as
// lib/llm/src/kv_router/metrics.rs at 01690d42 exports it): 12% reached where
// 60% was reachable.
const qualityMetrics = `    dynamo_component_router_kv_hit_rate_sum{dynamo_component="router",router_id="7587889712474989333"} 505.2
    dynamo_component_router_kv_hit_rate_count{dynamo_component="router",router_id="7587889712474989333"} 4210
    dynamo_component_router_decisions_total{dynamo_component="router",router_id="7587889712474989333",worker_type="prefill"} 4210
    dynamo_component_router_decision_kv_optimal_total{dynamo_component="router",router_id="7587889712474989333",worker_type="prefill"} 2560
    dynamo_component_router_input_f0_total{dynamo_component="router",router_id="7587889712474989333",worker_type="prefill"} 10480000
    dynamo_component_router_input_f1_total{dynamo_component="router",router_id="7587889712474989333",worker_type="prefill"} 6288000
`

// TestViewRoutingQuality pins the topology tab's KV routing line and the
// KvRoutingGivesAwayCache finding in the findings tab, on the healthy example
// with the series added to its frontend scrape.
func TestViewRoutingQuality(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "healthy-three-zone-required.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const at = "    # HELP dynamo_frontend_worker_active_decode_blocks"
	if strings.Count(string(data), at) != 1 {
		t.Fatal("the example's frontend scrape moved")
	}
	data = []byte(strings.Replace(string(data), at, qualityMetrics+at, 1))
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		for _, tab := range []struct{ name, key string }{{"topology", "1"}, {"findings", "3"}} {
			t.Run(fmt.Sprintf("%dx%d/%s", sz[0], sz[1], tab.name), func(t *testing.T) {
				b, err := capture.Read(bytes.NewReader(data), "examples/healthy-three-zone-required.yaml")
				if err != nil {
					t.Fatal(err)
				}
				d, err := NewData(b, DataOptions{})
				if err != nil {
					t.Fatal(err)
				}
				m := New(Options{Initial: d, Mode: "capture", Now: nowAfter(d)})
				send(t, m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
				run(t, m, m.Init())
				send(t, m, keys(tab.key))
				v := m.View()
				lines := strings.Split(v, "\n")
				if len(lines) != sz[1] {
					t.Errorf("%d lines, want %d", len(lines), sz[1])
				}
				for i, l := range lines {
					if w := len([]rune(l)); w > sz[0] {
						t.Errorf("line %d is %d cells wide: %q", i+1, w, l)
					}
				}
				want := map[string]string{"topology": "KV routing: hit rate 12% of 60% reachable", "findings": "KvRoutingGivesAwayCache"}[tab.name]
				if !strings.Contains(v, want) {
					t.Errorf("the view lacks %q:\n%s", want, v)
				}
				golden.Assert(t, []byte(v+"\n"))
			})
		}
	}
}
