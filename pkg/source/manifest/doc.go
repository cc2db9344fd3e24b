// Package manifest reads manifest files — what kubectl apply -f would be
// given: a multi-document YAML stream, a JSON stream, Lists included — into
// raw.ManifestDoc values that keep where each object and each of its fields
// is (1-based lines), so that a finding can point at file:line. It tells
// empty documents, YAML that is no Kubernetes object, and kubectl dynamo
// capture files apart from objects to check.
//
// The input is someone else's (a pull request): the caller reads it through
// pkg/fileio and checks it with pkg/boundedyaml first; field lines are taken
// from the YAML node tree without expanding aliases. It imports the standard
// library, pkg/raw, pkg/source/capture (the JSON value decoding every source
// shares) and the YAML libraries.
package manifest
