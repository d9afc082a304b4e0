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
// every value (task names, trigger text, kinds, payloads, errors); the
// style sheet and one small script are embedded and no page loads
// anything from another host, so it works on a machine without internet.
// Every page reads and acts without JavaScript; the script only refreshes
// a page in place (keeping the scroll position and ticked rows) when the
// visitor asks for a refresh every 2, 5 or 30 seconds, which a meta
// refresh does without it. Charts are inline SVG drawn on the server, with
// time and value axes. Times show absolute, with date and zone (UTC or one
// the visitor picks), and relative ("in 4m10s", "3m ago").
//
// The handler has no authentication of its own, as pprof has none: wrap it
// in the middleware that guards the rest of your admin endpoints, or pass
// ReadOnly to turn the actions off. Actions are POST only; a POST from
// another site (by Sec-Fetch-Site or Origin) is refused, and every form
// carries a CSRF token bound to the visitor's cookie. Cancel and Delete,
// and every bulk action, ask for a confirmation on a page of their own; a
// refused action is an error page with a fitting status. The messages a
// page shows come only from the server, signed: never text from the URL.
package dashboard
