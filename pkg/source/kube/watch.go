package kube

import (
	"context"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
)

// A WATCH goes through client-go's Request.Watch (its retries, its handling of
// a connection closed before the answer, its framing of the event stream), as
// the dynamic client's does, but the object of each event is not decoded: it
// arrives as a RawObject, its JSON, for the watcher to read only what it needs.

// RawObject is the object of a watch event as the API server sent it.
type RawObject struct {
	// JSON is the object, a JSON object with a kind; the watcher owns it.
	JSON []byte
}

// GetObjectKind implements runtime.Object; a RawObject's kind is in its JSON.
func (*RawObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject implements runtime.Object.
func (o *RawObject) DeepCopyObject() runtime.Object {
	return &RawObject{JSON: append([]byte(nil), o.JSON...)}
}

// Watch implements the watcher's API (pkg/source/watch) with one WATCH
// request, as the dynamic client makes it; the events' objects are RawObjects
// (a Status for an ERROR event).
func (k *RESTAPI) Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return k.raw.Get().AbsPath(ListPath(gvr, namespace)).
		SpecificallyVersionedParams(&opts, metav1.ParameterCodec, metav1.SchemeGroupVersion).
		Watch(ctx)
}

// rawConfig is cfg for the REST client whose WATCH events keep their objects'
// JSON: JSON only, like the dynamic client's.
func rawConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.ContentType = "application/json"
	c.AcceptContentTypes = "application/json"
	c.NegotiatedSerializer = rawSerializer
	c.GroupVersion = nil
	c.APIPath = "/if-you-see-this-search-for-the-break" // every request sets AbsPath
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return c
}

// statusScheme knows the envelope of a watch event and metav1.Status.
var statusScheme = runtime.NewScheme()

func init() { metav1.AddToGroupVersion(statusScheme, schema.GroupVersion{Version: "v1"}) }

// rawSerializer decodes the envelope of watch events (metav1.WatchEvent) and
// Status answers as the dynamic client does, and any other object to a
// RawObject.
var rawSerializer = runtime.NewSimpleNegotiatedSerializer(runtime.SerializerInfo{
	MediaType:        "application/json",
	MediaTypeType:    "application",
	MediaTypeSubType: "json",
	EncodesAsText:    true,
	Serializer:       rawDecoder{status: json.NewSerializerWithOptions(json.DefaultMetaFactory, statusScheme, statusScheme, json.SerializerOptions{})},
	StreamSerializer: &runtime.StreamSerializerInfo{
		EncodesAsText: true,
		Serializer:    json.NewSerializerWithOptions(json.DefaultMetaFactory, statusScheme, statusScheme, json.SerializerOptions{}),
		Framer:        json.Framer,
	},
})

// rawDecoder is rawSerializer's object decoder.
type rawDecoder struct{ status runtime.Serializer }

// Decode returns a Status (kind Status, as client-go's error handling and the
// watcher's ERROR events need) decoded, any other JSON object as a RawObject.
// Like the dynamic client's decoder, it fails on what is not a JSON object
// with a kind.
func (d rawDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	kind, apiVersion, err := topKind(data)
	if err != nil {
		return nil, nil, err
	}
	if kind == "Status" && (apiVersion == "v1" || apiVersion == "") {
		return d.status.Decode(data, defaults, into)
	}
	if kind == "" {
		return nil, nil, fmt.Errorf("object 'Kind' is missing in '%.200s'", data)
	}
	gv, _ := schema.ParseGroupVersion(apiVersion) // (the watcher reads no kind)
	gvk := gv.WithKind(kind)
	return &RawObject{JSON: data}, &gvk, nil
}

// Encode implements runtime.Encoder; the watcher never sends objects.
func (rawDecoder) Encode(runtime.Object, io.Writer) error {
	return errors.New("the raw JSON client only reads")
}

// Identifier implements runtime.Encoder.
func (rawDecoder) Identifier() runtime.Identifier { return "kubectl-dynamo-raw-json" }

// topKind reads the kind and apiVersion of the JSON object data (strings; ""
// when absent or another value, the last occurrence of a repeated key).
func topKind(data []byte) (kind, apiVersion string, err error) {
	var ends jsonscan.Ends
	v := jsonscan.Validator{B: data, Ends: &ends, EndsDepth: 0}
	i := jsonscan.SkipWS(data, 0)
	end, ok := v.Value(i, 0)
	if !ok || jsonscan.SkipWS(data, end) != len(data) {
		return "", "", errors.New("the object of a watch event is not JSON")
	}
	if data[i] != '{' {
		return "", "", errors.New("the object of a watch event is not a JSON object")
	}
	o := jsonscan.NewObj(&ends, data, i)
	for o.Next() {
		var s *string
		switch o.Key() {
		case "kind":
			s = &kind
		case "apiVersion":
			s = &apiVersion
		default:
			continue
		}
		*s = ""
		if data[o.Val] == '"' {
			*s = jsonscan.String(data, o.Val, jsonscan.SkipKnown(&ends, data, o.Val))
		}
	}
	return kind, apiVersion, nil
}
