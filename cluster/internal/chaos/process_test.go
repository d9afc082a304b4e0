package chaos

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// buildReplica builds the replica command into a temporary directory.
func buildReplica(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "replica")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/go-stpe/scheduler/cluster/internal/chaos/replica")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build the replica: %v\n%s", err, out)
	}
	return bin
}

// replicaSpec is how one replica slot is started, every time.
type replicaSpec struct {
	bin, name, ledgerDir string
	redis                []string // how the replica reaches Redis: -redis, or -cluster, -via and -acks
	skew, lease, tick    time.Duration
}

// process is one running replica process.
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

// start starts the replica of spec as its incarnation-th process and waits
// until its node has started.
func (s replicaSpec) start(incarnation int) (*process, error) {
	ledger := filepath.Join(s.ledgerDir, fmt.Sprintf("%s-%d.ledger", s.name, incarnation))
	args := append([]string{"-name", s.name, "-ledger", ledger,
		"-skew", s.skew.String(), "-lease", s.lease.String(), "-tick", s.tick.String()}, s.redis...)
	cmd := exec.Command(s.bin, args...)
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
	return nil, fmt.Errorf("replica %s did not start: %s", s.name, p.stderr)
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
