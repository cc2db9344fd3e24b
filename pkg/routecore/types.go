package routecore

import "strconv"

// WorkerID identifies a Dynamo worker instance (its discovery instance or lease id).
// Ids are full 64-bit values and regularly exceed 2^53, so they must never pass
// through float64; use strconv or the String method to print them.
type WorkerID uint64

// String returns the decimal form of the id.
func (w WorkerID) String() string { return strconv.FormatUint(uint64(w), 10) }

// LocalBlockHash is the XXH3 hash of one block's tokens (Dynamo's LocalBlockHash,
// also called tokens_hash). The radix index is keyed by it.
type LocalBlockHash uint64

// SequenceHash is the chained hash of a block and all blocks before it (Dynamo's
// ExternalSequenceBlockHash when computed by the router; engines may publish their
// own opaque values in that role).
type SequenceHash uint64

// WorkerWithDpRank is one routing candidate: a worker and one of its data-parallel ranks.
type WorkerWithDpRank struct {
	WorkerID WorkerID `json:"workerId"`
	DpRank   uint32   `json:"dpRank"`
}

// Less orders candidates canonically, by worker id then dp rank. Every routecore
// output that lists candidates uses this order, never map order.
func (a WorkerWithDpRank) Less(b WorkerWithDpRank) bool {
	if a.WorkerID != b.WorkerID {
		return a.WorkerID < b.WorkerID
	}
	return a.DpRank < b.DpRank
}

// Compare returns -1, 0 or +1 in canonical order (for slices.SortFunc).
func (a WorkerWithDpRank) Compare(b WorkerWithDpRank) int {
	switch {
	case a.Less(b):
		return -1
	case b.Less(a):
		return 1
	}
	return 0
}

// String renders the candidate as "<worker>/<rank>".
func (a WorkerWithDpRank) String() string {
	return a.WorkerID.String() + "/" + strconv.FormatUint(uint64(a.DpRank), 10)
}
