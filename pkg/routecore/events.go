package routecore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// StorageTier is the cache tier a KV event describes. The router's radix tree
// only indexes device events; host, disk and external events feed separate
// continuation indexes that extend a worker's device prefix.
type StorageTier uint8

// The storage tiers in Dynamo's order (protocols.rs StorageTier). Device is the
// zero value because Dynamo defaults a missing storage_tier to device.
const (
	TierDevice StorageTier = iota
	TierHostPinned
	TierDisk
	TierExternal
)

// NumStorageTiers is the number of storage tiers, for arrays indexed by tier.
const NumStorageTiers = 4

var tierNames = [NumStorageTiers]string{"device", "host_pinned", "disk", "external"}

// ErrMalformedEvent is wrapped by every RouterEvent decoding error, so callers
// can tell bad input apart from I/O failures with errors.Is.
var ErrMalformedEvent = errors.New("malformed router event")

// ErrEventTooLarge is returned by EventDecoder when one event exceeds the
// configured byte limit; the stream cannot be resumed after it.
var ErrEventTooLarge = errors.New("router event exceeds the size limit")

// String returns the wire name (device, host_pinned, disk, external).
func (t StorageTier) String() string {
	if int(t) < len(tierNames) {
		return tierNames[t]
	}
	return "storage_tier(" + strconv.Itoa(int(t)) + ")"
}

// ParseStorageTier maps a wire name to a tier. Unknown names are an error rather
// than a silent default, because indexing a lower-tier event as device would
// inflate overlap scores.
func ParseStorageTier(s string) (StorageTier, error) {
	for i, n := range tierNames {
		if n == s {
			return StorageTier(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown storage_tier %q; use device, host_pinned, disk or external", ErrMalformedEvent, s)
}

// MarshalText emits the wire name so tiers round-trip through JSON keys and values.
func (t StorageTier) MarshalText() ([]byte, error) {
	if int(t) >= len(tierNames) {
		return nil, fmt.Errorf("cannot marshal storage tier %d: not a known tier", t)
	}
	return []byte(tierNames[t]), nil
}

// UnmarshalText parses a wire name with ParseStorageTier.
func (t *StorageTier) UnmarshalText(b []byte) error {
	v, err := ParseStorageTier(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// RouterEvent is one KV cache event published by a worker, in Dynamo's JSON
// shape (lib/kv-router/src/protocols.rs). The optional residency_domain,
// state_source and session_id fields are accepted and ignored on input, since
// the overlap index does not model cache-owner residency.
type RouterEvent struct {
	// WorkerID is the publishing worker (its discovery instance id).
	WorkerID WorkerID
	// StorageTier says which cache tier the event describes; missing means device.
	StorageTier StorageTier
	// Event is the event body.
	Event KvCacheEvent
}

// KvCacheEvent is the body of a RouterEvent.
type KvCacheEvent struct {
	// EventID increases per (worker, dp rank); gaps mean the publisher lost events.
	EventID uint64
	// DpRank is the data-parallel rank that owns the blocks (0 when DP is off).
	DpRank uint32
	// Data is the operation.
	Data KvCacheEventData
}

// KvCacheEventData is exactly one of Stored, Removed or Cleared, mirroring
// Dynamo's externally tagged enum. Decoding guarantees exactly one is set;
// values built by hand with none or several set are rejected by MarshalJSON
// and by the index.
type KvCacheEventData struct {
	// Stored adds blocks under a parent.
	Stored *KvCacheStoreData
	// Removed drops blocks by their external hashes.
	Removed *KvCacheRemoveData
	// Cleared drops every block of the (worker, dp rank).
	Cleared bool
}

// KvCacheStoreData describes blocks appended below ParentHash.
type KvCacheStoreData struct {
	// ParentHash is the external hash of the block the first stored block
	// follows; nil means the blocks start at the root of the prompt.
	ParentHash *SequenceHash
	// StartPosition is the optional token position of the first block.
	StartPosition *uint64
	// Blocks are the stored blocks, each the parent of the next.
	Blocks []KvCacheStoredBlock
}

// KvCacheStoredBlock is one stored block.
type KvCacheStoredBlock struct {
	// BlockHash is the engine's external (sequence-aware) hash; the index uses
	// it only to find parents and removals.
	BlockHash SequenceHash
	// TokensHash is the local block hash, the key the radix tree matches on.
	TokensHash LocalBlockHash
	// MmExtraInfo is kept verbatim so events round-trip; nil when absent or null.
	MmExtraInfo json.RawMessage
}

// KvCacheRemoveData lists evicted blocks by external hash.
type KvCacheRemoveData struct {
	// BlockHashes are the external hashes of the evicted blocks.
	BlockHashes []SequenceHash
}

// kind reports which variant is set, or an error when not exactly one is.
func (d KvCacheEventData) kind() (string, error) {
	n := 0
	k := ""
	if d.Stored != nil {
		n++
		k = "stored"
	}
	if d.Removed != nil {
		n++
		k = "removed"
	}
	if d.Cleared {
		n++
		k = "cleared"
	}
	if n != 1 {
		return "", fmt.Errorf("%w: event data must set exactly one of stored, removed or cleared (has %d)", ErrMalformedEvent, n)
	}
	return k, nil
}

// DecodeRouterEvent decodes one RouterEvent from JSON. It is json.Unmarshal
// with the strict integer handling of RouterEvent.UnmarshalJSON.
func DecodeRouterEvent(data []byte) (RouterEvent, error) {
	var ev RouterEvent
	if !json.Valid(data) {
		// json.Unmarshal reports where the syntax error is.
		err := json.Unmarshal(data, &ev)
		return ev, err
	}
	err := ev.decodeValid(data)
	return ev, err
}

// DecodeValidRouterEvent is DecodeRouterEvent for data the caller has already
// validated as JSON (json.Valid, or a validating pass over a whole document the
// event is part of): it skips the second validation pass. The result on invalid
// JSON is an error or an arbitrary event, never a panic.
func DecodeValidRouterEvent(data []byte) (ev RouterEvent, err error) {
	defer func() {
		// The splitter trusts its input; invalid JSON may send it out of range.
		if recover() != nil {
			ev, err = RouterEvent{}, fmt.Errorf("%w: router event is not valid JSON", ErrMalformedEvent)
		}
	}()
	err = ev.decodeValid(data)
	return ev, err
}

// MarshalJSON emits Dynamo's shape with every u64 as an exact JSON integer.
func (ev RouterEvent) MarshalJSON() ([]byte, error) {
	return ev.appendJSON(make([]byte, 0, 128))
}

func (ev RouterEvent) appendJSON(b []byte) ([]byte, error) {
	k, err := ev.Event.Data.kind()
	if err != nil {
		return nil, err
	}
	if int(ev.StorageTier) >= NumStorageTiers {
		return nil, fmt.Errorf("cannot marshal router event: unknown storage tier %d", ev.StorageTier)
	}
	b = append(b, `{"worker_id":`...)
	b = strconv.AppendUint(b, uint64(ev.WorkerID), 10)
	b = append(b, `,"storage_tier":"`...)
	b = append(b, tierNames[ev.StorageTier]...)
	b = append(b, `","event":{"event_id":`...)
	b = strconv.AppendUint(b, ev.Event.EventID, 10)
	b = append(b, `,"data":`...)
	d := ev.Event.Data
	switch k {
	case "cleared":
		b = append(b, `"cleared"`...)
	case "removed":
		b = append(b, `{"removed":{"block_hashes":[`...)
		for i, h := range d.Removed.BlockHashes {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendUint(b, uint64(h), 10)
		}
		b = append(b, `]}}`...)
	case "stored":
		s := d.Stored
		b = append(b, `{"stored":{"parent_hash":`...)
		if s.ParentHash == nil {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendUint(b, uint64(*s.ParentHash), 10)
		}
		if s.StartPosition != nil {
			b = append(b, `,"start_position":`...)
			b = strconv.AppendUint(b, *s.StartPosition, 10)
		}
		b = append(b, `,"blocks":[`...)
		for i, blk := range s.Blocks {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"block_hash":`...)
			b = strconv.AppendUint(b, uint64(blk.BlockHash), 10)
			b = append(b, `,"tokens_hash":`...)
			b = strconv.AppendUint(b, uint64(blk.TokensHash), 10)
			b = append(b, `,"mm_extra_info":`...)
			if len(blk.MmExtraInfo) == 0 {
				b = append(b, "null"...)
			} else {
				var buf bytes.Buffer
				if err := json.Compact(&buf, blk.MmExtraInfo); err != nil {
					return nil, fmt.Errorf("cannot marshal mm_extra_info of block %d: %w", i, err)
				}
				b = append(b, buf.Bytes()...)
			}
			b = append(b, '}')
		}
		b = append(b, `]}}`...)
	}
	b = append(b, `,"dp_rank":`...)
	b = strconv.AppendUint(b, uint64(ev.Event.DpRank), 10)
	b = append(b, `}}`...)
	return b, nil
}

// UnmarshalJSON decodes Dynamo's RouterEvent JSON. Integers are parsed from
// their literal text, never through float64, because ids and hashes use all
// 64 bits. Hash fields also accept negative i64 literals (some engines publish
// hashes as signed integers) and keep their two's-complement bit pattern.
// Keys are case-sensitive and unknown keys are ignored, as with serde.
func (ev *RouterEvent) UnmarshalJSON(data []byte) error {
	if !json.Valid(data) {
		return fmt.Errorf("%w: router event is not valid JSON", ErrMalformedEvent)
	}
	return ev.decodeValid(data)
}

// decodeValid is UnmarshalJSON for input known to be valid JSON: the nested
// objects are then split without validating them again (evDecodeObject).
func (ev *RouterEvent) decodeValid(data []byte) error {
	if fast, ok := evFastEvent(data); ok {
		*ev = fast
		return nil
	}
	return ev.decodeGeneral(data)
}

// decodeGeneral is decodeValid without the single-pass fast path: the
// reference semantics and error messages.
func (ev *RouterEvent) decodeGeneral(data []byte) error {
	obj, err := evDecodeObject(data, "router event")
	if err != nil {
		return err
	}
	var out RouterEvent
	raw, ok := obj["worker_id"]
	if !ok {
		return evMissing("worker_id")
	}
	w, err := evParseU64(raw, "worker_id", false)
	if err != nil {
		return err
	}
	out.WorkerID = WorkerID(w)
	if raw, ok := obj["storage_tier"]; ok {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("%w: field storage_tier must be a string such as \"device\"", ErrMalformedEvent)
		}
		t, err := ParseStorageTier(s)
		if err != nil {
			return err
		}
		out.StorageTier = t
	}
	raw, ok = obj["event"]
	if !ok {
		return evMissing("event")
	}
	if err := out.Event.decode(raw); err != nil {
		return err
	}
	*ev = out
	return nil
}

func (e *KvCacheEvent) decode(data []byte) error {
	obj, err := evDecodeObject(data, "event")
	if err != nil {
		return err
	}
	raw, ok := obj["event_id"]
	if !ok {
		return evMissing("event.event_id")
	}
	if e.EventID, err = evParseU64(raw, "event.event_id", false); err != nil {
		return err
	}
	if raw, ok := obj["dp_rank"]; ok {
		v, err := evParseU64(raw, "event.dp_rank", false)
		if err != nil {
			return err
		}
		if v > 1<<32-1 {
			return fmt.Errorf("%w: field event.dp_rank value %d exceeds the u32 range", ErrMalformedEvent, v)
		}
		e.DpRank = uint32(v)
	}
	raw, ok = obj["data"]
	if !ok {
		return evMissing("event.data")
	}
	return e.Data.decode(raw)
}

func (d *KvCacheEventData) decode(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil || s != "cleared" {
			return fmt.Errorf("%w: field event.data must be \"cleared\" or an object with stored or removed", ErrMalformedEvent)
		}
		d.Cleared = true
		return nil
	}
	obj, err := evDecodeObject(data, "event.data")
	if err != nil {
		return err
	}
	if len(obj) != 1 {
		return fmt.Errorf("%w: field event.data must have exactly one key (stored, removed or cleared), has %d", ErrMalformedEvent, len(obj))
	}
	for k, v := range obj { // exactly one iteration
		switch k {
		case "cleared":
			if !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
				return fmt.Errorf("%w: field event.data.cleared must be null", ErrMalformedEvent)
			}
			d.Cleared = true
		case "stored":
			d.Stored = new(KvCacheStoreData)
			return d.Stored.decode(v)
		case "removed":
			d.Removed = new(KvCacheRemoveData)
			return d.Removed.decode(v)
		default:
			return fmt.Errorf("%w: field event.data has unknown variant %q; expected stored, removed or cleared", ErrMalformedEvent, k)
		}
	}
	return nil
}

func (s *KvCacheStoreData) decode(data []byte) error {
	obj, err := evDecodeObject(data, "event.data.stored")
	if err != nil {
		return err
	}
	if raw, ok := obj["parent_hash"]; ok && !evIsNull(raw) {
		h, err := evParseU64(raw, "event.data.stored.parent_hash", true)
		if err != nil {
			return err
		}
		ph := SequenceHash(h)
		s.ParentHash = &ph
	}
	if raw, ok := obj["start_position"]; ok && !evIsNull(raw) {
		p, err := evParseU64(raw, "event.data.stored.start_position", false)
		if err != nil {
			return err
		}
		s.StartPosition = &p
	}
	raw, ok := obj["blocks"]
	if !ok {
		return evMissing("event.data.stored.blocks")
	}
	if blocks, ok := evFastBlocks(raw); ok {
		s.Blocks = blocks
		return nil
	}
	return s.decodeBlocks(raw)
}

// decodeBlocks is the general decoder of a stored event's blocks array.
func (s *KvCacheStoreData) decodeBlocks(raw []byte) error {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return fmt.Errorf("%w: field event.data.stored.blocks must be an array of block objects", ErrMalformedEvent)
	}
	s.Blocks = make([]KvCacheStoredBlock, len(items))
	for i, it := range items {
		field := "event.data.stored.blocks[" + strconv.Itoa(i) + "]"
		bo, err := evDecodeObject(it, field)
		if err != nil {
			return err
		}
		raw, ok := bo["block_hash"]
		if !ok {
			return evMissing(field + ".block_hash")
		}
		bh, err := evParseU64(raw, field+".block_hash", true)
		if err != nil {
			return err
		}
		raw, ok = bo["tokens_hash"]
		if !ok {
			return evMissing(field + ".tokens_hash")
		}
		th, err := evParseU64(raw, field+".tokens_hash", true)
		if err != nil {
			return err
		}
		s.Blocks[i] = KvCacheStoredBlock{BlockHash: SequenceHash(bh), TokensHash: LocalBlockHash(th)}
		if mm, ok := bo["mm_extra_info"]; ok && !evIsNull(mm) {
			s.Blocks[i].MmExtraInfo = append(json.RawMessage(nil), bytes.TrimSpace(mm)...)
		}
	}
	return nil
}

func (r *KvCacheRemoveData) decode(data []byte) error {
	obj, err := evDecodeObject(data, "event.data.removed")
	if err != nil {
		return err
	}
	raw, ok := obj["block_hashes"]
	if !ok {
		return evMissing("event.data.removed.block_hashes")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return fmt.Errorf("%w: field event.data.removed.block_hashes must be an array of integers", ErrMalformedEvent)
	}
	r.BlockHashes = make([]SequenceHash, len(items))
	for i, it := range items {
		h, err := evParseU64(it, "event.data.removed.block_hashes["+strconv.Itoa(i)+"]", true)
		if err != nil {
			return err
		}
		r.BlockHashes[i] = SequenceHash(h)
	}
	return nil
}

// evDecodeObject splits a JSON object into its members, like json.Unmarshal
// into map[string]json.RawMessage (escaped keys unescaped, the last duplicate
// wins), but in one pass and without copying the values: data must be valid
// JSON (RouterEvent decoding validates the whole event once, up front).
func evDecodeObject(data []byte, field string) (map[string]json.RawMessage, error) {
	notObject := fmt.Errorf("%w: field %s must be a JSON object", ErrMalformedEvent, field)
	i := evSkipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, notObject
	}
	obj := make(map[string]json.RawMessage, 4)
	i = evSkipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return obj, nil
	}
	for i < len(data) && data[i] == '"' {
		end := evSkipString(data, i)
		key := string(data[i+1 : end-1])
		if bytes.IndexByte(data[i:end], '\\') >= 0 || !evASCII(data[i:end]) {
			// Escapes and non-ASCII (json replaces invalid UTF-8): decode as json does.
			if err := json.Unmarshal(data[i:end], &key); err != nil {
				return nil, notObject
			}
		}
		i = evSkipWS(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, notObject
		}
		i = evSkipWS(data, i+1)
		start := i
		i = evSkipValue(data, i)
		obj[key] = data[start:i:i]
		i = evSkipWS(data, i)
		if i < len(data) && data[i] == ',' {
			i = evSkipWS(data, i+1)
			continue
		}
		if i < len(data) && data[i] == '}' {
			return obj, nil
		}
		return nil, notObject
	}
	return nil, notObject
}

func evASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func evSkipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// evSkipString returns the index after the string starting at b[i] == '"'.
func evSkipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// evSkipValue returns the index after the valid JSON value starting at b[i].
func evSkipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return evSkipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = evSkipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

func evMissing(field string) error {
	return fmt.Errorf("%w: required field %s is missing", ErrMalformedEvent, field)
}

func evIsNull(raw []byte) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// parseU64 parses a JSON integer literal without going through float64. With
// allowNegative, literals in [-2^63, 0) are accepted and reinterpreted as the
// u64 with the same bit pattern, the way Dynamo reads engine-signed hashes.
func evParseU64(raw []byte, field string, allowNegative bool) (uint64, error) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || s == "null" {
		return 0, fmt.Errorf("%w: field %s must be an integer, got null", ErrMalformedEvent, field)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' || (c == '-' && i == 0) {
			continue
		}
		return 0, fmt.Errorf("%w: field %s must be a JSON integer, got %.40s", ErrMalformedEvent, field, s)
	}
	if s[0] == '-' {
		if !allowNegative {
			return 0, fmt.Errorf("%w: field %s must be non-negative, got %s", ErrMalformedEvent, field, s)
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: field %s value %.40s is outside the i64 range", ErrMalformedEvent, field, s)
		}
		return uint64(v), nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: field %s value %.40s is outside the u64 range", ErrMalformedEvent, field, s)
	}
	return v, nil
}

// DefaultMaxEventBytes bounds one event in an EventDecoder stream. A stored
// event of 8k blocks is about 600 KiB, so 16 MiB leaves ample headroom while
// keeping a corrupt stream from exhausting memory.
const DefaultMaxEventBytes = 16 << 20

// EventDecoder reads a stream of RouterEvents that is either one JSON array
// or a sequence of JSON values (NDJSON or concatenated). It holds at most one
// event in memory, so dumps of millions of events can be indexed incrementally.
type EventDecoder struct {
	br      *bufio.Reader
	lr      *evLimitedReader
	dec     *json.Decoder
	max     int64
	started bool
	inArray bool
	done    bool
	n       int
}

// NewEventDecoder returns a decoder over r with DefaultMaxEventBytes.
func NewEventDecoder(r io.Reader) *EventDecoder {
	d := &EventDecoder{max: DefaultMaxEventBytes}
	d.lr = &evLimitedReader{r: r}
	d.br = bufio.NewReader(d.lr)
	return d
}

// SetMaxEventBytes changes the per-event size limit; n <= 0 restores the default.
func (d *EventDecoder) SetMaxEventBytes(n int64) {
	if n <= 0 {
		n = DefaultMaxEventBytes
	}
	d.max = n
}

// Next returns the next event, io.EOF after the last one, or an error naming
// the event's position in the stream. After an error other than a malformed
// event inside a well-formed JSON value, the stream cannot continue.
func (d *EventDecoder) Next() (RouterEvent, error) {
	if d.done {
		return RouterEvent{}, io.EOF
	}
	if !d.started {
		d.started = true
		d.lr.limit = d.max + 4096
		c, err := d.peekNonSpace()
		if err != nil {
			d.done = true
			if errors.Is(err, io.EOF) {
				return RouterEvent{}, io.EOF
			}
			return RouterEvent{}, err
		}
		d.dec = json.NewDecoder(d.br)
		if c == '[' {
			d.inArray = true
			if _, err := d.dec.Token(); err != nil {
				d.done = true
				return RouterEvent{}, d.wrap(err)
			}
		}
	}
	d.lr.limit = d.lr.read + d.max + 4096
	if d.inArray {
		if !d.dec.More() {
			d.done = true
			if _, err := d.dec.Token(); err != nil {
				return RouterEvent{}, d.wrap(err)
			}
			return RouterEvent{}, io.EOF
		}
	}
	var raw json.RawMessage
	if err := d.dec.Decode(&raw); err != nil {
		d.done = true
		if errors.Is(err, io.EOF) && !d.inArray {
			return RouterEvent{}, io.EOF
		}
		return RouterEvent{}, d.wrap(err)
	}
	if int64(len(raw)) > d.max {
		d.done = true
		return RouterEvent{}, fmt.Errorf("event %d: %w (%d bytes, limit %d); raise the limit with SetMaxEventBytes", d.n, ErrEventTooLarge, len(raw), d.max)
	}
	idx := d.n
	d.n++
	ev, err := DecodeRouterEvent(raw)
	if err != nil {
		return RouterEvent{}, fmt.Errorf("event %d: %w", idx, err)
	}
	return ev, nil
}

func (d *EventDecoder) wrap(err error) error {
	if errors.Is(err, errEvLimit) {
		return fmt.Errorf("event %d: %w (limit %d bytes); raise the limit with SetMaxEventBytes", d.n, ErrEventTooLarge, d.max)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("event %d: %w: stream ends inside a JSON value", d.n, ErrMalformedEvent)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("event %d: %w: invalid JSON: %w", d.n, ErrMalformedEvent, se)
	}
	return fmt.Errorf("event %d: %w", d.n, err)
}

func (d *EventDecoder) peekNonSpace() (byte, error) {
	for {
		c, err := d.br.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c, d.br.UnreadByte()
	}
}

// DecodeRouterEvents reads a whole stream with EventDecoder; convenient for
// tests and small dumps.
func DecodeRouterEvents(r io.Reader) ([]RouterEvent, error) {
	d := NewEventDecoder(r)
	var out []RouterEvent
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

var errEvLimit = errors.New("read limit reached")

// evLimitedReader fails once more than limit bytes in total have been read,
// which bounds json.Decoder's buffering of a single oversized value.
type evLimitedReader struct {
	r     io.Reader
	read  int64
	limit int64
}

func (l *evLimitedReader) Read(p []byte) (int, error) {
	if l.read >= l.limit {
		return 0, errEvLimit
	}
	if rem := l.limit - l.read; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := l.r.Read(p)
	l.read += int64(n)
	return n, err
}
