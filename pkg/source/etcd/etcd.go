package etcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/ai-dynamo/kubectl-dynamo/pkg/model"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/raw"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/iolimit"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/source/redact"
)

// Environment variables read for etcd credentials when the flags are not given.
const (
	EnvUsername = "KDYN_ETCD_USERNAME"
	EnvPassword = "KDYN_ETCD_PASSWORD"
)

// Prefix is one key prefix the etcd source reads.
type Prefix struct {
	Prefix string
	// Required prefixes are the current layout: a failure to read one degrades
	// the source. The others (older layouts, event channels) are best effort.
	Required bool
	// What says what the prefix holds, for notes.
	What string
}

// DefaultPrefixes are the prefixes read: Dynamo's current layout
// (v1/instances/, v1/mdc/, v1/event_channels/) and, best effort, the layouts of
// older releases (models/, instances/).
var DefaultPrefixes = []Prefix{
	{Prefix: "v1/instances/", Required: true, What: "worker endpoint instances"},
	{Prefix: "v1/mdc/", Required: true, What: "model deployment cards (runtime config, worker type, topology)"},
	{Prefix: "v1/event_channels/", What: "KV event channels"},
	{Prefix: "models/", What: "model entries (Dynamo before v1/mdc)"},
	{Prefix: "instances/", What: "worker instances (early Dynamo layout)"},
}

// Defaults of the etcd source.
const (
	DefaultDialTimeout    = 5 * time.Second
	DefaultRequestTimeout = 10 * time.Second
	DefaultPageSize       = 500
	// DefaultMaxValueBytes bounds one value; larger values are skipped with a note.
	DefaultMaxValueBytes = 10 << 20
	// DefaultMaxTotalBytes bounds everything read from etcd.
	DefaultMaxTotalBytes = 512 << 20
)

// Options configure the etcd source. Credentials are used to connect and
// never appear in notes, errors or the bundle.
type Options struct {
	Endpoints []string
	// CACert, Cert and Key are PEM file paths (TLS).
	CACert, Cert, Key string
	// Username and Password authenticate; see WithEnv for the environment fallback.
	Username, Password string
	DialTimeout        time.Duration
	RequestTimeout     time.Duration
	// Prefixes are the key prefixes read; DefaultPrefixes when nil.
	Prefixes []Prefix
	// PageSize is the number of keys per Range request.
	PageSize int64
	// MaxValueBytes and MaxTotalBytes are size limits (defaults above).
	MaxValueBytes int
	MaxTotalBytes int64
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
}

// WithEnv fills Username and Password from KDYN_ETCD_USERNAME and
// KDYN_ETCD_PASSWORD when they are empty (getenv is os.Getenv when nil).
func (o Options) WithEnv(getenv func(string) string) Options {
	if getenv == nil {
		getenv = os.Getenv
	}
	if o.Username == "" {
		o.Username = getenv(EnvUsername)
	}
	if o.Password == "" {
		o.Password = getenv(EnvPassword)
	}
	return o
}

// Result is what the etcd source read.
type Result struct {
	// KVs are the entries read, sorted by key; values as stored.
	KVs []raw.EtcdKeyValue
	// Source is the source's status.
	Source model.SourceStatus
	// Notes explain what could not be read and its consequence.
	Notes []model.Note
	// Requests is the number of Range requests made.
	Requests int
}

// Consequence is the consequence of an unreadable etcd, for notes.
const Consequence = "workers, runtime configs and topology published by deployments using etcd discovery are unknown"

// Collect reads the Dynamo discovery keys from etcd with Range requests only
// (paginated, keys in ascending order). An unreachable or refusing etcd is a note
// and a degraded source, never an error: the result is always non-nil.
func Collect(ctx context.Context, o Options) *Result {
	o = o.WithDefaults()
	res := &Result{Source: model.SourceStatus{Kind: model.SourceEtcd, Detail: redact.URLs(strings.Join(o.Endpoints, ",")), At: o.Now().UTC()}}
	fail := func(msg string) *Result {
		res.Notes = append(res.Notes, model.Note{Severity: model.NoteWarning, Source: model.SourceEtcd, Message: msg})
		res.Source.Degraded = true
		if res.Source.Message == "" {
			res.Source.Message = msg
		}
		return res
	}
	if len(o.Endpoints) == 0 {
		return fail("no etcd endpoints given: " + Consequence + "; pass --etcd-endpoints")
	}
	cfg, err := o.ClientConfig()
	if err != nil {
		return fail(err.Error())
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		if msg, ok := etcdFatal(err, o, res.Source.Detail); ok {
			return fail(msg)
		}
		return fail(fmt.Sprintf("cannot connect to etcd at %s: %s: %s; check --etcd-endpoints and the TLS flags", res.Source.Detail, etcdErrText(err, o), Consequence))
	}
	defer cli.Close()
	// clientv3.New does not wait for a connection, so an unreachable endpoint
	// would only show when the first Range times out (--etcd-timeout). Wait for
	// the connection itself, bounded by --etcd-dial-timeout; this sends no etcd
	// request.
	if err := WaitConnected(ctx, cli, o.DialTimeout); err != nil {
		return fail(fmt.Sprintf("etcd at %s is unreachable (no connection within %s, --etcd-dial-timeout): %s; port-forward etcd and pass --etcd-endpoints, or --no-etcd",
			res.Source.Detail, o.DialTimeout, Consequence))
	}

	var total int64
	for _, p := range o.Prefixes {
		kvs, n, err := o.readPrefix(ctx, cli, p.Prefix, &total, res)
		res.Requests += n
		if err != nil {
			what := fmt.Sprintf("cannot read etcd prefix %s (%s) at %s: %s", p.Prefix, p.What, res.Source.Detail, etcdErrText(err, o))
			if msg, ok := etcdFatal(err, o, res.Source.Detail); ok {
				res.KVs = nil
				return fail(msg)
			}
			switch {
			case errors.Is(err, errTotalTooLarge):
				res.KVs = append(res.KVs, kvs...)
				fail(what + ": the keys read so far are kept")
				sortEtcd(res)
				return res
			case p.Required:
				fail(what + ": " + Consequence)
			default:
				res.Notes = append(res.Notes, model.Note{Severity: model.NoteInfo, Source: model.SourceEtcd, Message: what})
			}
			continue
		}
		res.KVs = append(res.KVs, kvs...)
	}
	sortEtcd(res)
	return res
}

var errTotalTooLarge = errors.New("etcd data over the total size limit")

// WaitConnected waits until the client's gRPC connection is ready, at most d.
func WaitConnected(ctx context.Context, cli *clientv3.Client, d time.Duration) error {
	conn := cli.ActiveConnection()
	conn.Connect()
	dctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		st := conn.GetState()
		if st == connectivity.Ready {
			return nil
		}
		if !conn.WaitForStateChange(dctx, st) {
			return dctx.Err()
		}
	}
}

func sortEtcd(res *Result) {
	sort.SliceStable(res.KVs, func(i, j int) bool { return res.KVs[i].Key < res.KVs[j].Key })
}

// WithDefaults returns o with every unset limit, timeout and prefix list set to
// its default.
func (o Options) WithDefaults() Options {
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.Prefixes == nil {
		o.Prefixes = DefaultPrefixes
	}
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.MaxValueBytes <= 0 {
		o.MaxValueBytes = DefaultMaxValueBytes
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// ClientConfig builds the etcd client configuration (TLS from the PEM files).
func (o Options) ClientConfig() (clientv3.Config, error) {
	cfg := clientv3.Config{
		Endpoints:          o.Endpoints,
		DialTimeout:        o.DialTimeout,
		Username:           o.Username,
		Password:           o.Password,
		Logger:             zap.NewNop(),
		MaxCallRecvMsgSize: 256 << 20,
		RejectOldCluster:   false,
	}
	useTLS := o.CACert != "" || o.Cert != "" || o.Key != ""
	for _, e := range o.Endpoints {
		if strings.HasPrefix(e, "https://") || strings.HasPrefix(e, "unixs://") {
			useTLS = true
		}
	}
	if !useTLS {
		return cfg, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CACert != "" {
		pem, err := os.ReadFile(o.CACert)
		if err != nil {
			return cfg, fmt.Errorf("read --etcd-cacert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return cfg, fmt.Errorf("--etcd-cacert %s holds no PEM certificate", o.CACert)
		}
		tc.RootCAs = pool
	}
	if (o.Cert == "") != (o.Key == "") {
		return cfg, errors.New("--etcd-cert and --etcd-key must be given together")
	}
	if o.Cert != "" {
		pair, err := tls.LoadX509KeyPair(o.Cert, o.Key)
		if err != nil {
			// The error text names the files, never their content.
			return cfg, fmt.Errorf("load --etcd-cert/--etcd-key: %w", err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	cfg.TLS = tc
	return cfg, nil
}

// readPrefix reads every key under prefix, page by page. It returns the number
// of Range requests made.
func (o Options) readPrefix(ctx context.Context, cli *clientv3.Client, prefix string, total *int64, res *Result) ([]raw.EtcdKeyValue, int, error) {
	end := clientv3.GetPrefixRangeEnd(prefix)
	key := prefix
	limit := o.PageSize
	var out []raw.EtcdKeyValue
	var rev int64
	requests := 0
	for {
		rctx, cancel := context.WithTimeout(ctx, o.RequestTimeout)
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(limit)}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev)) // a consistent view across pages
		}
		resp, err := cli.Get(rctx, key, opts...)
		cancel()
		requests++
		if err != nil {
			if status.Code(err) == codes.ResourceExhausted && limit > 1 {
				limit /= 4 // the page exceeded the message size limit: smaller pages
				if limit < 1 {
					limit = 1
				}
				continue
			}
			if rev > 0 && errors.Is(err, rpctypes.ErrCompacted) {
				rev = 0 // compacted under us: continue at the current revision
				continue
			}
			return out, requests, err
		}
		if rev == 0 {
			rev = resp.Header.GetRevision()
		}
		for _, kv := range resp.Kvs {
			if len(kv.Value) > o.MaxValueBytes {
				res.Notes = append(res.Notes, model.Note{Severity: model.NoteWarning, Source: model.SourceEtcd,
					Message: fmt.Sprintf("etcd value of %s is %d bytes, over the %s limit: skipped", string(kv.Key), len(kv.Value), iolimit.ByteSize(int64(o.MaxValueBytes)))})
				continue
			}
			*total += int64(len(kv.Key) + len(kv.Value))
			if *total > o.MaxTotalBytes {
				return out, requests, fmt.Errorf("%w (%s)", errTotalTooLarge, iolimit.ByteSize(o.MaxTotalBytes))
			}
			out = append(out, raw.EtcdKeyValue{Key: string(kv.Key), Value: string(kv.Value)})
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return out, requests, nil
		}
		key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// etcdFatal describes an error that makes the whole etcd unusable: no member
// answers, or the credentials are rejected.
func etcdFatal(err error, o Options, where string) (string, bool) {
	switch {
	case isEtcdUnreachable(err):
		return fmt.Sprintf("etcd at %s is unreachable (%s): %s; check --etcd-endpoints and the TLS flags, or port-forward etcd and pass --etcd-endpoints http://localhost:2379", where, etcdErrText(err, o), Consequence), true
	case errors.Is(err, rpctypes.ErrAuthFailed) || errors.Is(err, rpctypes.ErrInvalidAuthToken) || errors.Is(err, rpctypes.ErrUserEmpty) ||
		errors.Is(err, rpctypes.ErrGRPCAuthFailed) || errors.Is(err, rpctypes.ErrGRPCInvalidAuthToken) || status.Code(err) == codes.Unauthenticated:
		return fmt.Sprintf("etcd at %s rejected the credentials (%s): %s; check --etcd-username/--etcd-password or %s/%s", where, etcdErrText(err, o), Consequence, EnvUsername, EnvPassword), true
	}
	return "", false
}

// isEtcdUnreachable reports whether err means no etcd member answered.
func isEtcdUnreachable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return false
}

// etcdErrText is err's text with any credential removed.
func etcdErrText(err error, o Options) string {
	s := err.Error()
	if errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded {
		s = fmt.Sprintf("no answer within %s", o.RequestTimeout)
	}
	if o.Password != "" {
		s = strings.ReplaceAll(s, o.Password, redact.Redacted)
	}
	return redact.URLs(s)
}
