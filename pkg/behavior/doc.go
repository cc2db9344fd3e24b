// Package behavior is the one reading of how Dynamo behaves, for the release
// a deployment runs. It sits beside the model and below every command:
//
//   - Table lists every behaviour that changed across Dynamo releases, each
//     era with its release range and upstream citation (docs/compatibility.md
//     is generated from it);
//   - Detect tells the release from the runtime images of the pods (or a
//     manifest's containers) and the operator's, or takes --dynamo-version;
//   - Read answers, for one deployment at that release, each router hop's
//     effective mode and where it came from (frontend args and env, worker
//     args, published cards), which workers the router knows and which are
//     live, whether the frontend serves the model (and why not), and what each
//     hop's mode does with the KV-transfer constraint.
//
// topology's findings, explain-route, simulate, preflight and the dashboard
// ask it and never derive these answers themselves.
//
// It imports the standard library, pkg/model, pkg/routecore and pkg/cmdline.
package behavior
