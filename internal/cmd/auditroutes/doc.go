// Package auditroutes implements `kubectl dynamo audit-routes`: the KV
// router's real decisions, read from the frontend's logs (a file, standard
// input, or every frontend replica's log through the API server), checked
// against the plugin's model of the deployment with pkg/audit, with an
// agreement rate per check and per hop, every disagreement with its most
// likely cause, and --fail-on for a pipeline gate.
package auditroutes
