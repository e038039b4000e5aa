// The Argo CD harness: Argo CD's own Lua engine setup (package argolua, extracted from its
// released module by cmd/extract) runs
//   - Argo CD's built-in health script for OpenKruise's CloneSet against Argo CD's own fixtures
//     and its health_test.yaml, and Argo CD's Deployment actions against their action_test.yaml:
//     the reference that this harness reproduces Argo CD's verdicts;
//   - Tailor's customization as config/argocd/argocd-cm-patch.yaml carries it, against
//     testdata/health_test.yaml and testdata/action_test.yaml (Argo CD's test formats), and over
//     generated objects with fields missing or of odd types (never a Lua error).
//
// run.sh sets ARGOCD_MODULE_DIR (the downloaded github.com/argoproj/argo-cd/v3 module) and runs
// `go test -json`, which hack/test.sh counts.
package argocdtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"sigs.k8s.io/yaml"

	argolua "tailor.local/argocdtest/argolua"
)

// healthTests and actionTests are Argo CD's test file formats (util/lua/health_test.go and
// custom_actions_test.go); sigs.k8s.io/yaml matches keys case-insensitively, as Argo CD's does
// (its Kruise file spells some `inputpath`).
type healthTests struct {
	Tests []struct {
		InputPath    string               `json:"inputPath"`
		HealthStatus argolua.HealthStatus `json:"healthStatus"`
	} `json:"tests"`
}

type actionTests struct {
	DiscoveryTests []struct {
		InputPath string                   `json:"inputPath"`
		Result    []argolua.ResourceAction `json:"result"`
	} `json:"discoveryTests"`
	ActionTests []struct {
		Action               string            `json:"action"`
		InputPath            string            `json:"inputPath"`
		ExpectedOutputPath   string            `json:"expectedOutputPath"`
		ExpectedErrorMessage string            `json:"expectedErrorMessage"`
		Parameters           map[string]string `json:"parameters"`
	} `json:"actionTests"`
}

func argoDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ARGOCD_MODULE_DIR")
	if dir == "" {
		t.Fatal("ARGOCD_MODULE_DIR is not set: run test/argocd/run.sh")
	}
	return dir
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func object(t *testing.T, path string) map[string]any {
	t.Helper()
	obj := map[string]any{}
	readYAML(t, path, &obj)
	return obj
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Both ways Argo CD runs a health script: from argocd-cm (libraries off unless
// resource.customizations.useOpenLibs says so) and built in (libraries on).
var vms = []struct {
	name string
	vm   argolua.VM
}{{"argocd-cm", argolua.VM{UseOpenLibs: false}}, {"open-libs", argolua.VM{UseOpenLibs: true}}}

// The reference: Argo CD's health_test.yaml for apps.kruise.io/CloneSet, in this harness.
func TestArgoCDKruiseHealthReference(t *testing.T) {
	dir := filepath.Join(argoDir(t), "resource_customizations/apps.kruise.io/CloneSet")
	script := readFile(t, filepath.Join(dir, "health.lua"))
	var tests healthTests
	readYAML(t, filepath.Join(dir, "health_test.yaml"), &tests)
	if len(tests.Tests) == 0 {
		t.Fatal("Argo CD's health_test.yaml lists no tests")
	}
	for _, test := range tests.Tests {
		for _, v := range vms {
			t.Run(v.name+"/"+test.InputPath, func(t *testing.T) {
				got, err := v.vm.ExecuteHealthLua(object(t, filepath.Join(dir, test.InputPath)), script)
				if err != nil {
					t.Fatal(err)
				}
				if *got != test.HealthStatus {
					t.Fatalf("got %+v, Argo CD's health_test.yaml expects %+v", *got, test.HealthStatus)
				}
			})
		}
	}
}

// The reference for actions: Argo CD's apps/Deployment action_test.yaml (discovery, restart,
// pause, resume, scale), run as the API server runs actions (libraries off), compared as Argo CD's
// own test does (its normalizer for Deployments: status, creationTimestamp, generation and the
// restartedAt value ignored; only the fields the expected output sets compared).
func TestArgoCDDeploymentActionsReference(t *testing.T) {
	dir := filepath.Join(argoDir(t), "resource_customizations/apps/Deployment/actions")
	var tests actionTests
	readYAML(t, filepath.Join(dir, "action_test.yaml"), &tests)
	vm := argolua.VM{}
	discovery := readFile(t, filepath.Join(dir, "discovery.lua"))
	for _, test := range tests.DiscoveryTests {
		t.Run("discovery/"+test.InputPath, func(t *testing.T) {
			got, err := vm.ExecuteResourceActionDiscovery(object(t, filepath.Join(dir, test.InputPath)), []string{discovery})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(test.Result) {
				t.Fatalf("got %d actions, want %d", len(got), len(test.Result))
			}
			for _, action := range got {
				if !containsAction(test.Result, action) {
					t.Fatalf("%+v is not among the expected %+v", action, test.Result)
				}
			}
		})
	}
	for _, test := range tests.ActionTests {
		t.Run(fmt.Sprintf("actions/%s/%s", test.Action, test.InputPath), func(t *testing.T) {
			script := readFile(t, filepath.Join(dir, test.Action, "action.lua"))
			got, err := vm.ExecuteResourceAction(object(t, filepath.Join(dir, test.InputPath)), script, test.Parameters)
			if test.ExpectedErrorMessage != "" {
				if err == nil || err.Error() != test.ExpectedErrorMessage {
					t.Fatalf("got error %v, want %q", err, test.ExpectedErrorMessage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := object(t, filepath.Join(dir, test.ExpectedOutputPath))
			normalize := func(o map[string]any) map[string]any {
				o = canonical(t, o)
				delete(o, "status")
				meta := o["metadata"].(map[string]any)
				delete(meta, "creationTimestamp")
				delete(meta, "generation")
				setRestartedAt(o, "0001-01-01T00:00:00Z")
				return o
			}
			// gitops-engine's diff.Diff compares the fields the expected object sets (its
			// RemoveMapFields), nulls dropped.
			w := withoutNulls(normalize(want)).(map[string]any)
			g := restrictTo(w, withoutNulls(normalize(got)))
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("output differs from %s:\n got %s\nwant %s", test.ExpectedOutputPath, jsonOf(g), jsonOf(w))
			}
		})
	}
}

func containsAction(list []argolua.ResourceAction, action argolua.ResourceAction) bool {
	for _, a := range list {
		if reflect.DeepEqual(a, action) {
			return true
		}
	}
	return false
}

// canonical is o through JSON (numbers as float64, as both sides decode them).
func canonical(t *testing.T, o map[string]any) map[string]any {
	t.Helper()
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonOf(o any) string {
	data, _ := json.Marshal(o)
	return string(data)
}

// setRestartedAt replaces the template's restartedAt annotation, if any, and returns the old one.
func setRestartedAt(o map[string]any, value string) string {
	spec, _ := o["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	meta, _ := template["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	old, ok := annotations["kubectl.kubernetes.io/restartedAt"].(string)
	if ok {
		annotations["kubectl.kubernetes.io/restartedAt"] = value
	}
	return old
}

// keysOf is sorted for stable messages.
func keysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func withoutNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if e != nil {
				out[k] = withoutNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutNulls(e)
		}
		return out
	}
	return v
}

// restrictTo keeps of live what config sets, as gitops-engine's diff.RemoveMapFields and
// RemoveListFields do (list elements beyond config's are kept).
func restrictTo(config, live any) any {
	switch c := config.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return live
		}
		out := map[string]any{}
		for k, cv := range c {
			if lv, ok := l[k]; ok {
				out[k] = restrictTo(cv, lv)
			}
		}
		return out
	case []any:
		l, ok := live.([]any)
		if !ok {
			return live
		}
		out := make([]any, len(l))
		for i, lv := range l {
			if i < len(c) {
				lv = restrictTo(c[i], lv)
			}
			out[i] = lv
		}
		return out
	}
	return live
}
