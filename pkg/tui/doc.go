// Package tui is the Bubble Tea dashboard (`kubectl dynamo dashboard`) over the
// inspect and explain models. It never talks to client-go or etcd itself: data
// arrives through an injected loader.
//
// It is filled in by the dashboard work (issue 6).
package tui
