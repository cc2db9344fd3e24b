package kubeenv

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// auditPolicy logs every request at Metadata level (who, verb, object,
// response code; no bodies) once, when the response is complete.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
`

// AuditEvent is the part of an audit.k8s.io/v1 Event that tests need.
type AuditEvent struct {
	AuditID    string   `json:"auditID"`
	Stage      string   `json:"stage"` // ResponseComplete, or ResponseStarted for watches, or Panic
	Verb       string   `json:"verb"`  // get, list, watch, create, update, patch, delete, ...
	RequestURI string   `json:"requestURI"`
	User       string   `json:"-"` // user.username
	Groups     []string `json:"-"` // user.groups
	UserAgent  string   `json:"userAgent"`
	// ObjectRef is nil for non-resource requests such as /readyz or /api.
	ObjectRef *AuditObjectRef `json:"objectRef,omitempty"`
	// Code is responseStatus.code (0 when absent).
	Code int `json:"-"`
}

// AuditObjectRef identifies the object of a request.
type AuditObjectRef struct {
	Resource    string `json:"resource"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	APIGroup    string `json:"apiGroup"`
	APIVersion  string `json:"apiVersion"`
	Subresource string `json:"subresource"`
}

// IsMutating reports whether the verb changes state (anything but get, list,
// watch; impersonation and token reviews count as mutating).
func (a AuditEvent) IsMutating() bool {
	switch a.Verb {
	case "get", "list", "watch":
		return false
	}
	return true
}

type rawAuditEvent struct {
	AuditEvent
	UserInfo struct {
		Username string   `json:"username"`
		Groups   []string `json:"groups"`
	} `json:"user"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// ErrNoAuditLog is returned by the audit methods when Options.AuditLog was false.
var ErrNoAuditLog = errors.New("kubeenv: audit log disabled; start the Env with Options{AuditLog: true}")

// AuditEvents parses the audit log written so far. Events are in the order the
// apiserver completed them. A request's event may land a moment after its
// response reached the client; use WaitForAuditEvent to wait for one.
func (e *Env) AuditEvents() ([]AuditEvent, error) {
	evs, _, err := e.AuditEventsFrom(0)
	return evs, err
}

// AuditOffset returns the current size of the audit log, to be passed to
// AuditEventsFrom so that a test sees only the events after this point (the
// Env may be shared with other tests).
func (e *Env) AuditOffset() (int64, error) {
	if e.AuditLogPath == "" {
		return 0, ErrNoAuditLog
	}
	st, err := os.Stat(e.AuditLogPath)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// AuditEventsFrom parses the complete audit-log lines from byte offset on and
// returns them with the offset after the last complete line.
func (e *Env) AuditEventsFrom(offset int64) ([]AuditEvent, int64, error) {
	if e.AuditLogPath == "" {
		return nil, offset, ErrNoAuditLog
	}
	f, err := os.Open(e.AuditLogPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, offset, nil
	}
	if err != nil {
		return nil, offset, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, 0); err != nil {
		return nil, offset, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	var evs []AuditEvent
	for {
		line, err := r.ReadBytes('\n')
		if err != nil { // io.EOF: a partial last line is left for the next call
			return evs, offset, nil
		}
		offset += int64(len(line))
		var raw rawAuditEvent
		if err := json.Unmarshal(line, &raw); err != nil {
			return evs, offset, fmt.Errorf("parse audit log %s: %w", e.AuditLogPath, err)
		}
		ev := raw.AuditEvent
		ev.User, ev.Groups = raw.UserInfo.Username, raw.UserInfo.Groups
		if raw.ResponseStatus != nil {
			ev.Code = raw.ResponseStatus.Code
		}
		evs = append(evs, ev)
	}
}

// WaitForAuditEvent polls the audit log from offset on until an event matches
// or ctx ends.
func (e *Env) WaitForAuditEvent(ctx context.Context, offset int64, match func(AuditEvent) bool) (AuditEvent, error) {
	if e.AuditLogPath == "" {
		return AuditEvent{}, ErrNoAuditLog
	}
	var found AuditEvent
	err := poll(ctx, 50*time.Millisecond, "a matching audit event", nil, func(context.Context) (bool, error) {
		evs, next, err := e.AuditEventsFrom(offset)
		if err != nil {
			return false, err
		}
		offset = next
		for _, ev := range evs {
			if match(ev) {
				found = ev
				return true, nil
			}
		}
		return false, nil
	})
	return found, err
}
