// Package dashboard serves a web page over a running Scheduler: what is
// queued, what runs now, how many runs end each second and how late they
// start, with a cancel button per queued task. With WithCluster it also
// serves a cluster's pages: the stored tasks by state, page by page, one
// task with its payload and last error, the recent failures, with the
// operators' actions (run now, reschedule, retry, delete, cancel). It is an
// http.Handler you mount in your own server, in the manner of
// net/http/pprof; asynq's asynqmon and River's River UI play the same part
// for their queues.
//
//	h, err := dashboard.New(s, dashboard.WithCluster(node)) // s may be nil with WithCluster
//	if err != nil { ... }
//	mux.Handle("/debug/scheduler/", http.StripPrefix("/debug/scheduler", h))
//
// Every link and form on the pages is relative, so the handler works under
// any prefix and behind a reverse proxy that rewrites the path.
//
// The pages are rendered on the server with html/template, which escapes
// every value (task names, trigger text, kinds, payloads, errors); the style sheet is
// embedded and no page loads anything from another host, so it works on a
// machine without internet and reads fine without JavaScript. Charts are
// inline SVG drawn on the server.
//
// The handler has no authentication of its own, as pprof has none: wrap it
// in the middleware that guards the rest of your admin endpoints, or pass
// ReadOnly to turn the actions off. Actions are POST only and carry a
// CSRF token: a form from another site cannot act on a task.
package dashboard
