package decode

import (
	"errors"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
)

// Page is one page of a LIST answer (a PodList, an UnstructuredList…): where
// its items start in B, to be typed one by one (Decoder.ListItem), and its
// list metadata.
type Page struct {
	B    []byte
	Ends *jsonscan.Ends
	// Items are where the items start in B (each an object or not: ListItem
	// types what is an object of a kind it knows).
	Items []int
	// APIVersion and Kind are the list's ("v1", "PodList").
	APIVersion, Kind string
	// Continue and ResourceVersion are metadata.continue and
	// metadata.resourceVersion ("" when absent or not strings).
	Continue, ResourceVersion string
}

// ListPage validates a LIST answer and finds its items, without decoding
// them. The answer must be a JSON object; items absent or null is a page
// without items.
func ListPage(data []byte) (*Page, error) {
	v := jsonscan.Validator{B: data, Ends: &jsonscan.Ends{Spans: make([]jsonscan.Span, 0, 256)}, EndsDepth: 3}
	i := jsonscan.SkipWS(data, 0)
	end, ok := v.Value(i, 0)
	if !ok || jsonscan.SkipWS(data, end) != len(data) {
		return nil, errors.New("the answer is not valid JSON")
	}
	if data[i] != '{' {
		return nil, errors.New("the answer is not a JSON object")
	}
	p := &Page{B: data, Ends: v.Ends}
	d := NewDecoder(data, v.Ends)
	items := -1
	o := jsonscan.NewObj(v.Ends, data, i)
	for o.Next() {
		switch string(d.key(&o)) {
		case "apiVersion":
			p.APIVersion = d.strOr(o.Val)
		case "kind":
			p.Kind = d.strOr(o.Val)
		case "metadata":
			p.Continue = d.strOr(d.field(o.Val, "continue"))
			p.ResourceVersion = d.strOr(d.field(o.Val, "resourceVersion"))
		case "items":
			items = o.Val
		}
	}
	if items < 0 || data[items] == 'n' {
		return p, nil
	}
	if data[items] != '[' {
		return nil, errors.New("its items are not a list")
	}
	a := jsonscan.NewArr(v.Ends, data, items)
	for a.Next() {
		p.Items = append(p.Items, a.Val)
	}
	return p, nil
}
