// Package boundedyaml decodes YAML that someone else wrote — a manifest in a
// pull request, a capture, an engine profile — in memory proportional to its
// size.
//
// YAML anchors and aliases let a small file stand for a large value: one
// 100 KB string anchored once and aliased 10,000 times is a 130 KB file that
// decodes to 1 GB of JSON, and gigabytes once that JSON becomes objects. The
// YAML library's own guard counts nodes, not bytes, so it lets that file
// through (each alias is one node). This package measures what a document
// expands to — in bytes of JSON and in values, aliases expanded — before it
// is converted, and refuses a document whose expansion exceeds a budget
// proportional to the input's size (BudgetFor): Factor times its size plus a
// floor for small files. A document that does not use aliases expands to
// about its own size and is never refused by the budget.
//
// ToJSON is sigs.k8s.io/yaml.YAMLToJSON within the budget, byte for byte the
// same JSON (the same YAML library, the same conversion); Check verifies a
// multi-document stream without converting it, for callers that convert it
// themselves (it parses only a stream that can hold an anchor at all).
package boundedyaml
