package pgdriver

// PurgeLock is the key of the purge's advisory lock, for the tests that
// hold it as another node would.
const PurgeLock = purgeLock

// SetPurgeBatches makes d's purge delete batch rows per statement, at most
// batches statements of each kind of row per run: small numbers let a
// test see a run stop at its bound without storing thousands of rows.
func SetPurgeBatches(d *Driver, batch, batches int) {
	d.purge.mu.Lock()
	defer d.purge.mu.Unlock()
	d.purge.batch, d.purge.batches = batch, batches
}
