package cmdutil

import (
	"fmt"
	"io"
	"strconv"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// MultimodalHelp and MultimodalFileHelp are the help of --mm and --mm-file,
// one rule for hash and explain-route.
const (
	MultimodalHelp = "A multimodal object: HASH@START:END[,START:END...], its mm_hash (decimal u64, 0xHEX, a 64-hex-digit digest, or id:IDENTIFIER) " +
		"and its placeholder's token positions, END exclusive (repeatable)"
	MultimodalFileHelp = `Multimodal objects as JSON: {"mm_objects":[{"mm_hash":N,"offsets":[[START,END]]}]} (request positions), ` +
		`or per-block [null,{"mm_objects":[...]}] (block_mm_infos); - for stdin`
)

// multimodalFileLimit bounds --mm-file; a request's objects fit in far less.
const multimodalFileLimit = 16 << 20

// ReadMultimodal reads --mm arguments or the --mm-file document (not both).
// The result is zero when neither is given.
func ReadMultimodal(in io.Reader, args []string, file string) (routecore.Multimodal, error) {
	switch {
	case len(args) > 0 && file != "":
		return routecore.Multimodal{}, FlagErrorf("--mm and --mm-file cannot be used together: give the multimodal objects one way")
	case len(args) > 0:
		req := &routecore.RequestExtraInfo{}
		for _, a := range args {
			obj, err := routecore.ParseMmObject(a)
			if err != nil {
				return routecore.Multimodal{}, FlagErrorf("--mm %v", err)
			}
			req.MmObjects = append(req.MmObjects, obj)
		}
		return routecore.Multimodal{Request: req}, nil
	case file != "":
		data, err := ReadInputLimit(in, file, "--mm-file", multimodalFileLimit)
		if err != nil {
			return routecore.Multimodal{}, err
		}
		m, err := routecore.ParseMultimodalJSON(data)
		if err != nil {
			return routecore.Multimodal{}, fmt.Errorf("--mm-file %s: %w", displayPath(file), err)
		}
		return m, nil
	}
	return routecore.Multimodal{}, nil
}

// CheckMultimodalRange rejects request-level placeholder ranges that end past
// the request's tokens: the router would clip them silently, which hides a
// wrong offset.
func CheckMultimodalRange(m routecore.Multimodal, tokens int) error {
	if end := m.MaxEnd(); end > tokens {
		return FlagErrorf("a multimodal placeholder ends at token %d but the request has %d tokens (ranges are START:END, END exclusive)", end, tokens)
	}
	return nil
}

// MmObject is one request-level multimodal object in JSON and YAML output;
// the hash is a decimal string so that no consumer rounds it.
type MmObject struct {
	MmHash  string   `json:"mmHash"`
	Offsets [][2]int `json:"offsets"`
}

// MmObjects lists the request-level objects of m for output (nil for the
// per-block form, whose hashes appear on each block).
func MmObjects(m routecore.Multimodal) []MmObject {
	if m.Request == nil {
		return nil
	}
	out := make([]MmObject, 0, len(m.Request.MmObjects))
	for _, o := range m.Request.MmObjects {
		obj := MmObject{MmHash: strconv.FormatUint(uint64(o.MmHash), 10), Offsets: [][2]int{}}
		for _, r := range o.Offsets {
			obj.Offsets = append(obj.Offsets, [2]int{r.Start, r.End})
		}
		out = append(out, obj)
	}
	return out
}
