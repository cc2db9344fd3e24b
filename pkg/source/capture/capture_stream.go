package capture

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
)

// The streaming reader reads a JSON capture file item by item: it validates
// each item of the List as it arrives, types the Kubernetes objects on the
// other cores (decode.Decoder) and drops their bytes, so that memory holds
// the typed objects and a window of the file, never the whole file. It reads
// the shape `kubectl dynamo capture -o json` writes (one List object, its
// items Kubernetes objects or kubectl-dynamo's own kinds) and gives up (ok
// false) on anything else — YAML, another shape, invalid JSON, any item that
// would be an error — and ReadFile then reads the whole file with Parse, which
// decides. Where it reads, it reads what readCaptureFast reads
// (capture_stream_test.go compares them).

// ReadStreaming reads a capture of size bytes from r (a regular file) as
// Read does, streaming it: a JSON capture of the shape `kubectl dynamo capture
// -o json` writes is read without holding the whole file in memory. ok is
// false for anything else (YAML, another shape, an error, a file larger than
// MaxBytes): then read the file with Read, which reads it whole and decides.
func ReadStreaming(r io.Reader, size int64, name string) (b *raw.Bundle, ok bool) {
	if size > captureLimit {
		return nil, false
	}
	return readCaptureStream(io.LimitReader(r, captureLimit+1), size, name)
}

// streamWindow is the first read of the file; the window grows for an item
// larger than what it holds. streamBatch bounds the bytes of the items handed
// to a decoding core at once. Tests make them small.
var (
	streamWindow = 4 << 20
	streamBatch  = 1 << 20
)

// errStreamGiveUp ends a streaming read that ReadFile must redo whole.
var errStreamGiveUp = errors.New("not a streamable capture")

// streamReader is one streaming read.
type streamReader struct {
	r io.Reader
	// buf holds the unread part of the file from start; the value being read
	// begins at pos.
	buf       []byte
	pos       int
	eof       bool
	remaining int64 // bytes of the file not read yet (what Stat said)

	// ends records the containers of the item being read (validated in
	// buf), to be shifted into its batch.
	ends jsonscan.Ends

	rd captureReader
	// batches are the Kubernetes objects handed to the decoding cores, in
	// file order.
	batches []*streamBatchWork
	cur     *streamBatchWork
	work    chan *streamBatchWork
	wg      sync.WaitGroup
	// free holds the buffers of decoded batches, for the next ones.
	free chan *streamBatchWork
}

// streamBatchWork is a run of consecutive Kubernetes objects: their bytes,
// where each starts and where their containers end (so that decoding skips
// what it does not read without scanning it), and (once decoded) what each
// typed to.
type streamBatchWork struct {
	data   []byte
	starts []int
	ends   jsonscan.Ends
	typed  []any
}

// readCaptureStream reads a capture from r, or reports ok false when the
// whole-file reader must decide.
func readCaptureStream(r io.Reader, size int64, name string) (b *raw.Bundle, ok bool) {
	s := &streamReader{r: r, remaining: size, rd: captureReader{b: &raw.Bundle{}}}
	workers := runtime.GOMAXPROCS(0) - 1
	s.free = make(chan *streamBatchWork, 2*workers+2)
	if workers > 0 {
		s.work = make(chan *streamBatchWork, 2*workers)
		for range workers {
			s.wg.Go(func() {
				for w := range s.work {
					w.decode(s.free)
				}
			})
		}
	}
	err := s.read()
	if s.work != nil {
		close(s.work)
		s.wg.Wait()
	}
	if err != nil {
		return nil, false
	}
	b = s.rd.b
	for _, w := range s.batches {
		for _, o := range w.typed {
			decode.Add(&b.Objects, o)
		}
	}
	if b.Context == "" {
		b.Context = name
	}
	if name != "" {
		b.Sources = append(b.Sources, model.SourceStatus{Kind: model.SourceCapture, Detail: name, At: b.CollectedAt})
	}
	return b, true
}

// decode types a batch's objects and hands its buffers to free (when there
// is room) for the next batch.
func (w *streamBatchWork) decode(free chan *streamBatchWork) {
	d := decode.NewDecoder(w.data, &w.ends)
	w.typed = make([]any, len(w.starts))
	for i, at := range w.starts {
		w.typed[i] = d.Item(at)
	}
	select {
	case free <- &streamBatchWork{data: w.data[:0], starts: w.starts[:0], ends: jsonscan.Ends{Spans: w.ends.Spans[:0]}}:
	default:
	}
	w.data, w.starts, w.ends = nil, nil, jsonscan.Ends{}
}

// fill reads more of the file into the window, keeping buf[keep:] (moved to
// the front of the window); false at the end of the file.
func (s *streamReader) fill(keep int) bool {
	if s.eof {
		return false
	}
	kept := len(s.buf) - keep
	if 2*kept > cap(s.buf) || cap(s.buf) == 0 {
		// Grow: to the window at first, then double; an item larger than
		// 16 MiB (the KV events of a large capture) takes the rest of the
		// file at once instead of doubling towards it.
		n := max(streamWindow, 2*cap(s.buf))
		if cap(s.buf) >= 16<<20 && s.remaining > 0 {
			n = kept + int(s.remaining) + bytes.MinRead
		}
		nb := make([]byte, kept, n)
		copy(nb, s.buf[keep:])
		s.buf = nb
	} else {
		s.buf = s.buf[:copy(s.buf, s.buf[keep:])]
	}
	s.pos -= keep
	n, err := io.ReadFull(s.r, s.buf[len(s.buf):cap(s.buf)])
	s.buf = s.buf[:len(s.buf)+n]
	s.remaining -= int64(n)
	if err != nil {
		s.eof = true
	}
	return n > 0
}

// ws skips whitespace at pos, reading more as needed; false at the end.
func (s *streamReader) ws() bool {
	for {
		s.pos = jsonscan.SkipWS(s.buf, s.pos)
		if s.pos < len(s.buf) {
			return true
		}
		if !s.fill(s.pos) {
			return false
		}
	}
}

// value validates the JSON value at pos, nested depth deep, reading more as
// needed, and returns where it ends (pos stays at its start); s.ends records
// where the containers in its first four levels end. A value the window cuts
// fails within a few bytes of its end (a literal or an escape is refused at
// its start): then more is read and the value validated again.
func (s *streamReader) value(depth int) (int, error) {
	for {
		s.ends.Reset()
		v := jsonscan.Validator{B: s.buf, Ends: &s.ends, EndsDepth: depth + 4}
		end, ok := v.Value(s.pos, depth)
		switch {
		case ok && (end < len(s.buf) || s.eof):
			return end, nil
		case !ok && end < len(s.buf)-8:
			return 0, errStreamGiveUp // invalid, whatever follows
		}
		if !s.fill(s.pos) {
			if ok {
				return end, nil
			}
			return 0, errStreamGiveUp
		}
	}
}

// expect consumes byte c after whitespace.
func (s *streamReader) expect(c byte) error {
	if !s.ws() || s.buf[s.pos] != c {
		return errStreamGiveUp
	}
	s.pos++
	return nil
}

// read reads the capture: one List object whose items are streamed.
func (s *streamReader) read() error {
	if !s.fill(0) {
		return errStreamGiveUp
	}
	if bytes.HasPrefix(s.buf, []byte("\xef\xbb\xbf")) {
		s.pos = 3
	}
	if err := s.expect('{'); err != nil {
		return err
	}
	var kind, metadata []byte
	itemsSeen := false
	for first := true; ; first = false {
		if !s.ws() {
			return errStreamGiveUp
		}
		if s.buf[s.pos] == '}' {
			s.pos++
			break
		}
		if !first {
			if s.buf[s.pos] != ',' {
				return errStreamGiveUp
			}
			s.pos++
			if !s.ws() {
				return errStreamGiveUp
			}
		}
		if s.buf[s.pos] != '"' {
			return errStreamGiveUp
		}
		end, err := s.value(1)
		if err != nil {
			return err
		}
		key := jsonscan.String(s.buf, s.pos, end)
		s.pos = end
		if err := s.expect(':'); err != nil {
			return err
		}
		if !s.ws() {
			return errStreamGiveUp
		}
		if key == "items" {
			if itemsSeen || s.buf[s.pos] != '[' {
				return errStreamGiveUp // a second items, or items that are not a list: whole-file read
			}
			itemsSeen = true
			if err := s.items(); err != nil {
				return err
			}
			continue
		}
		end, err = s.value(1)
		if err != nil {
			return err
		}
		switch key {
		case "kind":
			kind = bytes.Clone(s.buf[s.pos:end])
		case "metadata":
			metadata = bytes.Clone(s.buf[s.pos:end])
		}
		s.pos = end
	}
	// Nothing but whitespace after the List (several documents: whole-file).
	if s.ws() {
		return errStreamGiveUp
	}
	k := streamString(kind)
	if !itemsSeen || (k != "List" && !strings.HasSuffix(k, "List")) {
		return errStreamGiveUp
	}
	if k == "List" && !s.rd.headerSeen {
		if err := s.rd.listHeader(metadata); err != nil {
			return errStreamGiveUp
		}
	}
	if s.cur != nil {
		s.flush()
	}
	return nil
}

// streamString is the fast reader's stringValue over a value's bytes.
func streamString(v []byte) string {
	if len(v) == 0 || v[0] != '"' {
		return ""
	}
	return jsonscan.String(v, 0, len(v))
}

// items reads the List's items (pos at its '[').
func (s *streamReader) items() error {
	s.pos++
	for first := true; ; first = false {
		if !s.ws() {
			return errStreamGiveUp
		}
		if s.buf[s.pos] == ']' {
			s.pos++
			return nil
		}
		if !first {
			if s.buf[s.pos] != ',' {
				return errStreamGiveUp
			}
			s.pos++
			if !s.ws() {
				return errStreamGiveUp
			}
		}
		end, err := s.value(2)
		if err != nil {
			return err
		}
		if err := s.item(s.buf[s.pos:end], s.pos); err != nil {
			return err
		}
		s.pos = end
	}
}

// item reads one validated item, at offset at of the window, as
// fastReader.item reads an item of the List (depth 1).
func (s *streamReader) item(b []byte, at int) error {
	if b[0] != '{' {
		return errStreamGiveUp // a nested array, or not an object: whole-file read
	}
	var apiVersion, kind, items *jsonscan.Member
	var buf [8]jsonscan.Member
	members := jsonscan.Members(nil, b, 0, buf[:0])
	for k := range members {
		m := &members[k]
		switch {
		case jsonscan.KeyIs(b, m.KeyStart, m.KeyEnd, "apiVersion"):
			apiVersion = m
		case jsonscan.KeyIs(b, m.KeyStart, m.KeyEnd, "kind"):
			kind = m
		case jsonscan.KeyIs(b, m.KeyStart, m.KeyEnd, "items"):
			items = m
		}
	}
	str := func(m *jsonscan.Member) string {
		if m == nil {
			return ""
		}
		return streamString(b[m.ValStart:m.ValEnd])
	}
	h := captureHeader{APIVersion: str(apiVersion), Kind: str(kind)}
	if items != nil && (h.Kind == "List" || strings.HasSuffix(h.Kind, "List")) {
		return errStreamGiveUp // a nested List: whole-file read
	}
	s.rd.items++
	if h.Kind == "" || h.APIVersion == "" {
		return errStreamGiveUp
	}
	group, _, _ := strings.Cut(h.APIVersion, "/")
	if group == Group {
		if h.APIVersion == APIVersion && h.Kind == KindKvEvents {
			return s.kvEvents(bytes.Clone(b))
		}
		if s.rd.ours(h, b) != nil {
			return errStreamGiveUp
		}
		return nil
	}
	if s.cur != nil && len(s.cur.data)+len(b) > cap(s.cur.data) {
		s.flush()
	}
	if s.cur == nil {
		select {
		case s.cur = <-s.free:
		default:
		}
		if s.cur == nil || cap(s.cur.data) < len(b) {
			s.cur = &streamBatchWork{data: make([]byte, 0, max(streamBatch, len(b))),
				ends: jsonscan.Ends{Spans: make([]jsonscan.Span, 0, max(streamBatch, len(b))/64)}}
		}
	}
	s.cur.starts = append(s.cur.starts, len(s.cur.data))
	s.cur.ends.AppendShifted(&s.ends, len(s.cur.data)-at)
	s.cur.data = append(s.cur.data, b...)
	return nil
}

// flush hands the current batch to a decoding core (decodes it here on one
// core).
func (s *streamReader) flush() {
	w := s.cur
	s.cur = nil
	s.batches = append(s.batches, w)
	if s.work == nil {
		w.decode(s.free)
		return
	}
	s.work <- w
}

// kvEvents reads a KvEvents item as the fast reader does, its events decoded
// on every core.
func (s *streamReader) kvEvents(b []byte) error {
	v := jsonscan.Validator{B: b, Ends: &jsonscan.Ends{Spans: make([]jsonscan.Span, 0, 64)}, EndsDepth: 2}
	if _, ok := v.Value(0, 0); !ok {
		return errStreamGiveUp
	}
	fr := &fastReader{data: b, ends: v.Ends, rd: captureReader{b: &raw.Bundle{}}}
	if !fr.kvEvents(0, len(b), jsonscan.Members(v.Ends, b, 0, nil)) || !fr.decodeParallel() {
		return errStreamGiveUp
	}
	s.rd.b.KvEvents = append(s.rd.b.KvEvents, fr.rd.b.KvEvents...)
	return nil
}
