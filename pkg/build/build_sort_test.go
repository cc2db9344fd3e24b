package build

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestBldSortByNameMatchesSortFunc: the same order as sorting with GetName in
// the comparison, duplicates (which pdqsort may reorder) included.
func TestBldSortByNameMatchesSortFunc(t *testing.T) {
	for n := range 300 {
		var a, b []*unstructured.Unstructured
		for i := range n {
			u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("w-%d", (i*7919)%(n/3+1)), "uid": fmt.Sprint(i)}}}
			a = append(a, u)
			b = append(b, u)
		}
		slices.SortFunc(a, func(x, y *unstructured.Unstructured) int { return cmp.Compare(x.GetName(), y.GetName()) })
		bldSortByName(b)
		if !slices.Equal(a, b) {
			t.Fatalf("n=%d: orders differ", n)
		}
	}
}
