package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Redis Cluster for the tests: three masters with one replica each, made
// by redis-cli --cluster create from six redis-server processes on free
// local ports. Every wait here watches the cluster's own reports (CLUSTER
// INFO, CLUSTER SLOTS, INFO replication) until they say what is waited
// for; none guesses a time.

// ClusterMasters is how many masters StartCluster makes; each has one
// replica.
const ClusterMasters = 3

// DefaultNodeTimeout is the cluster-node-timeout of a test cluster: how
// long a master may be silent before the others count it failing. It is
// long enough that a machine loaded by parallel tests never stalls a
// master past it, so that a cluster no test breaks never fails over
// (CLUSTERDOWN in the middle of a test).
const DefaultNodeTimeout = 5 * time.Second

// FailoverNodeTimeout is the cluster-node-timeout of the tests that kill a
// master: its replica takes over about a second and a half after it.
const FailoverNodeTimeout = 500 * time.Millisecond

// Cluster is a running Redis Cluster of ClusterMasters masters, each with
// one replica.
type Cluster struct {
	// Servers are the cluster's redis-server processes. The first
	// ClusterMasters were created masters and the others their replicas;
	// after a failover the roles differ (MasterFor tells).
	Servers []*Server

	mu    sync.Mutex               // guards admin
	admin map[string]*redis.Client // one client per server address, for the checks
}

// ClusterOptions configure StartCluster.
type ClusterOptions struct {
	// AOF turns on the append-only file (appendfsync always) on every
	// server.
	AOF bool
	// NodeTimeout is the cluster-node-timeout (DefaultNodeTimeout if 0).
	NodeTimeout time.Duration
}

// CLIBinary returns the path of redis-cli, or "" if it is not installed.
func CLIBinary() string {
	p, err := exec.LookPath("redis-cli")
	if err != nil {
		return ""
	}
	return p
}

// SkipOrFailCluster skips tb (or fails it under SCHEDULER_REQUIRE_REDIS=1)
// when redis-server or redis-cli is not on PATH, and returns their paths
// otherwise.
func SkipOrFailCluster(tb testing.TB) (server, cli string) {
	tb.Helper()
	server = SkipOrFail(tb)
	cli = CLIBinary()
	if cli != "" {
		return server, cli
	}
	msg := "redis-cli not found on PATH; install it: apt-get install redis-tools"
	if os.Getenv(RequireEnv) == "1" {
		tb.Fatal(msg + " (" + RequireEnv + "=1 forbids skipping)")
	}
	tb.Skip(msg)
	return "", ""
}

// StartCluster starts a Redis Cluster for tb, waits until it serves every
// slot with every replica in sync, and stops it when tb ends.
func StartCluster(tb testing.TB, opts ClusterOptions) *Cluster {
	tb.Helper()
	bin, cli := SkipOrFailCluster(tb)
	c, err := LaunchCluster(bin, cli, tb.TempDir(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Stop)
	return c
}

// LaunchCluster starts a Redis Cluster from the redis-server bin and the
// redis-cli cli, each server in a directory of its own under dir, and
// waits until it is healthy (see WaitHealthy). The caller must call Stop.
func LaunchCluster(bin, cli, dir string, opts ClusterOptions) (*Cluster, error) {
	timeout := opts.NodeTimeout
	if timeout == 0 {
		timeout = DefaultNodeTimeout
	}
	c := &Cluster{admin: make(map[string]*redis.Client)}
	for i := range 2 * ClusterMasters {
		s, err := launchClusterNode(bin, filepath.Join(dir, "node"+strconv.Itoa(i)), opts.AOF, timeout)
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Servers = append(c.Servers, s)
	}
	args := []string{"--cluster", "create"}
	args = append(args, c.Addrs()...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("redistest: redis-cli --cluster create: %w: %s", err, out)
	}
	if err := c.WaitHealthy(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// launchClusterNode starts one cluster-enabled redis-server in dir. Its
// replica may take over as soon as its master fails, however long it was
// cut off (cluster-replica-validity-factor 0), and a replica's first sync
// starts at once (repl-diskless-sync-delay 0).
func launchClusterNode(bin, dir string, aof bool, nodeTimeout time.Duration) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// The cluster bus port is set, not port+10000, which a free port
	// from the kernel's ephemeral range may overflow.
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	return launch(bin, dir, ports[0], Options{AOF: aof}, []string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf",
		"--cluster-port", strconv.Itoa(ports[1]),
		"--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10),
		"--cluster-replica-validity-factor", "0",
		"--cluster-allow-replica-migration", "no",
		"--repl-diskless-sync-delay", "0",
	})
}

// Addrs returns the host:port of every server, for
// redis.ClusterOptions.Addrs.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		addrs[i] = s.Addr
	}
	return addrs
}

// Client returns a new cluster client of the cluster, with a pool of 32
// connections per server (above a node's default concurrency plus 4); the
// caller closes it.
func (c *Cluster) Client() *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), PoolSize: 32})
}

// Stop stops every server (see Server.Stop) and closes the checks'
// clients. Calling it again does nothing.
func (c *Cluster) Stop() {
	var wg sync.WaitGroup
	for _, s := range c.Servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Stop()
		}()
	}
	wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for addr, cl := range c.admin {
		_ = cl.Close()
		delete(c.admin, addr)
	}
}

// adminClient returns the checks' client of addr.
func (c *Cluster) adminClient(addr string) *redis.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := c.admin[addr]
	if cl == nil {
		cl = redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1,
			DialTimeout: 200 * time.Millisecond, ReadTimeout: time.Second, PoolSize: 2})
		c.admin[addr] = cl
	}
	return cl
}

// server returns the server listening on addr, or nil.
func (c *Cluster) server(addr string) *Server {
	for _, s := range c.Servers {
		if s.Addr == addr {
			return s
		}
	}
	return nil
}

// MasterFor returns the server that is the master of key's slot, as the
// first running server it asks sees it.
func (c *Cluster) MasterFor(ctx context.Context, key string) (*Server, error) {
	slot, err := c.slotOf(ctx, key)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for _, s := range c.Servers {
		if !s.running() {
			continue
		}
		slots, err := c.adminClient(s.Addr).ClusterSlots(ctx).Result()
		if err != nil {
			lastErr = err
			continue
		}
		for _, r := range slots {
			if int64(r.Start) <= slot && slot <= int64(r.End) && len(r.Nodes) > 0 {
				if m := c.server(r.Nodes[0].Addr); m != nil {
					return m, nil
				}
			}
		}
		lastErr = fmt.Errorf("redistest: no master serves slot %d", slot)
	}
	if lastErr == nil {
		lastErr = errors.New("redistest: no server is running")
	}
	return nil, lastErr
}

// slotOf asks a running server for key's slot.
func (c *Cluster) slotOf(ctx context.Context, key string) (int64, error) {
	for _, s := range c.Servers {
		if s.running() {
			return c.adminClient(s.Addr).ClusterKeySlot(ctx, key).Result()
		}
	}
	return 0, errors.New("redistest: no server is running")
}

// KillMasterFor kills the master of key's slot with SIGKILL, as a crash
// would, and returns it; its replica takes over after the node timeout
// (WaitHealthy waits for that). Server.Restart brings the killed server
// back, as a replica of the new master.
func (c *Cluster) KillMasterFor(ctx context.Context, key string) (*Server, error) {
	m, err := c.MasterFor(ctx, key)
	if err != nil {
		return nil, err
	}
	m.Kill()
	return m, nil
}

// WaitHealthy waits until the cluster serves every slot from running
// masters only: every running server reports cluster_state:ok with all
// 16384 slots ok, names only running servers as masters in CLUSTER SLOTS,
// and, if it is a replica, has its link to its master up. Right after a
// master was killed, that is once its replica has been promoted and every
// other server knows it. It returns ctx's error, with what was still
// missing, if ctx ends first.
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	for {
		why := c.unhealthy(ctx)
		if why == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: the cluster did not become healthy: %s: %w", why, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// unhealthy returns what keeps the cluster from being healthy, or "".
func (c *Cluster) unhealthy(ctx context.Context) string {
	running := 0
	for _, s := range c.Servers {
		if !s.running() {
			continue
		}
		running++
		cl := c.adminClient(s.Addr)
		info, err := cl.ClusterInfo(ctx).Result()
		if err != nil {
			return s.Addr + ": " + err.Error()
		}
		if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
			return s.Addr + ": cluster state not ok or slots not all ok"
		}
		slots, err := cl.ClusterSlots(ctx).Result()
		if err != nil {
			return s.Addr + ": " + err.Error()
		}
		for _, r := range slots {
			if len(r.Nodes) == 0 {
				return s.Addr + ": slots " + strconv.Itoa(r.Start) + "-" + strconv.Itoa(r.End) + " have no master"
			}
			if m := c.server(r.Nodes[0].Addr); m == nil || !m.running() {
				return s.Addr + ": sees " + r.Nodes[0].Addr + ", not running, as a master"
			}
		}
		repl, err := cl.Info(ctx, "replication").Result()
		if err != nil {
			return s.Addr + ": " + err.Error()
		}
		if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
			return s.Addr + ": replica not in sync with its master"
		}
	}
	if running == 0 {
		return "no server is running"
	}
	return ""
}
