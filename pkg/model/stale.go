package model

import "time"

// StaleSource is a watched data source that stopped answering: what was read
// from it may be out of date until it answers again (then it is re-read).
type StaleSource struct {
	// Kind is the source (SourceEtcd).
	Kind SourceKind
	// Name names it as Status.Detail does ("etcd http://10.0.0.5:2379").
	Name string
	// Reason is what happened ("connection lost, not back within
	// --etcd-dial-timeout 5s").
	Reason string
	// Since is when it was found unreachable.
	Since time.Time
}
