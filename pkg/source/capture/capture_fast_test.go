package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/jsonscan"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
)

// fastSeeds are JSON captures that exercise the fast reader's corners: escaped
// and duplicate keys, case variants json.Unmarshal folds, numbers at every
// boundary of DecodeJSONObject's types, strings json.Unmarshal rewrites, KV
// events in every shape, nested lists and streams.
var fastSeeds = []string{
	`{"apiVersion":"v1","kind":"List","items":[]}`,
	`{"apiVersion":"v1","kind":"List","items":null}`,
	`{"apiVersion":"v1","kind":"List","metadata":{"annotations":{"kubectl-dynamo.io/collected-at":"2026-01-02T03:04:05Z","kubectl-dynamo.io/context":"ctx"}},"items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}]}`,
	`[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}},{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}}]`,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}} {"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"}}`,
	`{"apiVersion":"v1","kind":"PodList","items":[{"apiVersion":"v1","kind":"PodList","items":[{"apiVersion":"v1","kind":"Pod"}]}]}`,
	`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod"}]}]}]}`,
	`{"apiVersion":"v1","kind":"Pod","kind":"Node","metadata":{"name":"dup","name":"dup2"}}`,
	`{"apiVersion":"v1","kin\u0064":"Pod","metadata":{"na\u006de":"esc","\u00e9":"\u00e9t\u00e9","emoji":"\ud83d\ude00","lone":"\ud800","ctl":"a\tb\"c\\d\/e"}}`,
	`{"apiVersion":"v1","Kind":"Pod","kind":"Pod"}`,
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"bad-utf8\":\"\xff\xfe\",\"\xc3\x28\":1}}",
	`{"apiVersion":"v1","kind":"Pod","spec":{"n":[0,-0,1,-1,9223372036854775807,9223372036854775808,-9223372036854775808,-9223372036854775809,18446744073709551615,123456789012345678,1234567890123456789,1.5,-2.5e3,1E2,1e999,-1e999,1e-400,0.0,true,false,null,{},[]]}}`,
	`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"KvEvents","metadata":{"name":"kv","namespace":"ns"},"deployment":"d","blockSize":16,"source":"s","events":[{"worker_id":1,"event":{"event_id":1,"dp_rank":0,"data":"cleared"}},{"worker_id":18446744073709551615,"storage_tier":"device","event":{"event_id":2,"dp_rank":1,"data":{"stored":{"parent_hash":null,"blocks":[{"block_hash":-1,"tokens_hash":18446744073709551615},{"block_hash":3,"tokens_hash":4,"mm_extra_info":null}]}}}},{"worker_id":2,"event":{"event_id":3,"data":{"removed":{"block_hashes":[1,2]}}}}]}]}`,
	`{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"KvEvents","deployment":"d","events":null}`,
	`{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"KvEvents","deployment":"d"}`,
	`{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"KvEvents","deployment":"d","events":[],"events":[{"worker_id":1,"event":{"event_id":1,"data":"cleared"}}]}`,
	`{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"KvEvents","deployment":"d","Events":[{"worker_id":1,"event":{"event_id":1,"data":"cleared"}}]}`,
	`{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"KvEvents","deployment":"d","even\u0074s":[{"worker_id":1,"event":{"event_id":1,"data":"cleared"}}]}`,
	`{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"KvEvents","deployment":"d","events":{}}`,
	`{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"KvEvents","deployment":"d","events":[null]}`,
	`{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"KvEvents","deployment":"","events":[]}`,
	`{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"KvEvents","deployment":"d","blockSize":"16","events":[]}`,
	`{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"EtcdKeyValues","entries":[{"key":"v1/instances/a","value":"{}"}]}`,
	`{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"FrontendMetrics","deployment":"d","text":"dynamo_x 1\n","busyThreshold":"{}"}`,
	`{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"Unknown"}`,
	`{"apiVersion":"kubectl-dynamo.io/v2","kind":"KvEvents","deployment":"d","events":[]}`,
	`{"apiVersion":"v1","kind":"List","items":[1]}`,
	`{"apiVersion":"v1","kind":"List","items":{}}`,
	`{"kind":"Pod"}`,
	`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod"}]`,
	`{"apiVersion":"v1","kind":"Pod","x":01}`,
	`{"apiVersion":"v1","kind":"Pod","x":"a` + "\x01" + `"}`,
	"\xef\xbb\xbf" + `{"apiVersion":"v1","kind":"Pod"}`,
	`apiVersion: v1
kind: Pod
`,
	`  `,
}

// TestFastCaptureMatchesReference reads every seed, example and fixture capture
// (as JSON) with both readers: whenever the fast one accepts, the reference
// one must accept too and return the same Bundle.
func TestFastCaptureMatchesReference(t *testing.T) {
	inputs := map[string][]byte{}
	for i, s := range fastSeeds {
		inputs["seed "+string(rune('A'+i))] = []byte(s)
	}
	files, _ := filepath.Glob("../../../examples/*.yaml")
	more, _ := filepath.Glob("../../../test/fixtures/captures/*.yaml")
	files = append(files, more...)
	if len(files) < 4 {
		t.Fatalf("found %d capture files", len(files))
	}
	for _, f := range files {
		y, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		j, err := yaml.YAMLToJSON(y)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = j
	}
	accepted := 0
	for name, data := range inputs {
		for _, whole := range []bool{false, true} {
			fast, ok := readCaptureFast(data, "file.json", whole)
			slow, err := readCaptureSlow(data, "file.json", "file.json", whole)
			if !ok {
				if strings.HasSuffix(name, ".yaml") {
					t.Errorf("%s: the fast reader gave up on a valid capture", name)
				}
				continue
			}
			if !whole {
				accepted++
			}
			if err != nil {
				t.Errorf("%s: the fast reader accepted what the reference reader rejects (%v)", name, err)
				continue
			}
			if !reflect.DeepEqual(fast, slow) {
				fj, _ := json.Marshal(fast)
				sj, _ := json.Marshal(slow)
				t.Errorf("%s (whole %v): readers differ\nfast: %s\nslow: %s", name, whole, fj, sj)
			}
		}
	}
	// Most seeds are valid captures; the fast reader must take them.
	if accepted < len(files)+15 {
		t.Errorf("the fast reader accepted only %d of %d inputs", accepted, len(inputs))
	}
	// A YAML capture is the reference reader's job, and Parse still reads it.
	if _, ok := readCaptureFast([]byte("apiVersion: v1\nkind: Pod\n"), "", false); ok {
		t.Error("the fast reader took YAML")
	}
	b, err := Parse([]byte("apiVersion: v1\nkind: Pod\n"), "")
	if err != nil || b.Objects.Len() != 1 {
		t.Errorf("YAML capture: %v %v", b, err)
	}
}

// TestFastCaptureErrorsComeFromReference: an invalid capture gets the
// reference reader's message (the fast path never produces errors).
func TestFastCaptureErrorsComeFromReference(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod"}]`, "invalid JSON at byte"},
		{`{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"KvEvents","deployment":"d","events":[null]}`, "event 0"},
		{`{"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"KvEvents","deployment":"d","events":{}}`, "expected deployment, blockSize and events"},
		{`{"apiVersion":"v1","kind":"List","items":[1]}`, "item 1 is not an object"},
	} {
		_, err := Parse([]byte(tc.in), "c.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

// FuzzFastCaptureMatchesReference: whatever the fast reader accepts, the
// reference reader accepts and reads to the same Bundle.
func FuzzFastCaptureMatchesReference(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		for _, whole := range []bool{false, true} {
			fast, ok := readCaptureFast(data, "fuzz", whole)
			if !ok {
				return
			}
			slow, err := readCaptureSlow(data, "fuzz", "fuzz", whole)
			if err != nil {
				t.Fatalf("fast reader accepted, reference rejects: %v", err)
			}
			if !reflect.DeepEqual(fast, slow) {
				fj, _ := json.Marshal(fast)
				sj, _ := json.Marshal(slow)
				t.Fatalf("readers differ (whole %v)\nfast: %s\nslow: %s", whole, fj, sj)
			}
		}
	})
}

// FuzzJSValidateMatchesStdlib: Validate accepts exactly what json.Valid does,
// and Decoder builds what DecodeJSONObject builds.
func FuzzJSValidateMatchesStdlib(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{`"\u12"`, `"\x"`, `-`, `-01`, `1.`, `1e`, `1e+`, `.5`, `tru`, `nul`, `[1,]`, `{"a":1,}`, `{"a"1}`, `[`, `]`, `"abc`, "\"\x7f\x80\"", strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 10000) + strings.Repeat("]", 10000)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		end, ok := jsonscan.Validate(data, 0)
		got := ok && jsonscan.SkipWS(data, end) == len(data)
		if want := json.Valid(data); got != want {
			t.Fatalf("jsValidate = %v, json.Valid = %v for %q", got, want, data)
		}
		if !got || data[jsonscan.SkipWS(data, 0)] != '{' {
			return
		}
		want, err := DecodeJSONObject(data)
		if err != nil {
			t.Fatalf("decodeJSONObject: %v", err)
		}
		d := jsonscan.Decoder{B: data}
		v, next := d.Value(jsonscan.SkipWS(data, 0))
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("jsDecoder = %#v, decodeJSONObject = %#v", v, want)
		}
		if jsonscan.SkipWS(data, next) != len(data) {
			t.Fatalf("jsDecoder stopped at %d of %d", next, len(data))
		}
		// Skipping and member listing agree with the value's extent.
		if jsonscan.Skip(data, jsonscan.SkipWS(data, 0)) != end {
			t.Fatalf("jsSkip disagrees with jsValidate on %q", data)
		}
		if !bytes.Equal(bytes.TrimSpace(data), data[jsonscan.SkipWS(data, 0):end]) {
			t.Fatalf("extent %d of %q", end, data)
		}
	})
}

// decodeAheadList is a List with two Kubernetes objects and one of our own
// kinds (which must not be decoded ahead into maps).
const decodeAheadList = `{"apiVersion":"v1","kind":"List","metadata":{},"items":[
 {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","labels":{"a":"b"}},"spec":{"containers":[{"name":"main"}]}},
 {"apiVersion":"kubectl-dynamo.io/v1alpha1","kind":"KvEvents","metadata":{"name":"kv","namespace":"ns"},"deployment":"d","events":[]},
 {"apiVersion":"v1","kind":"Node","metadata":{"name":"n","labels":{"zone":"z"}}}]}`

func TestDecodeAheadDecodesListItems(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	data := []byte(decodeAheadList)
	v := jsonscan.Validator{B: data, Ends: &jsonscan.Ends{}, EndsDepth: fastEndsDepth}
	a := startDecodeAhead(&v, true)
	if a == nil {
		t.Fatal("no decoder ahead at GOMAXPROCS 2")
	}
	if _, ok := v.Value(0, 0); !ok {
		t.Fatal("invalid test JSON")
	}
	// Let the queue drain (stop would drop what is still queued).
	v.OnObject = nil
	close(a.spans)
	<-a.done
	want := map[int]aheadObject{}
	for _, kind := range []string{`{"apiVersion":"v1","kind":"Pod"`, `{"apiVersion":"v1","kind":"Node"`} {
		at := bytes.Index(data, []byte(kind))
		d := jsonscan.Decoder{B: data}
		m, _ := d.Value(at)
		want[at] = aheadObject{typed: decode.NewDecoder(data, nil).Item(at), whole: m.(map[string]any)}
	}
	if !reflect.DeepEqual(a.out, want) {
		t.Errorf("decoded ahead %v, want the Pod and the Node only: %v", a.out, want)
	}
}

func TestFastCaptureUsesDecodedAhead(t *testing.T) {
	data := []byte(decodeAheadList)
	v := jsonscan.Validator{B: data, Ends: &jsonscan.Ends{}, EndsDepth: fastEndsDepth}
	if _, ok := v.Value(0, 0); !ok {
		t.Fatal("invalid test JSON")
	}
	fr := &fastReader{data: data, ends: v.Ends, rd: captureReader{b: &raw.Bundle{}, whole: true}}
	if !fr.document(0, 0) {
		t.Fatal("document rejected the list")
	}
	node := bytes.Index(data, []byte(`{"apiVersion":"v1","kind":"Node"`))
	sentinel := map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "from-ahead"}}
	fr.ahead = map[int]aheadObject{node: {typed: &raw.Node{TypeMeta: raw.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: raw.ObjectMeta{Name: "from-ahead"}}, whole: sentinel}}
	if !fr.decodeParallel() {
		t.Fatal("decodeParallel failed")
	}
	var names []string
	for _, o := range fr.rd.b.AsRead {
		names = append(names, o["metadata"].(map[string]any)["name"].(string))
	}
	if want := []string{"p", "from-ahead"}; !slices.Equal(names, want) {
		t.Errorf("objects %v, want %v (the Node taken from ahead, in file order)", names, want)
	}
	if n := fr.rd.b.Objects.Nodes; len(n) != 1 || n[0].Name != "from-ahead" {
		t.Errorf("typed nodes %+v, want the one decoded ahead", n)
	}
}

// TestFastCaptureMatchesReferenceAcrossCores reruns the reference comparison
// on one core (no decoding ahead) and on several (decoding ahead racing the
// validator).
func TestFastCaptureMatchesReferenceAcrossCores(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		prev := runtime.GOMAXPROCS(procs)
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), TestFastCaptureMatchesReference)
		runtime.GOMAXPROCS(prev)
	}
}

// shortLen says it holds fewer bytes than it does.
type shortLen struct{ *bytes.Reader }

func (s shortLen) Len() int { return s.Reader.Len() / 3 }

type failAfter struct{ n int }

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("disk on fire")
	}
	n := min(len(p), f.n)
	f.n -= n
	return n, nil
}

func (f *failAfter) Len() int { return 10 }

func TestReadAllLimited(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 5000)
	tests := []struct {
		name    string
		r       io.Reader
		limit   int64
		want    []byte
		wantErr string
	}{
		{"known size", bytes.NewReader(data), 1 << 20, data, ""},
		{"size understated", shortLen{bytes.NewReader(data)}, 1 << 20, data, ""},
		{"cut at the limit", bytes.NewReader(data), 1234, data[:1234], ""},
		{"unknown size", strings.NewReader(string(data)), 1 << 20, data, ""},
		{"read error", &failAfter{n: 25}, 1 << 20, nil, "disk on fire"},
	}
	for _, tt := range tests {
		got, err := readAllLimited(tt.r, tt.limit)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, tt.want) {
			t.Errorf("%s: got %d bytes, %v; want %d bytes", tt.name, len(got), err, len(tt.want))
		}
	}
}
