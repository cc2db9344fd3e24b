package raw

// ManifestDoc is one document of a manifest file (or one item of a List
// document), as pkg/source/manifest reads it: the object and where it is.
type ManifestDoc struct {
	// Source is the file ("-" for stdin).
	Source string
	// Line is the 1-based line where the document (or List item) starts.
	Line int
	// Object is the decoded object; nil when Skip says why there is none.
	Object map[string]any
	// Fields maps a field path (spec.components[1].name,
	// spec.services.Worker.replicas, …limits.nvidia.com/gpu) to the 1-based
	// line of its key (or list item) in Source; it is filled for the objects
	// Lines was asked for.
	Fields map[string]int
	// Skip says why a document carries no object to check ("empty", "not a
	// Kubernetes object (no apiVersion and kind)"); "" for an object.
	Skip string
}

// ManifestFile is one file of manifests.
type ManifestFile struct {
	Source string
	Docs   []ManifestDoc
	// Capture is true when the file is a kubectl dynamo capture (a List
	// annotated kubectl-dynamo.io/collected-at, or one holding
	// kubectl-dynamo.io kinds): its objects are observations of a cluster,
	// not manifests to apply.
	Capture bool
}
