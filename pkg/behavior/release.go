package behavior

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Release is a Dynamo release as far as behaviour depends on it: major, minor
// and patch. The zero value is an unknown release, which every rule reads as
// the newest behaviour (the newest code the plugin was checked against).
type Release struct {
	Major, Minor, Patch int
	// Pre is a pre-release suffix ("dev.1", "rc2"); kept for display only.
	Pre   string
	known bool
	// profile is the routing profile a --dynamo-version profile name selects
	// (legacy-tree-size and legacy-v1.1 behave alike but are named apart).
	profile routecore.Profile
}

// maxVersionText bounds a version string read from a flag, an image tag or a
// card: real ones are far shorter.
const maxVersionText = 64

// ParseRelease reads a release: a version (1.3.0, v1.2, 1.4.0-dev.1, 0.9.1) or a
// routing profile name (latest, legacy-v1.2, legacy-v1.1, pre-clamp,
// legacy-tree-size), which stands for the releases it reproduces (latest: the
// newest, so unknown; legacy-v1.2: 1.2; the others: 1.1). "" is the newest.
func ParseRelease(s string) (Release, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Release{}, nil
	}
	if p, err := routecore.ParseProfile(s); err == nil {
		switch p {
		case routecore.ProfileLatest:
			return Release{profile: p}, nil
		case routecore.ProfileLegacyV1_2:
			return Release{Major: 1, Minor: 2, known: true, profile: p}, nil
		}
		return Release{Major: 1, Minor: 1, known: true, profile: p}, nil
	}
	r, ok := parseVersion(s)
	if !ok {
		return Release{}, fmt.Errorf("%q is neither a Dynamo version (e.g. 1.3.0) nor a profile (%s)", clip(s), profileNames())
	}
	return r, nil
}

// parseVersion reads MAJOR.MINOR[.PATCH][-PRE] with an optional leading v.
func parseVersion(s string) (Release, bool) {
	if len(s) > maxVersionText {
		return Release{}, false
	}
	v := strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	v, pre, _ := strings.Cut(v, "-")
	v, build, _ := strings.Cut(v, "+")
	_ = build
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Release{}, false
	}
	var n [3]int
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 || x > 999 || p != strconv.Itoa(x) {
			return Release{}, false
		}
		n[i] = x
	}
	return Release{Major: n[0], Minor: n[1], Patch: n[2], Pre: pre, known: true}, true
}

// MustRelease is ParseRelease for constants in tables and tests; it panics on
// a bad version.
func MustRelease(s string) Release {
	r, err := ParseRelease(s)
	if err != nil {
		panic(err)
	}
	return r
}

// Known reports whether the release is known (an unknown one follows the
// newest behaviour).
func (r Release) Known() bool { return r.known }

// String is "1.3.0" (or "1.3" when no patch was given and it is 0), "" when
// unknown.
func (r Release) String() string {
	if !r.known {
		return ""
	}
	s := fmt.Sprintf("%d.%d.%d", r.Major, r.Minor, r.Patch)
	if r.Pre != "" {
		s += "-" + r.Pre
	}
	return s
}

// Line is the release line "1.3" ("" when unknown).
func (r Release) Line() string {
	if !r.known {
		return ""
	}
	return fmt.Sprintf("%d.%d", r.Major, r.Minor)
}

// Before reports whether the release is known and older than major.minor.
func (r Release) Before(major, minor int) bool {
	return r.known && (r.Major < major || r.Major == major && r.Minor < minor)
}

// AtLeast reports whether the release is major.minor or newer; an unknown
// release is the newest, so it is.
func (r Release) AtLeast(major, minor int) bool { return !r.Before(major, minor) }

// Is reports whether the release is known and is major.minor.x.
func (r Release) Is(major, minor int) bool {
	return r.known && r.Major == major && r.Minor == minor
}

// Profile is the routing profile (routecore) that reproduces the release's
// selector and hashing: releases before 1.2 the legacy-v1.1 selector, 1.2
// the latest selector with the mm_hash multimodal scheme (#10328 came after
// 1.2.0), later and unknown ones the latest. A profile named on the command
// line is kept as named.
func (r Release) Profile() routecore.Profile {
	switch {
	case r.profile != "":
		return r.profile
	case r.Before(1, 2):
		return routecore.ProfileLegacyV1_1
	case r.Is(1, 2):
		return routecore.ProfileLegacyV1_2
	}
	return routecore.ProfileLatest
}

// Compare orders known releases (unknown ones last, as the newest).
func (r Release) Compare(o Release) int {
	switch {
	case !r.known && !o.known:
		return 0
	case !r.known:
		return 1
	case !o.known:
		return -1
	}
	for _, d := range [][2]int{{r.Major, o.Major}, {r.Minor, o.Minor}, {r.Patch, o.Patch}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func profileNames() string {
	var names []string
	for _, p := range routecore.Profiles() {
		names = append(names, string(p))
	}
	return strings.Join(names, ", ")
}

// clip shortens text from a flag or the cluster for an error message.
func clip(s string) string {
	if len(s) > maxVersionText {
		return s[:maxVersionText] + "…"
	}
	return s
}
