// Package buildinfo holds the version stamp of the binary, set at link time with
// -ldflags "-X github.com/ai-dynamo/kubectl-dynamo/internal/buildinfo.Version=v1.2.3"
// (and Commit, Date), as goreleaser and `make build` do.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Set by the linker.
var (
	// Version is the release version, e.g. v0.1.0; "dev" for local builds.
	Version = "dev"
	// Commit is the git commit the binary was built from.
	Commit = ""
	// Date is the build date in RFC 3339.
	Date = ""
)

// Info is the version stamp as printed by `kubectl dynamo version`.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"date,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the stamp, filling the commit from the Go build info when the linker
// did not set one (e.g. `go install`).
func Get() Info {
	info := Info{Version: Version, Commit: Commit, Date: Date, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Commit == "" {
					info.Commit = s.Value
				}
			case "vcs.time":
				if info.Date == "" {
					info.Date = s.Value
				}
			}
		}
		if info.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
	}
	return info
}
