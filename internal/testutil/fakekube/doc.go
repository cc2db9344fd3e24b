// Package fakekube is an in-memory kube.API for tests: objects per resource,
// errors per resource, label selectors honoured, pagination by index, and a
// scripted service proxy; plus object builders and note assertions the source
// tests share.
package fakekube
