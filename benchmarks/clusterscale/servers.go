package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Redis servers this command starts on free local ports, each in a
// temporary directory: one redis-server, or a Redis Cluster of three
// masters with one replica each made by redis-cli --cluster create. (The
// cluster module's tests have the same in cluster/internal/redistest,
// which another module cannot import.)

// server is one redis-server process.
type server struct {
	addr string
	cmd  *exec.Cmd
}

// deployment is the Redis a pass runs on.
type deployment struct {
	name    string
	servers []*server
	cluster bool
}

// freePorts returns n distinct free local ports.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// startServer starts a redis-server in a new temporary directory with
// extra arguments and waits until it answers PING.
func startServer(extra ...string) (*server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not found on PATH; install it: apt-get install redis-server")
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "clusterscale-")
	if err != nil {
		return nil, err
	}
	args := []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(ports[0]), "--dir", dir,
		"--save", "", "--appendonly", "no", "--protected-mode", "no",
		"--logfile", filepath.Join(dir, "redis.log")}
	for i, a := range extra {
		if a == "BUSPORT" {
			extra[i] = strconv.Itoa(ports[1])
		}
	}
	s := &server{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])), cmd: exec.Command(bin, append(args, extra...)...)}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); c.Ping(context.Background()).Err() != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("redis-server on %s did not answer", s.addr)
		}
	}
	return s, nil
}

func (s *server) stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// startSingle starts one redis-server.
func startSingle() (*deployment, error) {
	s, err := startServer()
	if err != nil {
		return nil, err
	}
	return &deployment{name: "one redis-server", servers: []*server{s}}, nil
}

// startCluster starts six cluster-enabled servers, joins them as three
// masters with one replica each, and waits until every server reports the
// cluster ok and every replica is in sync.
func startCluster() (*deployment, error) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, fmt.Errorf("redis-cli not found on PATH; install it: apt-get install redis-tools")
	}
	d := &deployment{name: "Redis Cluster, 3 masters + 3 replicas", cluster: true}
	for range 6 {
		s, err := startServer("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-port", "BUSPORT", "--cluster-node-timeout", "2000", "--repl-diskless-sync-delay", "0")
		if err != nil {
			d.stop()
			return nil, err
		}
		d.servers = append(d.servers, s)
	}
	args := append([]string{"--cluster", "create"}, d.addrs()...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		d.stop()
		return nil, fmt.Errorf("redis-cli --cluster create: %w: %s", err, out)
	}
	ctx := context.Background()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if d.healthy(ctx) {
			return d, nil
		}
		if time.Now().After(deadline) {
			d.stop()
			return nil, fmt.Errorf("the cluster did not become healthy")
		}
	}
}

// healthy reports whether every server sees the cluster ok and every
// replica is in sync with its master.
func (d *deployment) healthy(ctx context.Context) bool {
	for _, s := range d.servers {
		c := redis.NewClient(&redis.Options{Addr: s.addr})
		info, err1 := c.ClusterInfo(ctx).Result()
		repl, err2 := c.Info(ctx, "replication").Result()
		_ = c.Close()
		if err1 != nil || err2 != nil || !strings.Contains(info, "cluster_state:ok") {
			return false
		}
		if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
			return false
		}
	}
	return true
}

func (d *deployment) addrs() []string {
	var a []string
	for _, s := range d.servers {
		a = append(a, s.addr)
	}
	return a
}

func (d *deployment) stop() {
	for _, s := range d.servers {
		s.stop()
	}
}

// client returns a client as one replica of a service would have.
func (d *deployment) client() redis.UniversalClient {
	if d.cluster {
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: d.addrs(), PoolSize: 32})
	}
	return redis.NewClient(&redis.Options{Addr: d.servers[0].addr, PoolSize: 32})
}

// admin returns a client of each server, for the statistics.
func (d *deployment) admin() []*redis.Client {
	var cs []*redis.Client
	for _, s := range d.servers {
		cs = append(cs, redis.NewClient(&redis.Options{Addr: s.addr}))
	}
	return cs
}

// masters returns the admin clients of the servers that are masters now.
func masters(ctx context.Context, admin []*redis.Client) ([]*redis.Client, error) {
	var ms []*redis.Client
	for _, c := range admin {
		repl, err := c.Info(ctx, "replication").Result()
		if err != nil {
			return nil, err
		}
		if strings.Contains(repl, "role:master") {
			ms = append(ms, c)
		}
	}
	return ms, nil
}

// flush empties every master (the replicas follow).
func flush(ctx context.Context, admin []*redis.Client) error {
	ms, err := masters(ctx, admin)
	if err != nil {
		return err
	}
	for _, c := range ms {
		if err := c.FlushAll(ctx).Err(); err != nil {
			return err
		}
	}
	return nil
}

// closeAll closes every client of cs.
func closeAll(cs []*redis.Client) {
	for _, c := range cs {
		_ = c.Close()
	}
}
