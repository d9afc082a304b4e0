// Command cronbench compares the cron package with the maintained Go cron
// libraries: it runs the daylight-saving cases of the cron package's
// rules on each of them, in one run, and prints what each computed as
// Markdown (the table of docs/cron.md). Its bench_test.go measures Next
// side by side. Run from the benchmarks folder:
//
//	go run ./cronbench
//	go test -run XXX -bench . -benchmem ./cronbench
//
// It lives in the benchmarks module so that the library does not depend
// on the peers.
package main

import (
	"fmt"
	"log"
	"os"
	"runtime"
	_ "time/tzdata" // the same zone rules on every machine
)

func main() {
	log.SetFlags(0)
	results, err := measure()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Measured with %s on %s/%s, zone rules from time/tzdata.\n\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	writeTable(os.Stdout, results)
}
