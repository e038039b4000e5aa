// Command jestjson reads `go test -json` on stdin, prints the tests' output as `go test -v`
// would (less the start lines and passing subtests), and writes the counts hack/test-summary.mjs reads from a Jest tier's results
// (numPassedTests, numFailedTests, numPendingTests, numTotalTests, numRuntimeErrorTestSuites,
// success) to the file named by its argument. A test is counted once: a subtest counts, its
// parent does not (unless the parent failed with no failing subtest). A package that failed
// with no failing test (a build error, a panic outside a test) is a suite that failed to run.
//
//	go test -json ./... | go run ./cmd/jestjson results.json
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go test -json ./... | jestjson <results.json>")
		os.Exit(2)
	}
	outcome := map[string]string{} // "package test" -> pass, fail or skip
	packageFailed := map[string]bool{}
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		line := scanner.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			fmt.Println(string(line)) // not an event: a build error printed as is
			continue
		}
		switch e.Action {
		case "output", "build-output":
			// Failures, logs and each top-level result; not every start or passing subtest.
			trimmed := strings.TrimSpace(e.Output)
			passedSubtest := strings.HasPrefix(trimmed, "--- PASS: ") && strings.Contains(strings.Fields(trimmed)[2], "/")
			if !strings.HasPrefix(trimmed, "=== ") && !passedSubtest {
				fmt.Print(e.Output)
			}
		case "pass", "fail", "skip":
			if e.Test != "" {
				outcome[e.Package+" "+e.Test] = e.Action
			} else if e.Action == "fail" {
				packageFailed[e.Package] = true
			}
		case "build-fail":
			packageFailed[e.Package] = true
		}
	}
	names := make([]string, 0, len(outcome))
	for name := range outcome {
		names = append(names, name)
	}
	sort.Strings(names)
	hasChild := func(name string, failedOnly bool) bool {
		for _, other := range names {
			if strings.HasPrefix(other, name+"/") && (!failedOnly || outcome[other] == "fail") {
				return true
			}
		}
		return false
	}
	counts := map[string]int{}
	failingPackages := map[string]bool{}
	for _, name := range names {
		result := outcome[name]
		if result == "fail" {
			failingPackages[strings.SplitN(name, " ", 2)[0]] = true
		}
		if hasChild(name, false) && !(result == "fail" && !hasChild(name, true)) {
			continue
		}
		counts[result]++
	}
	broken := 0
	for pkg := range packageFailed {
		if !failingPackages[pkg] {
			broken++
		}
	}
	results := map[string]any{
		"numPassedTests":            counts["pass"],
		"numFailedTests":            counts["fail"],
		"numPendingTests":           counts["skip"],
		"numTodoTests":              0,
		"numTotalTests":             counts["pass"] + counts["fail"] + counts["skip"],
		"numRuntimeErrorTestSuites": broken,
		"success":                   counts["fail"] == 0 && broken == 0 && len(names) > 0,
	}
	data, _ := json.MarshalIndent(results, "", "  ")
	if err := os.WriteFile(os.Args[1], append(data, '\n'), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("argocd harness: %d passed, %d failed, %d skipped\n", counts["pass"], counts["fail"], counts["skip"])
}
