package health

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
)

// Options tune FindingsWith.
type Options struct {
	// DynamoVersion is the Dynamo release the deployment runs (--dynamo-version:
	// 1.3.0, v1.2, or a profile name); "" means the newest behaviour.
	DynamoVersion string
	// Profile is the compatibility profile (routecore.Profile) the version
	// selects, when the caller resolved one; a legacy profile without a
	// DynamoVersion stands for the releases before 1.2.
	Profile routecore.Profile
}

// release is a Dynamo release as far as the rules need it: major and minor.
// The zero value (known false) is the newest behaviour.
type release struct {
	known        bool
	major, minor int
	text         string
}

// ParseRelease checks a --dynamo-version value: a version (1.3.0, v1.2,
// 1.4.0-dev.1) or a profile name (routecore.ParseProfile). It is what
// FindingsWith accepts in Options.DynamoVersion.
func ParseRelease(s string) error {
	_, err := parseRelease(s, "")
	return err
}

func parseRelease(s string, p routecore.Profile) (release, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		switch {
		case p == routecore.ProfileLegacyV1_2:
			// The 1.2 releases.
			return release{known: true, major: 1, minor: 2, text: "profile " + string(p)}, nil
		case p != "" && p != routecore.ProfileLatest:
			// The other legacy profiles are the releases before 1.2.
			return release{known: true, major: 1, minor: 1, text: "profile " + string(p)}, nil
		}
		return release{}, nil
	}
	if prof, err := routecore.ParseProfile(s); err == nil {
		return parseRelease("", prof)
	}
	v := strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 || len(s) > 64 {
		return release{}, fmt.Errorf("%q is neither a Dynamo version (e.g. 1.3.0) nor a profile", s)
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.SplitN(parts[1], "-", 2)[0])
	if err1 != nil || err2 != nil || major < 0 || minor < 0 || major > 999 || minor > 999 {
		return release{}, fmt.Errorf("%q is neither a Dynamo version (e.g. 1.3.0) nor a profile", s)
	}
	return release{known: true, major: major, minor: minor, text: "Dynamo " + s}, nil
}

// before reports whether the release is known and older than major.minor.
func (r release) before(major, minor int) bool {
	return r.known && (r.major < major || r.major == major && r.minor < minor)
}

// is reports whether the release is known and is major.minor.x.
func (r release) is(major, minor int) bool {
	return r.known && r.major == major && r.minor == minor
}

// name is "Dynamo 1.3.0" for a known release, "" otherwise.
func (r release) name() string { return r.text }
