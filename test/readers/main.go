// Command verdicts prints what the tools that gate deploys say of one object, read as JSON on
// stdin: Argo CD (the health check of config/argocd, in Argo CD's own Lua engine: ../argocd) and
// kstatus (sigs.k8s.io/cli-utils, what Flux's `wait: true` and Helm 4's `--wait` use). The e2e
// test/e2e/readers.test.ts runs it at each step of a CloneSet's life.
//
//	verdicts <health.lua> < object.json   # {"argocd":{"status","message"},"kstatus":{"status","message"}}
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	lua "tailor.local/argocdtest/argolua"
)

type verdict struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "verdicts:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: verdicts <health.lua> < object.json")
	}
	script, err := os.ReadFile(os.Args[1])
	if err != nil {
		return err
	}
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	// Decoded as both tools receive it: integers as int64 (apimachinery's JSON decoding).
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return fmt.Errorf("the object is not a Kubernetes object in JSON: %w", err)
	}
	// Argo CD runs a health script from argocd-cm without the open libraries (lua.VM's default).
	health, err := lua.VM{}.ExecuteHealthLua(u.Object, string(script))
	if err != nil {
		return fmt.Errorf("argo cd's engine: %w", err)
	}
	computed, err := status.Compute(u)
	if err != nil {
		return fmt.Errorf("kstatus: %w", err)
	}
	out := map[string]verdict{
		"argocd":  {Status: health.Status, Message: health.Message},
		"kstatus": {Status: computed.Status.String(), Message: computed.Message},
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
