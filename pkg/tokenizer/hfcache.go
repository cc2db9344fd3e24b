package tokenizer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Source says where a tokenizer.json was found.
type Source struct {
	// Path is the tokenizer.json file.
	Path string
	// Model is the Hugging Face model id when the file came from the local
	// Hugging Face cache ("" for a plain path).
	Model string
	// Revision is the cache snapshot (commit) the file came from.
	Revision string
}

// String describes the source for "tokenizer: …" notes.
func (s Source) String() string {
	if s.Model == "" {
		return s.Path
	}
	rev := s.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return fmt.Sprintf("%s (Hugging Face cache, snapshot %s: %s)", s.Model, rev, s.Path)
}

// HubCacheDirs returns the Hugging Face hub cache directories to search, in the
// order huggingface_hub itself uses: $HF_HUB_CACHE, then $HF_HOME/hub, then
// $XDG_CACHE_HOME/huggingface/hub, then ~/.cache/huggingface/hub.
func HubCacheDirs(getenv func(string) string) []string {
	var dirs []string
	add := func(d string) {
		if d != "" && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	add(getenv("HF_HUB_CACHE"))
	add(getenv("HUGGINGFACE_HUB_CACHE"))
	if h := getenv("HF_HOME"); h != "" {
		add(filepath.Join(h, "hub"))
	}
	if x := getenv("XDG_CACHE_HOME"); x != "" {
		add(filepath.Join(x, "huggingface", "hub"))
	}
	if home := getenv("HOME"); home != "" {
		add(filepath.Join(home, ".cache", "huggingface", "hub"))
	}
	return dirs
}

// Resolve finds the tokenizer.json named by ref, which is either a path (to the
// file, or to a directory holding tokenizer.json) or a Hugging Face model id such
// as "Qwen/Qwen3-0.6B", optionally with "@revision" (a branch, tag or commit),
// looked up in the local Hugging Face cache only — nothing is downloaded.
func Resolve(ref string, getenv func(string) string) (Source, error) {
	if ref == "" {
		return Source{}, errors.New("no tokenizer given: pass a tokenizer.json path or a model id")
	}
	if st, err := os.Stat(ref); err == nil {
		if st.IsDir() {
			p := filepath.Join(ref, "tokenizer.json")
			if _, err := os.Stat(p); err != nil {
				return Source{}, fmt.Errorf("directory %s has no tokenizer.json", ref)
			}
			return Source{Path: p}, nil
		}
		return Source{Path: ref}, nil
	}
	model, rev, _ := strings.Cut(ref, "@")
	if !looksLikeModelID(model) {
		return Source{}, fmt.Errorf("tokenizer %q: no such file, and not a Hugging Face model id (org/name)", ref)
	}
	return findInCaches(ref, model, rev, getenv, "pass the file's path")
}

// ResolveModelID finds the tokenizer.json of a Hugging Face model id
// ("org/name", optionally "@revision") in the local Hugging Face cache, and
// only there: ref is never taken as a file path. Use it for names that come
// from cluster data (a worker card's model name), which anyone who can write
// that data chooses.
func ResolveModelID(ref string, getenv func(string) string) (Source, error) {
	model, rev, _ := strings.Cut(ref, "@")
	if !looksLikeModelID(model) || strings.HasPrefix(model, ".") || strings.Contains(model, "..") || !safeRevision(rev) {
		return Source{}, fmt.Errorf("model name %q is not a Hugging Face model id (org/name[@revision]), and a name published by the cluster is never read as a file path", ref)
	}
	return findInCaches(ref, model, rev, getenv, "pass --tokenizer with the file's path")
}

// findInCaches looks model@rev up in each Hugging Face hub cache in turn.
func findInCaches(ref, model, rev string, getenv func(string) string, otherwise string) (Source, error) {
	dirs := HubCacheDirs(getenv)
	for _, d := range dirs {
		if src, ok, err := resolveInCache(d, model, rev); err != nil {
			return Source{}, err
		} else if ok {
			return src, nil
		}
	}
	return Source{}, fmt.Errorf("tokenizer %q: no cached tokenizer.json for model %s in %s; download it first "+
		"(e.g. `huggingface-cli download %s tokenizer.json`) or %s",
		ref, model, strings.Join(dirs, ", "), model, otherwise)
}

// safeRevision accepts "" or a branch, tag or commit name that stays inside
// the cache's refs/ and snapshots/ directories.
func safeRevision(rev string) bool {
	if rev == "" {
		return true
	}
	if strings.Contains(rev, "..") || strings.HasPrefix(rev, "/") {
		return false
	}
	return strings.IndexFunc(rev, func(r rune) bool {
		return !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/", r)
	}) < 0
}

func looksLikeModelID(s string) bool {
	org, name, ok := strings.Cut(s, "/")
	return ok && org != "" && name != "" && !strings.Contains(name, "/") && !strings.ContainsAny(s, `\ `)
}

// resolveInCache looks for models--org--name/snapshots/<rev>/tokenizer.json.
func resolveInCache(cache, model, rev string) (Source, bool, error) {
	repo := filepath.Join(cache, "models--"+strings.ReplaceAll(model, "/", "--"))
	if st, err := os.Stat(repo); err != nil || !st.IsDir() {
		return Source{}, false, nil //nolint:nilerr // a model absent from this cache is not an error; the next cache is tried
	}
	snapshots := filepath.Join(repo, "snapshots")
	candidate := func(commit string) (Source, bool) {
		p := filepath.Join(snapshots, commit, "tokenizer.json")
		if _, err := os.Stat(p); err == nil {
			return Source{Path: p, Model: model, Revision: commit}, true
		}
		return Source{}, false
	}
	ref := rev
	if ref == "" {
		ref = "main"
	}
	// A branch or tag name maps to a commit through refs/<name>.
	if data, err := readRegularFile(filepath.Join(repo, "refs", filepath.FromSlash(ref)), 4096); err == nil {
		if src, ok := candidate(strings.TrimSpace(string(data))); ok {
			return src, true, nil
		}
	}
	if rev != "" {
		if src, ok := candidate(rev); ok {
			return src, true, nil
		}
		return Source{}, false, fmt.Errorf("model %s is cached in %s but revision %q has no tokenizer.json", model, repo, rev)
	}
	// No usable refs/main: accept the snapshot holding tokenizer.json if there is
	// exactly one, and refuse to guess between several.
	entries, _ := os.ReadDir(snapshots)
	var found []Source
	for _, e := range entries {
		if src, ok := candidate(e.Name()); ok {
			found = append(found, src)
		}
	}
	switch len(found) {
	case 0:
		return Source{}, false, nil
	case 1:
		return found[0], true, nil
	}
	names := make([]string, len(found))
	for i, f := range found {
		names[i] = f.Revision
	}
	return Source{}, false, fmt.Errorf("model %s has %d cached snapshots with a tokenizer.json (%s) and no refs/main; pick one with %s@<revision>",
		model, len(found), strings.Join(names, ", "), model)
}
