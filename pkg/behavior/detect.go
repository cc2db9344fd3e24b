package behavior

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
)

// Detection is the release a deployment is read at and how it was told.
type Detection struct {
	// Release is what the rules follow; unknown means the newest behaviour.
	Release Release `json:"-"`
	// Version is Release as text ("" when unknown).
	Version string `json:"version,omitempty"`
	// Known is false when nothing told the release (the newest is assumed).
	Known bool `json:"known"`
	// Source says where the release was read, in a phrase for the header line.
	Source string `json:"source"`
	// Override is true when --dynamo-version set it.
	Override bool `json:"override,omitempty"`
	// Seen lists every release the images tell, with where.
	Seen []Sighting `json:"seen,omitempty"`
	// Mixed is true when the pods run more than one release.
	Mixed bool `json:"mixed,omitempty"`
	// Operator is the Dynamo operator's release when one was read.
	Operator string `json:"operator,omitempty"`
	// Via is how it was told: images, manifest, operator, flag or unknown.
	Via string `json:"via"`
}

// Sighting is one release and the pods (or manifest components) whose main
// container image names it.
type Sighting struct {
	Version string   `json:"version"`
	Image   string   `json:"image"`
	Where   []string `json:"where"`
}

// dynamoImageNames are the repository names of Dynamo's own images: a tag on
// one of these is a Dynamo release (another image's tag — vLLM's, a custom
// build's — says nothing about Dynamo's).
var dynamoImageNames = []string{
	"vllm-runtime", "sglang-runtime", "trtllm-runtime", "tensorrtllm-runtime",
	"dynamo", "dynamo-runtime", "dynamo-frontend", "frontend", "kubernetes-operator",
}

// ImageRelease reads the Dynamo release an image reference names: the tag of
// one of Dynamo's images (nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.0, or any
// repository under ai-dynamo/) when it is a version (a suffix such as
// -cuda12 is allowed). ok is false for other images, digests only, latest or
// non-version tags (my-tag).
func ImageRelease(ref string) (Release, bool) {
	if len(ref) > 512 {
		return Release{}, false
	}
	ref, _, _ = strings.Cut(ref, "@")
	repo, tag := ref, ""
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		repo, tag = ref[:i], ref[i+1:]
	}
	if tag == "" {
		return Release{}, false
	}
	name := repo[strings.LastIndex(repo, "/")+1:]
	if !slices.Contains(dynamoImageNames, name) && !strings.Contains(repo, "ai-dynamo/") {
		return Release{}, false
	}
	r, ok := parseVersion(tag)
	return r, ok
}

// Detect tells the release of a deployment. override is --dynamo-version
// ("" to detect). The images of the running worker and frontend pods decide,
// else (no pods: a manifest) the images of the DGD's components, else the
// Dynamo operator's release; with none of them the release is unknown and the
// newest behaviour applies. When the pods run several releases, the
// frontend's decides (it does the routing), else the oldest.
func Detect(dep *model.Deployment, operators []model.Operator, override string) (Detection, error) {
	var d Detection
	if len(operators) > 0 {
		var ops []string
		for _, o := range operators {
			if o.Version != "" {
				ops = append(ops, o.Version)
			}
		}
		slices.Sort(ops)
		d.Operator = strings.Join(slices.Compact(ops), ", ")
	}
	if override != "" {
		r, err := ParseRelease(override)
		if err != nil {
			return d, err
		}
		d.Release, d.Known, d.Override = r, r.Known(), true
		d.Version = r.String()
		d.Source, d.Via = "--dynamo-version "+clip(override), "flag"
		return d, nil
	}
	if dep == nil {
		return d.unknown("no deployment"), nil
	}
	type seen struct {
		rel      Release
		image    string
		where    []string
		frontend bool
	}
	byVersion := map[string]*seen{}
	var other []string
	add := func(image, where string, frontend bool) {
		if image == "" {
			return
		}
		r, ok := ImageRelease(image)
		if !ok {
			other = append(other, image)
			return
		}
		s := byVersion[r.String()]
		if s == nil {
			s = &seen{rel: r, image: image}
			byVersion[r.String()] = s
		}
		s.where = append(s.where, where)
		s.frontend = s.frontend || frontend
	}
	for _, w := range dep.Workers {
		add(w.Image, "pod "+w.Pod, false)
	}
	for _, f := range dep.Frontends {
		add(f.Image, "pod "+f.Pod, true)
	}
	if len(dep.Workers) == 0 && len(dep.Frontends) == 0 {
		for _, c := range dep.Components {
			add(c.Image, "component "+c.Name, strings.EqualFold(c.Type, "frontend"))
		}
	}
	var all []*seen
	for _, s := range byVersion {
		all = append(all, s)
	}
	slices.SortFunc(all, func(a, b *seen) int { return a.rel.Compare(b.rel) })
	for _, s := range all {
		d.Seen = append(d.Seen, Sighting{Version: s.rel.String(), Image: s.image, Where: s.where})
	}
	switch len(all) {
	case 0:
		if d.Operator != "" && !strings.Contains(d.Operator, ",") {
			if r, ok := parseVersion(d.Operator); ok {
				d.Release, d.Known, d.Version = r, true, r.String()
				d.Source, d.Via = "the Dynamo operator's release ("+d.Operator+"): no runtime image names one", "operator"
				return d, nil
			}
		}
		why := "no pod or component image is set"
		if len(other) > 0 {
			slices.Sort(other)
			why = "the images name no Dynamo release (" + examplesOf(slices.Compact(other)) + ")"
		}
		return d.unknown(why), nil
	case 1:
		s := all[0]
		d.Release, d.Known, d.Version = s.rel, true, s.rel.String()
		d.Source, d.Via = fmt.Sprintf("image tag of %s (%s)", countOf(len(s.where), "pod", "pods", s.where), s.image), "images"
		if strings.HasPrefix(s.where[0], "component ") {
			d.Source, d.Via = fmt.Sprintf("image tag of the manifest's components (%s)", s.image), "manifest"
		}
		return d, nil
	}
	d.Mixed = true
	pick := all[0] // the oldest
	for _, s := range all {
		if s.frontend {
			pick = s
			break
		}
	}
	d.Release, d.Known, d.Version = pick.rel, true, pick.rel.String()
	var parts []string
	for _, s := range all {
		parts = append(parts, s.rel.String())
	}
	who := "the oldest"
	if pick.frontend {
		who = "the frontend's"
	}
	d.Source, d.Via = fmt.Sprintf("mixed images (%s); %s is followed", strings.Join(parts, ", "), who), "images"
	return d, nil
}

func (d Detection) unknown(why string) Detection {
	d.Release, d.Known, d.Version, d.Via = Release{}, false, "", "unknown"
	d.Source = "unknown: " + why + "; the newest behaviour is assumed (set --dynamo-version)"
	return d
}

func countOf(n int, one, many string, items []string) string {
	w := many
	if n == 1 {
		w = one
	}
	return fmt.Sprintf("%d %s, e.g. %s", n, w, strings.TrimPrefix(strings.TrimPrefix(items[0], "pod "), "component "))
}

func examplesOf(items []string) string {
	if len(items) <= 2 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:2], ", ") + cmp.Or("", fmt.Sprintf(", and %d more", len(items)-2))
}
