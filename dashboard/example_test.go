package dashboard_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/go-stpe/scheduler"
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
