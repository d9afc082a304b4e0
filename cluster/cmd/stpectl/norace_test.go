//go:build !race

package main

// raceEnabled is true when the tests run with -race: the command under test
// is built with it too.
const raceEnabled = false
