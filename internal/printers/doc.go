// Package printers renders the plain data models of pkg/model, pkg/explain and
// the commands as kubectl-style tables (table and wide), JSON and YAML. Every
// renderer takes a value and a writer; none reaches back into a cluster.
package printers
