//go:build !unix

package model_test

import "time"

// cpuTime is 0 where getrusage is missing: the cpu-ns/op metric reads 0.
func cpuTime() time.Duration { return 0 }
