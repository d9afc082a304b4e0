package pgchaos

import (
	"flag"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/chaoskit"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	"github.com/go-stpe/scheduler/cluster/pgdriver/pgserver"
)

var durationFlag = flag.Duration("chaos.duration", 0, "how long the faults go on (default 40s, or CLUSTER_CHAOS_DURATION)")

// TestChaosOnPostgres runs the chaos on a PostgreSQL server of the test's
// own, whose fault is a kill -9 and a restart.
func TestChaosOnPostgres(t *testing.T) {
	srv := pgtest.Start(t)
	chaoskit.Run(t, postgres{srv: srv, url: pgtest.DatabaseOn(t, srv)}, chaoskit.Config{
		Worker:   chaoskit.SelfCommand(t, workerEnv),
		Duration: *durationFlag,
		Default:  40 * time.Second,
		Flaky:    true,
	})
}

// postgres is the chaos's store: one PostgreSQL server, with fsync off
// (pgserver): a commit reaches the operating system before it is
// acknowledged, so it survives the server's kill -9.
type postgres struct {
	srv *pgserver.Server
	url string // the test database's, direct
}

func (p postgres) Describe() string {
	return "PostgreSQL on port " + strconv.Itoa(p.srv.Port) + ", killed -9 and restarted"
}

// Reach starts a proxy to the server and gives the worker the database's
// URL through it.
func (p postgres) Reach(t testing.TB) ([]*chaoskit.Proxy, []string) {
	px := chaoskit.StartProxy(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(p.srv.Port)))
	via := strings.Replace(p.url, "127.0.0.1:"+strconv.Itoa(p.srv.Port), px.Addr(), 1)
	return []*chaoskit.Proxy{px}, []string{"-db", via}
}

// Producer is a node on a pool of its own, straight to the server.
func (p postgres) Producer(t testing.TB) *cluster.Node {
	pool, err := openPool(p.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	n, err := newNode(pool, "producer")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Fault kills the server with SIGKILL (its backends with it), waits up
// to 1.5 s and restarts it on the same port and data.
func (p postgres) Fault(rng interface{ IntN(int) int }) (string, error) {
	p.srv.Kill()
	time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
	return "postgres-restart", p.srv.Restart()
}
