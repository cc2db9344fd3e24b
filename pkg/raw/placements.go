package raw

import (
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// PlacementSnapshot is one complete read of the frontend's KV placements: the
// router's view of every worker's cached blocks, per (model, endpoint) source.
type PlacementSnapshot struct {
	SnapshotID uint64
	// Complete is placement_snapshot_end's complete: true when every source's
	// snapshot was read.
	Complete bool
	Sources  []PlacementSource
	// Errors are the placement_source_error lines, each with its source.
	Errors []string
	// Skipped counts the lines of unknown type (newer frontends) and the
	// out-of-order live lines that were ignored; SkippedTypes names them.
	Skipped      int
	SkippedTypes []string
	// Bytes is the size of the snapshot read.
	Bytes  int64
	Source string
	At     time.Time
}

// PlacementSource is one (model, endpoint) source of a placement snapshot.
type PlacementSource struct {
	Model, Namespace, Component, Endpoint string
	// BlockSize is block_size_tokens.
	BlockSize int
	// Cursor is the source's snapshot cursor.
	Cursor uint64
	// Events rebuild the source's KV index (routecore.Index.Apply).
	Events []routecore.RouterEvent
}

// String is "MODEL (NAMESPACE/COMPONENT/ENDPOINT)".
func (s PlacementSource) String() string {
	return s.Model + " (" + s.Namespace + "/" + s.Component + "/" + s.Endpoint + ")"
}
