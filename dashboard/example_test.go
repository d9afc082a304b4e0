package dashboard_test

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/dashboard"
)

// Mount the dashboard under a prefix of your own server, as you would
// net/http/pprof, behind the middleware that guards your admin endpoints.
func Example() {
	s, err := scheduler.New(2)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Stop(context.Background())

	h, err := dashboard.New(s)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/scheduler/", http.StripPrefix("/debug/scheduler", h))

	// What a browser asking for the queue page gets.
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/debug/scheduler/queue", nil))
	fmt.Println(w.Code, strings.Contains(w.Body.String(), "Nothing queued."))
	// Output: 200 true
}

// Serve a cluster's pages beside the in-process Scheduler's. The node
// only reads and acts for the dashboard, so it need not be started; any
// node of the same Redis and key prefix shows the whole cluster. Pass a
// nil Scheduler for the cluster's pages alone.
func ExampleWithCluster() {
	s, err := scheduler.New(2)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Stop(context.Background())
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	node, err := cluster.New(rdb)
	if err != nil {
		log.Fatal(err)
	}
	defer node.Stop(context.Background())

	h, err := dashboard.New(s, dashboard.WithCluster(node), dashboard.ReadOnly())
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/scheduler/", http.StripPrefix("/debug/scheduler", requireAdmin(h, os.Getenv("DASHBOARD_PASSWORD"))))
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", mux))
}

// requireAdmin is the middleware that guards a service's admin endpoints;
// here, HTTP basic authentication of the user "admin" with password,
// compared in constant time. An empty password lets no one in.
func requireAdmin(next http.Handler, password string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || password == "" || subtle.ConstantTimeCompare([]byte(user+":"+pass), []byte("admin:"+password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="scheduler"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
