package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/go-stpe/scheduler/cluster"
)

// TestMain fails the tests if any goroutine outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startRedis starts a redis-server of its own for t on a free local port,
// stopped when t ends, and returns its address.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("SCHEDULER_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-server not found on PATH (SCHEDULER_REQUIRE_REDIS=1 forbids skipping)")
		}
		t.Skip("redis-server not found on PATH")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	for deadline := time.Now().Add(10 * time.Second); rdb.Ping(context.Background()).Err() != nil; {
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not answer")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return addr
}

// buildBinary builds the command into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "stpe-dashboard")
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// dashboardProcess is a running stpe-dashboard.
type dashboardProcess struct {
	cmd    *exec.Cmd
	url    string
	stderr *strings.Builder // everything it wrote, once it exited
	exited chan struct{}
}

var listeningURL = regexp.MustCompile(`url=(http://\S+/)`)

// startDashboard starts bin with args and env, waits for it to listen and
// kills it when t ends if it still runs.
func startDashboard(t *testing.T, bin string, env []string, args ...string) *dashboardProcess {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &dashboardProcess{cmd: cmd, stderr: &strings.Builder{}, exited: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		defer close(p.exited)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			p.stderr.WriteString(sc.Text() + "\n")
			if m := listeningURL.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
	})
	select {
	case p.url = <-found:
	case <-p.exited:
		t.Fatalf("stpe-dashboard exited: %s", p.stderr)
	case <-time.After(20 * time.Second):
		t.Fatal("stpe-dashboard did not listen")
	}
	return p
}

// stop sends SIGTERM and waits for a clean exit.
func (p *dashboardProcess) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("stpe-dashboard did not stop on SIGTERM")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit code %d: %s", code, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "stopped") {
		t.Fatalf("no graceful stop logged: %s", p.stderr)
	}
}

// visitor keeps the dashboard's visitor cookie between requests, as a
// browser does: its forms' CSRF tokens are bound to it.
var visitor, _ = cookiejar.New(nil)

// do sends a request as the one visitor and returns the status and body.
func do(t *testing.T, method, u string, form url.Values, header http.Header) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	client := &http.Client{Jar: visitor, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	client.CloseIdleConnections()
	return resp.StatusCode, string(b)
}

func basic(user, password string) http.Header {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, password)
	return r.Header
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func TestBinaryServesTheClusterPagesWithAuthReadOnlyAndGracefulStop(t *testing.T) {
	addr := startRedis(t)
	bin := buildBinary(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	producer, err := cluster.New(rdb)
	if err != nil {
		t.Fatal(err)
	}
	id, err := producer.Schedule(ctx, "mail", []byte("hello"), time.Now())
	if err != nil {
		t.Fatal(err)
	}

	const password = "s3cret-Pa55"
	authFile := filepath.Join(t.TempDir(), "auth")
	if err := os.WriteFile(authFile, []byte("ops:"+password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Basic auth from a file, the Redis address from the environment.
	rw := startDashboard(t, bin, []string{"STPE_REDIS_URL=redis://" + addr + "/0"}, "-basic-auth-file", authFile)
	if code, _ := do(t, "GET", rw.url+"cluster/", nil, nil); code != http.StatusUnauthorized {
		t.Errorf("no credentials: %d, want 401", code)
	}
	if code, _ := do(t, "GET", rw.url+"cluster/", nil, basic("ops", "wrong")); code != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", code)
	}
	code, page := do(t, "GET", rw.url+"cluster/tasks?state=pending", nil, basic("ops", password))
	if code != http.StatusOK || !strings.Contains(page, id) {
		t.Fatalf("pending tasks page: %d, task %s shown: %v", code, id, strings.Contains(page, id))
	}
	code, page = do(t, "GET", rw.url+"cluster/", nil, basic("ops", password))
	m := csrfField.FindStringSubmatch(page)
	if code != http.StatusOK || m == nil {
		t.Fatalf("overview: %d, CSRF token found: %v", code, m != nil)
	}
	pause := url.Values{"csrf": {m[1]}, "kind": {"mail"}}
	if code, _ := do(t, "POST", rw.url+"cluster/pause", pause, basic("ops", password)); code != http.StatusSeeOther {
		t.Fatalf("pause: %d, want 303", code)
	}
	if _, page = do(t, "GET", rw.url+"cluster/", nil, basic("ops", password)); !strings.Contains(page, "Resume") {
		t.Fatal("the kind is not shown paused after the pause action")
	}

	// Read-only behind a proxy that names the user.
	ro := startDashboard(t, bin, nil, "-redis", addr, "-read-only", "-trust-header", "X-Forwarded-User")
	if code, _ := do(t, "GET", ro.url+"cluster/", nil, nil); code != http.StatusForbidden {
		t.Errorf("no proxy header: %d, want 403", code)
	}
	user := http.Header{"X-Forwarded-User": {"alice"}}
	if code, _ := do(t, "GET", ro.url+"cluster/", nil, user); code != http.StatusOK {
		t.Errorf("with proxy header: %d, want 200", code)
	}
	code, body := do(t, "POST", ro.url+"cluster/resume", url.Values{"csrf": {m[1]}, "kind": {"mail"}}, user)
	if code != http.StatusForbidden || !strings.Contains(body, "read-only") {
		t.Errorf("POST to a read-only dashboard: %d %q, want 403 read-only", code, body)
	}

	ro.stop(t)
	rw.stop(t)
	if strings.Contains(rw.stderr.String(), password) {
		t.Error("the password was written to the log")
	}
	// Neither dashboard claimed the task due long ago: it is still pending.
	info, ok, err := producer.Get(ctx, id)
	if err != nil || !ok || info.State != cluster.Pending || len(info.History) != 0 {
		t.Errorf("the task after the dashboards: ok %v, err %v, %+v", ok, err, info)
	}
}

func TestBadFlagsAreRefusedWithoutEchoingSecrets(t *testing.T) {
	getenv := func(string) string { return "" }
	for _, args := range [][]string{
		{"-basic-auth", "nopassword"},
		{"-basic-auth", "u:p", "-trust-header", "X-Forwarded-User"},
		{"-basic-auth", "u:p", "-basic-auth-file", "/nonexistent"},
		{"-redis", "redis://user:topsecret@[::1"},
		{"-prefix", ""},
		{"stray"},
	} {
		var stderr strings.Builder
		if code := run(context.Background(), args, getenv, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, stderr.String())
		}
		if strings.Contains(stderr.String(), "topsecret") || strings.Contains(stderr.String(), "nopassword") {
			t.Errorf("%q: the secret was echoed: %s", args, stderr.String())
		}
	}
}

func TestCredentialsMatchOnlyTheExactUserAndPassword(t *testing.T) {
	c, err := parseCredentials("ops:pa:ss", "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user, password string
		want           bool
	}{{"ops", "pa:ss", true}, {"ops", "pa", false}, {"op", "pa:ss", false}, {"", "", false}, {"ops", "pa:ss ", false}} {
		if got := c.matches(tc.user, tc.password); got != tc.want {
			t.Errorf("matches(%q, %q) = %v", tc.user, tc.password, got)
		}
	}
}
