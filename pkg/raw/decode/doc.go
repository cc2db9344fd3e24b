// Package decode reads Kubernetes objects into pkg/raw's typed objects, by two
// paths that give the same result:
//
//   - from JSON (Decoder: capture files, LIST pages), straight into the typed
//     structs, reading only the fields they hold and skipping the rest
//     without building it; a whole object is never materialised. This is the
//     path every read command takes.
//   - from a whole object (FromObjects: an Object as read, or a manifest), with
//     apimachinery's own accessors and converter: the reference, exactly what
//     Build read before objects were typed (Unstructured.GetLabels,
//     NestedString, runtime.DefaultUnstructuredConverter for pods, …).
//
// The JSON path gives up on anything it does not read exactly as the
// reference does (a pod field the converter would reject or convert in an
// unusual way, a DWM entry encoding/json would decode differently) and hands
// that object, or that part, to the reference path: the equivalence tests and
// fuzz targets (decode_test.go, fuzz_test.go) compare both on every object of
// the examples and fixtures and on mutations of them.
//
// It imports pkg/raw, pkg/jsonscan, pkg/routecore and apimachinery's
// converter (k8s.io/api, k8s.io/apimachinery); pkg/build does not import it.
package decode
