package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/golden"
)

// TestViewGolden pins every tab of every example at 80×24 and 120×40, colour
// off (the route explorer with the example prompt), plus the help overlay.
// UPDATE_GOLDEN=1 rewrites them.
func TestViewGolden(t *testing.T) {
	sizes := [][2]int{{80, 24}, {120, 40}}
	tabs := []struct{ name, key string }{{"topology", "1"}, {"workers", "2"}, {"findings", "3"}, {"route", "4"}, {"help", "?"}}
	for _, ex := range examples {
		for _, sz := range sizes {
			for _, tab := range tabs {
				name := fmt.Sprintf("%s/%dx%d/%s", strings.TrimSuffix(ex, ".yaml"), sz[0], sz[1], tab.name)
				t.Run(name, func(t *testing.T) {
					m := newTestModel(t, ex, sz[0], sz[1], exampleTokens(t))
					send(t, m, keys(tab.key))
					v := m.View()
					if strings.Contains(v, "\x1b[") {
						t.Error("colour off but the view has escape sequences")
					}
					lines := strings.Split(v, "\n")
					if len(lines) != sz[1] {
						t.Errorf("%d lines, want %d", len(lines), sz[1])
					}
					for i, l := range lines {
						if w := len([]rune(l)); w > sz[0] {
							t.Errorf("line %d is %d cells wide: %q", i+1, w, l)
						}
					}
					golden.Assert(t, []byte(v+"\n"))
				})
			}
		}
	}
}
