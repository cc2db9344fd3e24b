package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

func TestAgeAndStamp(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		at        time.Time
		age, want string
	}{
		{time.Time{}, "", ""},
		{now.Add(30 * time.Second), "now", "2026-11-22 12:00, now"},
		{now, "0s ago", "2026-11-22 12:00, 0s ago"},
		{now.Add(-59 * time.Second), "59s ago", "2026-11-22 11:59, 59s ago"},
		{now.Add(-12 * time.Minute), "12m ago", "2026-11-22 11:48, 12m ago"},
		{now.Add(-47*time.Hour - 57*time.Minute), "47h ago", "2026-11-20 12:03, 47h ago"},
		{now.Add(-5*24*time.Hour + 3*time.Minute), "4d ago", "2026-11-17 12:03, 4d ago"},
		{now.Add(-5 * 24 * time.Hour), "5d ago", "2026-11-17 12:00, 5d ago"},
		// Another zone prints in UTC.
		{time.Date(2026, 11, 22, 13, 0, 0, 0, time.FixedZone("CET", 3600)), "0s ago", "2026-11-22 12:00, 0s ago"},
	}
	for _, tt := range tests {
		if got := Stamp(tt.at, now); got != tt.want {
			t.Errorf("Stamp(%v) = %q, want %q", tt.at, got, tt.want)
		}
		if tt.at.IsZero() {
			continue
		}
		if got := Age(now.Sub(tt.at)); got != tt.age {
			t.Errorf("Age(%v) = %q, want %q", now.Sub(tt.at), got, tt.age)
		}
	}
}

func TestFreshnessNotes(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	dep := func(load time.Time) model.Deployment {
		return model.Deployment{Namespace: "serving", Name: "llm", Load: &model.LoadInfo{Source: "frontend /metrics", At: load}}
	}
	tests := []struct {
		name string
		snap *model.Snapshot
		// want are the notes as "source deployment: message prefix".
		want []string
	}{
		{"nil snapshot", nil, nil},
		{"live, all read together", &model.Snapshot{Sources: []model.SourceStatus{
			{Kind: model.SourceKubernetes, At: ago(3 * time.Second)}, {Kind: model.SourceFrontend, At: now}}, Deployments: []model.Deployment{dep(now)}}, nil},
		{"capture of a day ago is fine", &model.Snapshot{Sources: []model.SourceStatus{{Kind: model.SourceCapture, At: ago(CaptureStaleAfter)}}}, nil},
		{"capture older than a day", &model.Snapshot{Sources: []model.SourceStatus{{Kind: model.SourceCapture, At: ago(47*time.Hour + 57*time.Minute)}}},
			[]string{"capture : the capture is 47h old (taken 2026-11-20 12:03 UTC, more than 24h ago): pods, loads and KV caches have likely changed since"}},
		{"capture five days old", &model.Snapshot{Sources: []model.SourceStatus{{Kind: model.SourceCapture, At: ago(5 * 24 * time.Hour)}}},
			[]string{"capture : the capture is 5d old (taken 2026-11-17 12:00 UTC"}},
		{"capture without a time", &model.Snapshot{Sources: []model.SourceStatus{{Kind: model.SourceCapture}}}, nil},
		{"a source within the lag limit", &model.Snapshot{Sources: []model.SourceStatus{
			{Kind: model.SourceKubernetes, At: ago(SourceLagLimit)}, {Kind: model.SourceEtcd, At: now}}}, nil},
		{"etcd read long before the rest", &model.Snapshot{Sources: []model.SourceStatus{
			{Kind: model.SourceKubernetes, At: ago(time.Minute)}, {Kind: model.SourceEtcd, At: ago(20 * time.Minute)}, {Kind: model.SourceFrontend, At: ago(time.Minute)}}},
			[]string{"etcd : etcd was read at 2026-11-22 11:40 UTC, 19m before the newest read (kubernetes, 2026-11-22 11:59)"}},
		{"loads older than the capture", &model.Snapshot{Sources: []model.SourceStatus{{Kind: model.SourceCapture, At: ago(time.Hour)}},
			Deployments: []model.Deployment{dep(ago(2 * time.Hour))}},
			[]string{"frontend serving/llm: the loads were scraped at 2026-11-22 10:00 UTC, 1h before the newest read (capture, 2026-11-22 11:00)"}},
		{"a lagging frontend is said once, not per deployment", &model.Snapshot{Sources: []model.SourceStatus{
			{Kind: model.SourceKubernetes, At: now}, {Kind: model.SourceFrontend, At: ago(time.Hour)}}, Deployments: []model.Deployment{dep(ago(time.Hour))}},
			[]string{"frontend : frontend was read at 2026-11-22 11:00 UTC, 1h before"}},
		{"an old capture whose sources lag too", &model.Snapshot{Sources: []model.SourceStatus{
			{Kind: model.SourceKubernetes, At: ago(72 * time.Hour)}, {Kind: model.SourceFrontend, At: ago(80 * time.Hour)}, {Kind: model.SourceCapture, At: ago(72 * time.Hour)}}},
			[]string{"frontend : frontend was read at 2026-11-19 04:00 UTC, 8h before the newest read (kubernetes, 2026-11-19 12:00)", "capture : the capture is 3d old"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FreshnessNotes(tt.snap, now)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d notes %+v, want %d %q", len(got), got, len(tt.want), tt.want)
			}
			for i, n := range got {
				line := string(n.Source) + " " + n.Deployment + ": " + n.Message
				if n.Severity != model.NoteWarning || !strings.HasPrefix(line, tt.want[i]) {
					t.Errorf("note %d = %s %q, want a warning starting %q", i, n.Severity, line, tt.want[i])
				}
			}
		})
	}
}
