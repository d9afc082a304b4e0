package chaoskit

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Command is how a worker process is started: Bin with the worker's
// flags (WorkerFlags) and the store's, and Env added to the test's
// environment.
type Command struct {
	Bin string
	Env []string
}

// BuildCommand builds the main package pkg (a worker command that calls
// Serve) into a temporary directory and returns the command that runs it.
func BuildCommand(t testing.TB, pkg string) Command {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "worker")
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build the worker %s: %v\n%s", pkg, err, out)
	}
	return Command{Bin: bin}
}

// SelfCommand re-executes the running test binary with env set (NAME=1):
// its TestMain runs the worker instead of the tests when it sees env.
func SelfCommand(t testing.TB, env string) Command {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatalf("the test binary: %v", err)
	}
	return Command{Bin: bin, Env: []string{env + "=1"}}
}

// workerSpec is how one worker slot is started, every time.
type workerSpec struct {
	cmd             Command
	name, ledgerDir string
	reach           []string // the flags that reach the store through the slot's proxies
	skew            time.Duration
}

// process is one running worker process.
type process struct {
	cmd    *exec.Cmd
	done   chan struct{} // closed once the process has been waited for
	stderr *lockedBuffer
}

// lockedBuffer is a bytes.Buffer safe for exec's writer goroutine.
type lockedBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// start starts the worker of spec as its incarnation-th process and waits
// until its node has started.
func (s workerSpec) start(incarnation int) (*process, error) {
	ledger := filepath.Join(s.ledgerDir, fmt.Sprintf("%s-%d.ledger", s.name, incarnation))
	args := append(WorkerFlags{Name: s.name, Ledger: ledger, Skew: s.skew}.args(), s.reach...)
	cmd := exec.Command(s.cmd.Bin, args...)
	cmd.Env = append(os.Environ(), s.cmd.Env...)
	p := &process{cmd: cmd, done: make(chan struct{}), stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ready <- sc.Scan() && sc.Text() == "ready"
		for sc.Scan() {
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	select {
	case ok := <-ready:
		if ok {
			return p, nil
		}
	case <-time.After(60 * time.Second):
	}
	p.kill()
	return nil, fmt.Errorf("worker %s did not start: %s", s.name, p.stderr)
}

// signal sends sig unless the process has exited.
func (p *process) signal(sig syscall.Signal) {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}

// kill ends the process with SIGKILL, as a crash would, and waits for it.
func (p *process) kill() {
	p.signal(syscall.SIGKILL)
	<-p.done
}

// stop ends the process with SIGTERM (a graceful Stop) and waits for it,
// killing it after a minute; it returns an error if it did not exit
// cleanly.
func (p *process) stop() error {
	p.signal(syscall.SIGCONT)
	p.signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		p.kill()
		return fmt.Errorf("did not stop within a minute: %s", p.stderr)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("exited with %d: %s", code, p.stderr)
	}
	return nil
}
