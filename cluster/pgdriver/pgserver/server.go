// Package pgserver runs a throwaway PostgreSQL server for the Postgres
// driver's tests (internal/pgtest) and benchmarks: initdb into a new
// temporary directory, postgres on a free loopback port with fsync off,
// the superuser postgres trusted, and Stop removes it all. Kill and
// Restart crash it (kill -9) and bring it back on the same port and data.
//
// The binaries are looked up on PATH, then in /usr/lib/postgresql/*/bin
// (Debian's layout, newest version first); apt-get install -y postgresql
// brings them. Postgres refuses to run as root: run as root, initdb and
// postgres run as the user postgres, which Debian's package creates.
package pgserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// InstallHint says how to get the binaries, for a caller that finds none.
const InstallHint = "PostgreSQL binaries (initdb, postgres) not found on PATH or in /usr/lib/postgresql/*/bin; install them: apt-get install -y postgresql"

// readyTimeout is how long Launch and Restart wait for the server to
// accept connections: crash recovery takes a second or two, but on a
// loaded machine a backend's start alone can take several.
const readyTimeout = 60 * time.Second

// Server is one postgres process with its own data directory, and the
// superuser postgres trusted on loopback.
type Server struct {
	// Port is the loopback TCP port the server listens on.
	Port int
	// Dir is the temporary directory holding the data directory, the
	// socket and the log; Stop removes it.
	Dir string

	binDir string
	cred   *syscall.Credential // the postgres user's, when run as root; nil otherwise

	mu   sync.Mutex // guards cmd and done: the process of the current incarnation
	cmd  *exec.Cmd
	done chan struct{} // closed once cmd has been waited for
}

// BinDir returns the directory holding initdb and postgres, or "" if
// none is found: the one of initdb on PATH, else the newest
// /usr/lib/postgresql/<version>/bin.
func BinDir() string {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	return ""
}

// versionOf is the major version in /usr/lib/postgresql/<version>/bin.
func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// Launch runs initdb into a new temporary directory and starts postgres
// from binDir on a free loopback port, with fsync off and small buffers,
// and waits until it accepts connections. Commits still reach the
// operating system before they are acknowledged, so they survive a kill
// -9 of the server (not of the machine). The caller must call Stop. Run
// as root, the temporary directory's parent ($TMPDIR, else /tmp) must be
// open to the user postgres.
func Launch(binDir string) (*Server, error) {
	dir, err := os.MkdirTemp("", "pgserver-")
	if err != nil {
		return nil, fmt.Errorf("pgserver: make the directory: %w", err)
	}
	s := &Server{Dir: dir, binDir: binDir}
	if err := s.init(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if s.Port, err = freePort(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := s.start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// init makes the data directory with initdb, as the user postgres when
// run as root (the directory is handed to that user first).
func (s *Server) init() error {
	if os.Geteuid() == 0 {
		cred, err := postgresCredential()
		if err != nil {
			return err
		}
		s.cred = cred
		if err := os.Chown(s.Dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("pgserver: hand the directory to postgres: %w", err)
		}
	}
	cmd := exec.Command(filepath.Join(s.binDir, "initdb"), "-D", s.dataDir(), "-U", "postgres",
		"--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgserver: initdb: %w: %s", err, out)
	}
	return nil
}

// postgresCredential is the user and group postgres, which Debian's
// package creates.
func postgresCredential() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgserver: running as root, and postgres refuses root: no user postgres to run it as (apt-get install -y postgresql creates it): %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgserver: user postgres: uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgserver: user postgres: gid %q: %w", u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func (s *Server) dataDir() string { return filepath.Join(s.Dir, "data") }
func (s *Server) logFile() string { return filepath.Join(s.Dir, "postgres.log") }

// freePort asks the kernel for a loopback port nobody listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgserver: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start starts postgres in its own process group (so that Kill takes its
// backends too) and waits until it accepts connections.
func (s *Server) start() error {
	log, err := os.OpenFile(s.logFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgserver: open the log: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(filepath.Join(s.binDir, "postgres"), "-D", s.dataDir(),
		"-p", strconv.Itoa(s.Port), "-k", s.Dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "shared_buffers=16MB", "-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgserver: start postgres: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	if err := s.waitReady(done); err != nil {
		s.signal(syscall.SIGKILL)
		return err
	}
	return nil
}

// waitReady connects until the server accepts a connection, it exits, or
// readyTimeout passes. An attempt may take all the time left: a server
// that refuses (not listening yet) or turns it away (recovering) says so
// at once, so a connection that has not answered is a slow one, and
// dropping it for a new one only starts another backend on a machine that
// is already behind.
func (s *Server) waitReady(exited <-chan struct{}) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		if err == nil {
			err = conn.Ping(ctx)
			_ = conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(s.logFile())
			return fmt.Errorf("pgserver: postgres exited before accepting connections: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgserver: postgres on port %d did not accept connections: %w", s.Port, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// URL is the connection string of database on the server, as the
// superuser postgres.
func (s *Server) URL(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, database)
}

// CreateDatabase creates database name on the server.
func (s *Server) CreateDatabase(name string) error {
	return s.admin("CREATE DATABASE " + pgx.Identifier{name}.Sanitize())
}

// DropDatabase drops database name, ending its connections.
func (s *Server) DropDatabase(name string) error {
	return s.admin("DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize() + " WITH (FORCE)")
}

// admin runs sql on a connection of its own to the postgres database.
func (s *Server) admin(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return fmt.Errorf("pgserver: %s: %w", sql, err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql); err != nil {
		return fmt.Errorf("pgserver: %s: %w", sql, err)
	}
	return nil
}

// Kill stops the server and all its backends with SIGKILL, as a crash
// would, and waits until none of them runs. With fsync off, what was
// committed survives as long as the machine does.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	// Each backend makes itself a process group leader, so the
	// postmaster's group is the postmaster alone: the children are
	// found by their parent.
	children := childrenOf(cmd.Process.Pid)
	s.signal(syscall.SIGKILL)
	for _, pid := range children {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	waitGone(children)
}

// Restart starts the server again on the same port and data directory
// (after Kill or Stop), recovering from a crash, and waits until it
// accepts connections.
func (s *Server) Restart() error { return s.start() }

// Stop shuts the server down (a fast shutdown, SIGINT; SIGKILL after 10 s)
// and removes its directory. Calling it again does nothing more.
func (s *Server) Stop() {
	s.signal(syscall.SIGINT)
	_ = os.RemoveAll(s.Dir)
}

// signal sends sig to the server's process group and waits for the
// postmaster to exit.
func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	pgid := cmd.Process.Pid
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = cmd.Process.Kill()
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
}
