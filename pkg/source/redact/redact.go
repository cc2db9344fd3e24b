package redact

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw/decode"
)

// Redacted replaces every secret value removed from a capture.
const Redacted = "REDACTED"

// Options tune Redact.
type Options struct {
	// Secrets are literal values to remove wherever they appear (for example the
	// etcd password or the kubeconfig's bearer token). Values shorter than 4
	// characters are ignored: replacing them would mangle unrelated text.
	Secrets []string
}

// Annotations dropped from every object: they repeat the whole spec as last
// applied, secrets included.
var droppedAnnotations = []string{
	"kubectl.kubernetes.io/last-applied-configuration",
}

// Redact returns a copy of b that is safe to attach to a bug report. b is not
// changed. It redacts the objects as read (b.AsRead, which the capture writer
// writes) and types the copy's Objects from them again: a bundle read without
// its objects whole has none left. It removes:
//
//   - Secret objects (never captured at all);
//   - metadata.managedFields and the last-applied-configuration annotation;
//   - the value of every environment variable whose name looks secret (TOKEN,
//     PASSWORD, PASS, SECRET, KEY, CREDENTIAL, AUTH, COOKIE, DSN, … as a word of
//     the name, e.g. HF_TOKEN, DB_PASS) or that is backed by a secretKeyRef — the
//     references themselves (secretKeyRef, envFrom secretRef, secret volumes)
//     are kept as names;
//   - the value of every object key with such a name, at any depth and whatever
//     its type (nats_password: 987654321012, tokens: [...]; an object under such
//     a key is searched by its own keys);
//   - the same inside JSON held in strings (annotations such as
//     kapp.k14s.io/original, etcd values, frontend bodies), decoded with exact
//     numbers and encoded again only when something was removed;
//   - values of secret-looking command-line flags in args and command
//     (--token=…, --api-key …), shell assignments (HF_TOKEN=… in sh -c), HTTP
//     Authorization headers and bearer tokens, JWTs (service-account tokens),
//     Hugging Face tokens (hf_…) and passwords in URLs (user:password@host),
//     wherever they occur: objects, etcd values, metrics, notes;
//   - every literal in o.Secrets.
//
// Each removed value becomes "REDACTED".
func Redact(b *raw.Bundle, o Options) *raw.Bundle {
	if b == nil {
		return nil
	}
	r := &redactor{}
	for _, s := range o.Secrets {
		if len(s) >= 4 {
			r.literals = append(r.literals, s)
		}
	}
	// Longest first, so that a secret containing another is removed whole.
	slices.SortFunc(r.literals, func(a, b string) int { return len(b) - len(a) })

	out := *b
	out.AsRead = nil
	for _, m := range b.AsRead {
		if c := r.object(&unstructured.Unstructured{Object: m}); c != nil {
			out.AsRead = append(out.AsRead, c.Object)
		}
	}
	out.Objects = decode.FromObjects(out.AsRead)
	out.Etcd = make([]raw.EtcdKeyValue, len(b.Etcd))
	for i, kv := range b.Etcd {
		out.Etcd[i] = raw.EtcdKeyValue{Key: r.str(kv.Key), Value: r.text(kv.Value)}
	}
	out.Metrics = slices.Clone(b.Metrics)
	for i := range out.Metrics {
		out.Metrics[i].Text = r.str(out.Metrics[i].Text)
		out.Metrics[i].Source = r.str(out.Metrics[i].Source)
	}
	out.BusyThresholds = slices.Clone(b.BusyThresholds)
	for i := range out.BusyThresholds {
		out.BusyThresholds[i].JSON = r.text(out.BusyThresholds[i].JSON)
		out.BusyThresholds[i].Source = r.str(out.BusyThresholds[i].Source)
	}
	out.KvEvents = slices.Clone(b.KvEvents)
	for i := range out.KvEvents {
		out.KvEvents[i].Source = r.str(out.KvEvents[i].Source)
	}
	// Router log excerpts are re-written already (pkg/audit.Excerpt: only the
	// fields the audit reads, pseudonymous request ids); the literal secrets
	// are removed from them all the same.
	out.RouterLogs = slices.Clone(b.RouterLogs)
	for i := range out.RouterLogs {
		l := &out.RouterLogs[i]
		l.Source = r.str(l.Source)
		lines := make([]string, len(l.Lines))
		for j, line := range l.Lines {
			lines[j] = r.str(line)
		}
		l.Lines = lines
	}
	out.Sources = slices.Clone(b.Sources)
	for i := range out.Sources {
		out.Sources[i].Detail = r.str(out.Sources[i].Detail)
		out.Sources[i].Message = r.str(out.Sources[i].Message)
	}
	out.Notes = slices.Clone(b.Notes)
	for i := range out.Notes {
		out.Notes[i].Message = r.str(out.Notes[i].Message)
	}
	out.Context = r.str(b.Context)
	return &out
}

// Object returns a redacted copy of u, or nil when u must not be captured
// at all (a Secret). See Redact.
func Object(u *unstructured.Unstructured, o Options) *unstructured.Unstructured {
	b := Redact(&raw.Bundle{AsRead: []raw.Object{u.Object}}, o)
	if len(b.AsRead) == 0 {
		return nil
	}
	return &unstructured.Unstructured{Object: b.AsRead[0]}
}

type redactor struct {
	literals []string
}

// object redacts a deep copy of u; nil drops it.
func (r *redactor) object(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	if u.GetKind() == "Secret" && (u.GetAPIVersion() == "v1" || u.GetAPIVersion() == "") {
		return nil
	}
	c := u.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	if ann := c.GetAnnotations(); ann != nil {
		for _, k := range droppedAnnotations {
			delete(ann, k)
		}
		for k, v := range ann {
			if secretName(k, false) {
				ann[k] = Redacted
			} else {
				ann[k] = r.text(v)
			}
		}
		if len(ann) == 0 {
			unstructured.RemoveNestedField(c.Object, "metadata", "annotations")
		} else {
			c.SetAnnotations(ann)
		}
	}
	c.Object = r.value(c.Object, "").(map[string]any)
	return c
}

// value redacts v in place where possible and returns it; key is the map key
// holding v ("" at the top or in lists).
func (r *redactor) value(v any, key string) any {
	switch t := v.(type) {
	case map[string]any:
		r.envVar(t)
		for k, x := range t {
			if k == "annotations" {
				continue // handled by object
			}
			if secretField(k) && !emptyValue(x) {
				t[k] = redactSecretValue(r, x)
				continue
			}
			t[k] = r.value(x, k)
		}
		return t
	case []any:
		isArgs := key == "args" || key == "command"
		for i, x := range t {
			if isArgs && i > 0 {
				if prev, ok := t[i-1].(string); ok && secretFlag(prev) {
					if s, ok := x.(string); ok && !strings.HasPrefix(s, "-") {
						t[i] = Redacted
						continue
					}
				}
			}
			t[i] = r.value(x, "")
		}
		return t
	case string:
		return r.text(t)
	}
	return v
}

// redactSecretValue redacts the value of a secret-named key whatever its type:
// a scalar (string, number, true) becomes Redacted, every scalar of a list too
// (tokens: [...]); an object is searched by its own keys, because Kubernetes
// keeps references under such names (a volume's secret: {secretName: …}).
func redactSecretValue(r *redactor, x any) any {
	switch t := x.(type) {
	case map[string]any:
		return r.value(t, "")
	case []any:
		for i, e := range t {
			if _, isMap := e.(map[string]any); isMap {
				t[i] = r.value(e, "")
			} else if !emptyValue(e) {
				t[i] = Redacted
			}
		}
		return t
	}
	return Redacted
}

// emptyValue reports values with nothing to hide (absent, "", false-y
// placeholders are kept so the shape of a config stays readable).
func emptyValue(x any) bool {
	switch t := x.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case bool:
		return !t
	}
	return false
}

// text redacts a string that may hold a JSON object or array (an annotation
// such as kapp.k14s.io/original, an etcd value, a frontend body): it is decoded
// (numbers kept exact), redacted like an object, by key name at any depth, and
// encoded again only when something was removed; then the free-text rules run
// over it.
func (r *redactor) text(s string) string {
	if j, ok := r.embeddedJSON(s); ok {
		s = j
	} else if y, ok := r.embeddedYAML(s); ok {
		s = y
	}
	return r.str(s)
}

// maxEmbeddedYAML bounds the strings decoded as embedded YAML (decoding YAML
// costs far more than JSON; aliases are bounded by the decoder).
const maxEmbeddedYAML = 1 << 20

// embeddedYAML redacts a string holding a YAML mapping or sequence (a config
// file passed in an env var or annotation: "auth:\n  password: …"), by key name
// at any depth, like embedded JSON; it is encoded again only when something
// was removed. Only multi-line text that has a "key: value" line or a list
// item is tried, so that ordinary text is never reformatted.
func (r *redactor) embeddedYAML(s string) (out string, ok bool) {
	if len(s) > maxEmbeddedYAML || !strings.Contains(s, "\n") {
		return "", false
	}
	if !strings.Contains(s, ": ") && !strings.Contains(s, ":\n") && !strings.Contains(s, "- ") {
		return "", false
	}
	defer func() {
		if recover() != nil { // a decoder panic on hostile text must not lose the capture
			out, ok = "", false
		}
	}()
	j, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	switch v.(type) {
	case map[string]any, []any:
	default:
		return "", false
	}
	before, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	red := r.value(v, "")
	after, err := json.Marshal(red)
	if err != nil || bytes.Equal(before, after) {
		return "", false
	}
	y, err := yaml.JSONToYAML(after)
	if err != nil {
		return "", false
	}
	return string(y), true
}

// maxEmbeddedJSON bounds the strings decoded as embedded JSON.
const maxEmbeddedJSON = 64 << 20

func (r *redactor) embeddedJSON(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if len(t) < 2 || len(t) > maxEmbeddedJSON || (t[0] != '{' && t[0] != '[') {
		return "", false
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return "", false
	}
	before, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	red := r.value(v, "")
	after, err := json.Marshal(red)
	if err != nil || bytes.Equal(before, after) {
		return "", false // nothing removed: keep the original text as it was
	}
	return string(after), true
}

// envVar redacts the value of an env entry ({name, value[, valueFrom]}) whose
// name looks secret or that is backed by a Secret.
func (r *redactor) envVar(m map[string]any) {
	name, ok := m["name"].(string)
	if !ok {
		return
	}
	_, hasValue := m["value"]
	vf, hasFrom := m["valueFrom"].(map[string]any)
	if !hasValue && !hasFrom {
		return
	}
	secretBacked := false
	if hasFrom {
		_, secretBacked = vf["secretKeyRef"]
	}
	if s, ok := m["value"].(string); ok && s != "" && (secretBacked || secretWords(name)) {
		m["value"] = Redacted
	}
}

var (
	urlUserinfoRE = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)([^/\s:@"']+):([^/\s@"']+)@`)
	authHeaderRE  = regexp.MustCompile(`(?i)\b(authorization|x-api-key|api-key)(["']?\s*[:=]\s*["']?)((?:bearer|basic|token)\s+)?([^\s"',;\\]+)`)
	bearerRE      = regexp.MustCompile(`(?i)\b(bearer)(\s+)([A-Za-z0-9\-._~+/]+=*)`)
	flagRE        = regexp.MustCompile(`(--?[A-Za-z][A-Za-z0-9_-]*)(=|\s+)("[^"]*"|'[^']*'|[^\s"'\\]+)`)
	shellAssignRE = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|'[^']*'|[^\s"'\\;&|]+)`)
	hfTokenRE     = regexp.MustCompile(`\bhf_[A-Za-z0-9]{16,}\b`)
	jwtRE         = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}`)
)

// str removes secrets from free text.
func (r *redactor) str(s string) string {
	if s == "" {
		return s
	}
	for _, l := range r.literals {
		s = strings.ReplaceAll(s, l, Redacted)
	}
	s = urlUserinfoRE.ReplaceAllString(s, "${1}${2}:"+Redacted+"@")
	s = authHeaderRE.ReplaceAllString(s, "${1}${2}${3}"+Redacted)
	s = bearerRE.ReplaceAllString(s, "${1}${2}"+Redacted)
	s = hfTokenRE.ReplaceAllString(s, Redacted)
	s = jwtRE.ReplaceAllString(s, Redacted)
	if strings.Contains(s, "-") {
		s = flagRE.ReplaceAllStringFunc(s, func(m string) string {
			sub := flagRE.FindStringSubmatch(m)
			if !secretFlag(sub[1]) || strings.HasPrefix(sub[3], "-") {
				return m
			}
			return sub[1] + sub[2] + Redacted
		})
	}
	if strings.Contains(s, "=") {
		s = shellAssignRE.ReplaceAllStringFunc(s, func(m string) string {
			sub := shellAssignRE.FindStringSubmatch(m)
			if !secretWords(sub[1]) || sub[2] == Redacted {
				return m
			}
			return sub[1] + "=" + Redacted
		})
	}
	return s
}

// secretWordSet are the words that make a name secret.
var secretWordSet = map[string]bool{
	"token": true, "password": true, "passwd": true, "pwd": true, "secret": true, "apikey": true,
	"credential": true, "credentials": true, "creds": true, "auth": true, "authorization": true, "bearer": true,
	"passphrase": true, "pass": true, "cookie": true, "cookies": true, "dsn": true, "privatekey": true,
}

// nonSecretKeyQualifiers make a "key" word in a flag name refer to something
// that is not a secret (--label-key, --etcd-key and --tls-key take a label or
// a file path); any other "key" in a flag counts (--openai-key, --hf-key).
var nonSecretKeyQualifiers = map[string]bool{
	"label": true, "node": true, "topology": true, "sort": true, "routing": true, "cache": true, "hash": true,
	"partition": true, "group": true, "etcd": true, "tls": true, "ssl": true, "cert": true, "client": true,
	"kv": true, "block": true, "prefix": true, "index": true, "lookup": true, "shard": true, "map": true,
}

// keyQualifiers make "key" secret in field and flag names (api-key, accessKey,
// private_key); a bare "key" there is usually a label or map key.
var keyQualifiers = map[string]bool{
	"api": true, "access": true, "private": true, "secret": true, "client": true, "encryption": true,
	"signing": true, "ssh": true, "master": true, "account": true, "auth": true, "hmac": true, "license": true,
}

// nonSecretLastWords end names that refer to a secret or describe one rather
// than hold it (SECRET_NAME, tokenFile, eos_token_id, max_tokens_limit).
var nonSecretLastWords = map[string]bool{
	"name": true, "ref": true, "path": true, "file": true, "dir": true, "mount": true, "enabled": true,
	"id": true, "ids": true, "count": true, "type": true, "kind": true, "len": true, "length": true,
	"limit": true, "size": true, "threshold": true, "frac": true, "ttl": true, "secs": true, "seconds": true,
}

// words splits an identifier (HF_TOKEN, apiKey, --api-key, x.y) into lower-case words.
func words(s string) []string {
	s = strings.TrimLeft(s, "-")
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, c := range rs {
		switch {
		case c == '_' || c == '-' || c == '.' || c == '/' || c == ' ':
			flush()
		case c >= 'A' && c <= 'Z' && i > 0 && rs[i-1] >= 'a' && rs[i-1] <= 'z':
			flush()
			cur = append(cur, c)
		default:
			cur = append(cur, c)
		}
	}
	flush()
	return out
}

// secretName reports whether a name looks like it holds a secret: one of its
// words is TOKEN, PASSWORD, SECRET, CREDENTIAL, AUTH, … (TOKENIZER or MAX_TOKENS
// do not count) and its last word is not NAME, REF, PATH, FILE, ID, … (which name
// or describe a secret rather than hold it). KEY counts everywhere when anyKey is
// set (environment variables), else only after API, ACCESS, PRIVATE, ….
func secretName(name string, anyKey bool) bool { return secretNameMode(name, keyModeFor(anyKey)) }

// keyMode says when the word KEY makes a name secret.
type keyMode int

const (
	keyQualified keyMode = iota // object fields: only after API, ACCESS, PRIVATE, … (a bare key is a label key)
	keyAny                      // environment and shell variables: always
	keyFlag                     // flags: unless after LABEL, ETCD, TLS, … (nonSecretKeyQualifiers)
)

func keyModeFor(anyKey bool) keyMode {
	if anyKey {
		return keyAny
	}
	return keyQualified
}

func secretNameMode(name string, mode keyMode) bool {
	ws := words(name)
	if len(ws) == 0 || nonSecretLastWords[ws[len(ws)-1]] {
		return false
	}
	for i, w := range ws {
		if secretWordSet[w] {
			return true
		}
		if w != "key" {
			continue
		}
		switch mode {
		case keyAny:
			return true
		case keyQualified:
			if i > 0 && keyQualifiers[ws[i-1]] {
				return true
			}
		case keyFlag:
			if i == 0 || !nonSecretKeyQualifiers[ws[i-1]] {
				return true
			}
		}
	}
	return false
}

// secretWords is secretName for environment variable and shell variable names,
// where any KEY word counts (API_KEY, AWS_SECRET_ACCESS_KEY, NGC_KEY).
func secretWords(name string) bool { return secretName(name, true) }

// secretFlag reports whether a command-line flag (--token, --api-key) takes a secret.
func secretFlag(flag string) bool {
	if !strings.HasPrefix(flag, "-") {
		return false
	}
	if i := strings.IndexByte(flag, '='); i >= 0 {
		flag = flag[:i]
	}
	return secretNameMode(flag, keyFlag)
}

// secretField reports whether a JSON/YAML field name holds a secret in any
// object: password, token, apiKey, … but not "key" alone (label keys, secretKeyRef
// keys), nor names of secrets (secretName) nor paths.
func secretField(k string) bool {
	// "tokens" alone holds token values (a list of them); with other words it
	// names a count or a limit (max_tokens, active_prefill_tokens), kept.
	return strings.EqualFold(k, "tokens") || secretName(k, false)
}

// URLs replaces the password of user:password@ in URLs in s.
func URLs(s string) string {
	return urlUserinfoRE.ReplaceAllString(s, "${1}${2}:"+Redacted+"@")
}
