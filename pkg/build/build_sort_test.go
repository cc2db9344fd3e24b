package build

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
)

// TestBldSortByNameMatchesSortFunc: the same order as sorting with the name
// in the comparison, duplicates (which pdqsort may reorder) included.
func TestBldSortByNameMatchesSortFunc(t *testing.T) {
	for n := range 300 {
		var a, b []*raw.DWM
		for i := range n {
			u := &raw.DWM{ObjectMeta: raw.ObjectMeta{Name: fmt.Sprintf("w-%d", (i*7919)%(n/3+1)), Namespace: fmt.Sprint(i)}}
			a = append(a, u)
			b = append(b, u)
		}
		slices.SortFunc(a, func(x, y *raw.DWM) int { return cmp.Compare(x.Name, y.Name) })
		bldSortByName(b, func(u *raw.DWM) string { return u.Name })
		if !slices.Equal(a, b) {
			t.Fatalf("n=%d: orders differ", n)
		}
	}
}
