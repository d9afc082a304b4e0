package scheduler

import (
	"testing"
	"unsafe"
)

// TestTaskIs64Bytes keeps the task record at 64 bytes, a size class of
// its own: at millions of pending tasks the cost of scheduling is the
// memory per task (BenchmarkGrowThenCancel). A field added to futureTask
// belongs in taskAux or taskExt unless every task needs it.
func TestTaskIs64Bytes(t *testing.T) {
	if got := unsafe.Sizeof(futureTask{}); got != 64 {
		t.Fatalf("unsafe.Sizeof(futureTask{}) = %d, want 64", got)
	}
}
