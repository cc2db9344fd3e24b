// Command gen-docs keeps the generated parts of the documentation in step with
// the code (`make docs`; hack/verify-docs.sh runs it with -check in CI).
//
// docs/compatibility.md is pkg/behavior's table of the Dynamo behaviours that
// changed across releases (behavior.Markdown), rewritten whole.
//
// docs/reference/ gets one page per command of the cobra tree (usage, long help,
// examples, flags), rewritten whole; pages of removed commands are deleted.
//
// README.md and docs/**/*.md may hold generated blocks: a marker line, a fenced
// code block and an end marker.
//
//	<!-- generated: kubectl dynamo topology --from-file examples/prefill-only-zone-required.yaml -->
//	```console
//	…replaced by the command's output…
//	```
//	<!-- end generated -->
//
// The command runs in-process on the real command tree, as a user on a terminal
// without colour would see it: stdout not a TTY, NO_COLOR set, the clock fixed at
// 2026-11-22T12:00:00Z, no kubeconfig (so a block can never read a cluster: use
// --from-file with the examples/), the repository root as working directory. A
// `console` block shows `$ COMMAND`, then stdout and stderr; any other fence
// (json, yaml, none) shows stdout alone. The command may end with `> /dev/null`,
// `2> /dev/null`, `| head -N` and, in console blocks, `; echo $?` (the exit code
// is shown after the output). Several marker lines in a row make one
// console block showing each command in turn. A usage error (unknown flag or
// command, bad value) fails the generator, as does exit code 1 outside a console
// block: hand-write examples of mistakes.
//
// With -check nothing is written: it lists every page or block that differs and
// exits 1.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
)

func main() {
	check := flag.Bool("check", false, "report drift and exit 1 instead of writing")
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	if err := os.Chdir(*root); err != nil {
		fmt.Fprintln(os.Stderr, "gen-docs:", err)
		os.Exit(1)
	}
	drift, err := generate(*check)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen-docs:", err)
		os.Exit(1)
	}
	if *check && len(drift) > 0 {
		fmt.Fprintln(os.Stderr, "generated documentation is out of date:")
		for _, d := range drift {
			fmt.Fprintln(os.Stderr, "  "+d)
		}
		fmt.Fprintln(os.Stderr, "run `make docs` and commit the result")
		os.Exit(1)
	}
	for _, d := range drift {
		fmt.Println("updated", d)
	}
}

// referenceDir is where the CLI reference goes.
const referenceDir = "docs/reference"

// generate renders everything; it writes the files that changed (check false)
// and returns what differed.
func generate(check bool) ([]string, error) {
	var drift []string
	pages, err := referencePages()
	if err != nil {
		return nil, err
	}
	d, err := syncDir(referenceDir, pages, check)
	if err != nil {
		return nil, err
	}
	drift = append(drift, d...)

	d, err = syncFile(compatibilityPage, behavior.Markdown(), check)
	if err != nil {
		return nil, err
	}
	drift = append(drift, d...)

	files, err := markdownFiles()
	if err != nil {
		return nil, err
	}
	for _, file := range files {
		old, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		updated, changed, err := fillBlocks(file, string(old), runCommand)
		if err != nil {
			return nil, err
		}
		for _, c := range changed {
			drift = append(drift, fmt.Sprintf("%s:%d: %s", file, c.line, c.command))
		}
		if updated != string(old) && !check {
			if err := os.WriteFile(file, []byte(updated), 0o644); err != nil {
				return nil, err
			}
		}
	}
	return drift, nil
}

// compatibilityPage is generated from pkg/behavior's table of rules that
// changed across Dynamo releases.
const compatibilityPage = "docs/compatibility.md"

// syncFile makes path hold content; it returns the path when it was missing
// or stale.
func syncFile(path, content string, check bool) ([]string, error) {
	old, err := os.ReadFile(path)
	if err == nil && string(old) == content {
		return nil, nil
	}
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if !check {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	return []string{path}, nil
}

// markdownFiles are README.md and docs/**/*.md outside the reference.
func markdownFiles() ([]string, error) {
	files := []string{"README.md"}
	err := filepath.WalkDir("docs", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path == referenceDir {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files[1:])
	return files, err
}

// syncDir makes dir hold exactly the given files (name → content); it returns
// the files that were missing, stale or extra.
func syncDir(dir string, files map[string]string, check bool) ([]string, error) {
	var drift []string
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	if !check {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	for _, name := range names {
		path := filepath.Join(dir, name)
		old, err := os.ReadFile(path)
		if err == nil && string(old) == files[name] {
			continue
		}
		drift = append(drift, path)
		if !check {
			if err := os.WriteFile(path, []byte(files[name]), 0o644); err != nil {
				return nil, err
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, e := range entries {
		if _, ok := files[e.Name()]; ok || e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		drift = append(drift, path+" (no longer generated)")
		if !check {
			if err := os.Remove(path); err != nil {
				return nil, err
			}
		}
	}
	return drift, nil
}
