package trace

// The pinned outputs of TokensForHashIDs([]uint64{0, 1, 1 << 63}, 7, 3, nil),
// computed from the formula in tokens.go by an independent Python script, and
// of the first synthetic request for seed 1.
const (
	pinned0, pinned1, pinned2, pinned3, pinned4, pinned5, pinned6 = 82175, 79067, 119289, 72468, 6339, 88053, 119121

	pinnedSynthetic = "96.115844ms 372 28 [123238 93622 60990] 975"
)
