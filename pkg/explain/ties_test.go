package explain

import (
	"slices"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// TestTieLabelsMatchLabel checks that tieLabels labels a tie set as label does
// candidate by candidate, and shares the labels only between equal tie sets.
func TestTieLabelsMatchLabel(t *testing.T) {
	workers := []model.Worker{{Pod: "d-0"}, {Pod: "d-1"}, {Pod: "d-2"}}
	insts := []model.Instance{{}, {}, {}}
	insts[2].Runtime.DataParallelSize = 2
	e := &explainer{byID: map[routecore.WorkerID]*member{}}
	for i := range workers {
		e.byID[routecore.WorkerID(10+i)] = &member{pod: &workers[i], inst: &insts[i]}
	}
	w := func(id uint64, rank uint32) routecore.WorkerWithDpRank {
		return routecore.WorkerWithDpRank{WorkerID: routecore.WorkerID(id), DpRank: rank}
	}
	tests := []struct {
		name string
		ties []routecore.WorkerWithDpRank
		want []string
	}{
		{"pods", []routecore.WorkerWithDpRank{w(10, 0), w(11, 0), w(12, 1)}, []string{"d-0", "d-1", "d-2:1"}},
		{"same first, last and length, another middle", []routecore.WorkerWithDpRank{w(10, 0), w(12, 0), w(12, 1)}, []string{"d-0", "d-2:0", "d-2:1"}},
		{"an unknown id", []routecore.WorkerWithDpRank{w(10, 0), w(99, 0)}, []string{"d-0", "99"}},
		{"the first again", []routecore.WorkerWithDpRank{w(10, 0), w(11, 0), w(12, 1)}, []string{"d-0", "d-1", "d-2:1"}},
	}
	seen := map[string][]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.tieLabels(slices.Clone(tt.ties))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("tieLabels = %q, want %q", got, tt.want)
			}
			for i, c := range tt.ties {
				if l := e.label(c, true); got[i] != l {
					t.Errorf("label %d = %q, label() says %q", i, got[i], l)
				}
			}
			for name, prev := range seen {
				shared := &prev[0] == &got[0]
				if equal := slices.Equal(prev, got); shared != equal {
					t.Errorf("shares labels with %q: %t, but equal: %t", name, shared, equal)
				}
			}
			seen[tt.name] = got
		})
	}
}
