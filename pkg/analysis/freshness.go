package analysis

import (
	"fmt"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// Freshness thresholds: how old data may be before a command warns that it
// may no longer describe the cluster.
const (
	// CaptureStaleAfter is the age past which a capture draws a warning. Within
	// a day a capture still describes the incident it was taken for; beyond
	// it, rollouts, autoscaling and restarts have likely changed the pods,
	// their loads and their KV caches.
	CaptureStaleAfter = 24 * time.Hour
	// SourceLagLimit is how long before the newest read of the same snapshot
	// a live source (kubernetes, etcd, frontend) or a deployment's load
	// metrics may have been read. One collection takes seconds (every read
	// is bounded by a timeout of at most a minute), so a larger gap means the
	// data comes from different moments, e.g. a capture assembled from
	// separate reads: loads and KV contents change within seconds, so they
	// may not belong to the workers shown.
	SourceLagLimit = 5 * time.Minute
)

// StampLayout is how commands print a read time: UTC, to the minute.
const StampLayout = "2006-01-02 15:04"

// Age is how long ago something happened, given the time since: "42s ago",
// "5m ago", "3h ago" (below 48 hours), "5d ago"; "now" when d is negative
// (a clock ahead of this machine's).
func Age(d time.Duration) string {
	if d < 0 {
		return "now"
	}
	return shortDuration(d) + " ago"
}

// Stamp is a read time with its age for people, "2026-11-20 12:03, 5d ago"
// (UTC, StampLayout), measured at now; "" when at is zero. Every command's
// human output shows source times this way.
func Stamp(at, now time.Time) string {
	if at.IsZero() {
		return ""
	}
	return at.UTC().Format(StampLayout) + ", " + Age(now.Sub(at))
}

// FreshnessNotes are warnings about old data in s, measured at now: a
// capture taken more than CaptureStaleAfter ago, and a live source or a
// deployment's load metrics read more than SourceLagLimit before the newest
// read of the snapshot (the capture's own time included). Each says when, how
// old, and what that means (loads are not repeated when the frontend source
// itself lags). Commands put them first among the notes.
func FreshnessNotes(s *model.Snapshot, now time.Time) []model.Note {
	if s == nil {
		return nil
	}
	var notes []model.Note
	var newest time.Time
	var newestKind model.SourceKind
	frontendLags := false
	for _, src := range s.Sources {
		if src.At.After(newest) {
			newest, newestKind = src.At, src.Kind
		}
	}
	for _, src := range s.Sources {
		if src.Kind == model.SourceCapture {
			if !src.At.IsZero() && now.Sub(src.At) > CaptureStaleAfter {
				notes = append(notes, model.Note{Severity: model.NoteWarning, Source: model.SourceCapture, Message: fmt.Sprintf(
					"the capture is %s old (taken %s UTC, more than %s ago): pods, loads and KV caches have likely changed since; this shows the cluster as it was then",
					shortDuration(now.Sub(src.At)), src.At.UTC().Format(StampLayout), shortDuration(CaptureStaleAfter))})
			}
			continue
		}
		if lag := newest.Sub(src.At); !src.At.IsZero() && lag > SourceLagLimit {
			frontendLags = frontendLags || src.Kind == model.SourceFrontend
			notes = append(notes, model.Note{Severity: model.NoteWarning, Source: src.Kind, Message: fmt.Sprintf(
				"%s was read at %s UTC, %s before the newest read (%s, %s): its data is from another moment than the rest and may not match it",
				src.Kind, src.At.UTC().Format(StampLayout), shortDuration(lag), newestKind, newest.UTC().Format(StampLayout))})
		}
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		if d.Load == nil || d.Load.At.IsZero() || frontendLags {
			continue
		}
		if lag := newest.Sub(d.Load.At); lag > SourceLagLimit {
			notes = append(notes, model.Note{Severity: model.NoteWarning, Source: model.SourceFrontend, Deployment: d.Key(), Message: fmt.Sprintf(
				"the loads were scraped at %s UTC, %s before the newest read (%s, %s): they may not match the workers shown",
				d.Load.At.UTC().Format(StampLayout), shortDuration(lag), newestKind, newest.UTC().Format(StampLayout))})
		}
	}
	return notes
}

// shortDuration is d rounded for a sentence: "24h", "12m", "3d".
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
