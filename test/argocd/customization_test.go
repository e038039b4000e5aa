package argocdtest

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	argolua "tailor.local/argocdtest/argolua"
)

const configDir = "../../config/argocd"

// customization is what argocd-cm-patch.yaml gives Argo CD for each of Tailor's kinds.
type customization struct {
	health    string
	discovery string
	actions   map[string]string
}

// The kinds the patch customizes, each with the same scripts (their status is the same shape).
var tailorKinds = []string{"apps.tailor.dev/CloneSet", "apps.tailor.dev/InPlaceStatefulSet"}

// loadCustomization reads the shipped patch as Argo CD's settings manager reads argocd-cm
// (util/settings: keys resource.customizations.<type>.<group>_<kind>, the actions value as YAML),
// and checks that every kind of Tailor's carries the same health check and actions.
func loadCustomization(t *testing.T) customization {
	t.Helper()
	var cm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}
	readYAML(t, filepath.Join(configDir, "argocd-cm-patch.yaml"), &cm)
	if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || cm.Metadata.Name != "argocd-cm" {
		t.Fatalf("the patch is not for the ConfigMap argocd-cm: %s %s %s", cm.APIVersion, cm.Kind, cm.Metadata.Name)
	}
	byKind := map[string]*customization{}
	for key, value := range cm.Data {
		parts := strings.SplitN(key, ".", 4) // as settings.go's appendResourceOverridesFromSplitKeys
		if len(parts) < 4 || parts[0]+"."+parts[1] != "resource.customizations" {
			t.Fatalf("key %q is not a resource customization", key)
		}
		groupKind := strings.Split(parts[3], "_") // convertToOverrideKey
		// lua.go's GetConfigMapKey for the group/version/kind:
		if len(groupKind) != 2 || !contains(tailorKinds, groupKind[0]+"/"+groupKind[1]) {
			t.Fatalf("key %q does not name one of %v", key, tailorKinds)
		}
		c := byKind[groupKind[0]+"/"+groupKind[1]]
		if c == nil {
			c = &customization{}
			byKind[groupKind[0]+"/"+groupKind[1]] = c
		}
		switch parts[2] {
		case "health":
			c.health = value
		case "actions":
			var actions struct {
				Discovery   string `json:"discovery.lua"`
				Definitions []struct {
					Name      string `json:"name"`
					ActionLua string `json:"action.lua"`
				} `json:"definitions"`
				MergeBuiltinActions bool `json:"mergeBuiltinActions"`
			}
			if err := yaml.Unmarshal([]byte(value), &actions); err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			c.discovery = actions.Discovery
			c.actions = map[string]string{}
			for _, d := range actions.Definitions {
				c.actions[d.Name] = d.ActionLua
			}
		default:
			t.Fatalf("key %q: the patch sets only health and actions", key)
		}
	}
	first := byKind[tailorKinds[0]]
	for _, kind := range tailorKinds {
		c := byKind[kind]
		if c == nil || c.health == "" || c.discovery == "" {
			t.Fatalf("the patch has no health check and actions for %s", kind)
		}
		if !reflect.DeepEqual(*c, *first) {
			t.Fatalf("%s's scripts differ from %s's", kind, tailorKinds[0])
		}
	}
	return *first
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestConfigMapPatch(t *testing.T) {
	t.Run("generated from the Lua files", func(t *testing.T) {
		out, err := exec.Command("bash", filepath.Join(configDir, "generate.sh"), "--check").CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
	t.Run("carries each Lua file unchanged", func(t *testing.T) {
		c := loadCustomization(t)
		if c.health != readFile(t, filepath.Join(configDir, "health.lua")) {
			t.Error("the health script differs from health.lua")
		}
		if c.discovery != readFile(t, filepath.Join(configDir, "actions/discovery.lua")) {
			t.Error("the discovery script differs from actions/discovery.lua")
		}
		if got := keysOf(c.actions); !reflect.DeepEqual(got, []string{"canary", "pause", "promote", "restart", "resume"}) {
			t.Errorf("actions %v, want canary, pause, promote, restart, resume", got)
		}
		for name, script := range c.actions {
			if script != readFile(t, filepath.Join(configDir, "actions", name, "action.lua")) {
				t.Errorf("action %s differs from actions/%s/action.lua", name, name)
			}
		}
	})
	t.Run("the kustomize component patches with it", func(t *testing.T) {
		var k struct {
			Kind    string `json:"kind"`
			Patches []struct {
				Path string `json:"path"`
			} `json:"patches"`
		}
		readYAML(t, filepath.Join(configDir, "kustomization.yaml"), &k)
		if k.Kind != "Component" || len(k.Patches) != 1 || k.Patches[0].Path != "argocd-cm-patch.yaml" {
			t.Fatalf("kustomization.yaml: %+v", k)
		}
	})
}

func TestTailorHealth(t *testing.T) {
	script := loadCustomization(t).health
	var tests healthTests
	readYAML(t, "testdata/health_test.yaml", &tests)
	for _, test := range tests.Tests {
		for _, v := range vms {
			t.Run(v.name+"/"+test.InputPath, func(t *testing.T) {
				got, err := v.vm.ExecuteHealthLua(object(t, filepath.Join("testdata", test.InputPath)), script)
				if err != nil {
					t.Fatal(err)
				}
				if *got != test.HealthStatus {
					t.Fatalf("got %+v, want %+v", *got, test.HealthStatus)
				}
			})
		}
	}
}

// issue 32's table, step by step: the verdict Tailor's customization gives (wanted) and the one
// Argo CD's Kruise script gives with only the group renamed (what the issue observed).
func TestIssue32Table(t *testing.T) {
	tailor := loadCustomization(t).health
	kruise := readFile(t, filepath.Join(argoDir(t), "resource_customizations/apps.kruise.io/CloneSet/health.lua"))
	steps := []struct {
		name, file string
		wanted     []string
		kruise     argolua.HealthStatus
	}{
		{"created, all ready", "step1-created.yaml", []string{"Healthy"}, argolua.HealthStatus{Status: "Healthy", Message: "All Cloneset workloads are ready and updated"}},
		{"image rollout in progress", "step2-rollout.yaml", []string{"Progressing", "Degraded"}, argolua.HealthStatus{Status: "Progressing", Message: "Waiting for initialization"}},
		{"rollout done (after any edit)", "step3-rollout-done.yaml", []string{"Healthy"}, argolua.HealthStatus{Status: "Suspended", Message: "Cloneset needs manual intervention"}},
		{"partition holding pods back", "step4-partition.yaml", []string{"Suspended"}, argolua.HealthStatus{Status: "Suspended", Message: "Cloneset needs manual intervention"}},
		{"paused", "step5-paused.yaml", []string{"Suspended"}, argolua.HealthStatus{Status: "Suspended", Message: "Cloneset is paused"}},
		{"unpullable image, past progressDeadlineSeconds", "step6-deadline.yaml", []string{"Degraded"}, argolua.HealthStatus{Status: "Progressing", Message: "Waiting for initialization"}},
	}
	vm := argolua.VM{} // both from argocd-cm
	table := []string{"| step | Argo CD (Kruise's script) | Tailor's customization |", "|---|---|---|"}
	for _, step := range steps {
		t.Run(step.file, func(t *testing.T) {
			obj := object(t, filepath.Join("testdata", step.file))
			got, err := vm.ExecuteHealthLua(obj, tailor)
			if err != nil {
				t.Fatal(err)
			}
			before, err := vm.ExecuteHealthLua(obj, kruise)
			if err != nil {
				t.Fatal(err)
			}
			table = append(table, fmt.Sprintf("| %s | %s %q | %s %q |", step.name, before.Status, before.Message, got.Status, got.Message))
			found := false
			for _, w := range step.wanted {
				found = found || got.Status == w
			}
			if !found {
				t.Errorf("Tailor's customization says %+v, issue 32 wants %v", *got, step.wanted)
			}
			if *before != step.kruise {
				t.Errorf("Argo CD's Kruise script says %+v here; issue 32 observed %+v", *before, step.kruise)
			}
		})
	}
	t.Log("\n" + strings.Join(table, "\n"))
}

func TestTailorActions(t *testing.T) {
	c := loadCustomization(t)
	var tests actionTests
	readYAML(t, "testdata/action_test.yaml", &tests)
	vm := argolua.VM{} // the API server's: libraries off
	for _, test := range tests.DiscoveryTests {
		t.Run("discovery/"+test.InputPath, func(t *testing.T) {
			got, err := vm.ExecuteResourceActionDiscovery(object(t, filepath.Join("testdata", test.InputPath)), []string{c.discovery})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(test.Result) {
				t.Fatalf("got %+v, want %+v", got, test.Result)
			}
			for _, action := range got {
				if !containsAction(test.Result, action) {
					t.Fatalf("%+v is not among the expected %+v", action, test.Result)
				}
			}
		})
	}
	stamp := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
	for _, test := range tests.ActionTests {
		t.Run(fmt.Sprintf("actions/%s/%s", test.Action, test.InputPath), func(t *testing.T) {
			script, ok := c.actions[test.Action]
			if !ok {
				t.Fatalf("no action %q", test.Action)
			}
			before := time.Now().UTC().Truncate(time.Second)
			got, err := vm.ExecuteResourceAction(object(t, filepath.Join("testdata", test.InputPath)), script, test.Parameters)
			if err != nil {
				t.Fatal(err)
			}
			got = canonical(t, got)
			if at := setRestartedAt(got, "0001-01-01T00:00:00Z"); test.Action == "restart" {
				when, err := time.Parse(time.RFC3339, at)
				if !stamp.MatchString(at) || err != nil || when.Before(before) || when.After(time.Now().UTC()) {
					t.Fatalf("restartedAt %q is not the current UTC time", at)
				}
			}
			want := canonical(t, object(t, filepath.Join("testdata", test.ExpectedOutputPath)))
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("output differs from %s:\n got %s\nwant %s", test.ExpectedOutputPath, jsonOf(got), jsonOf(want))
			}
		})
	}
}

// A randomized pass: the fixtures (Tailor's and Argo CD's Kruise ones) with fields removed or
// replaced by values of odd types. The health check always answers with a valid status and a
// message, and the actions never fail, in both library settings.
func TestNeverALuaError(t *testing.T) {
	c := loadCustomization(t)
	var seeds []map[string]any
	for _, pattern := range []string{"testdata/*.yaml", "testdata/actions/*.yaml",
		filepath.Join(argoDir(t), "resource_customizations/apps.kruise.io/CloneSet/testdata/*.yaml")} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.yaml") {
				seeds = append(seeds, object(t, f))
			}
		}
	}
	if len(seeds) < 30 {
		t.Fatalf("only %d seed objects", len(seeds))
	}
	odd := []func() any{
		func() any { return nil }, func() any { return true }, func() any { return false },
		func() any { return 0.0 }, func() any { return -1.0 }, func() any { return 1.5 }, func() any { return 1e300 },
		func() any { return -1e300 }, func() any { return "" }, func() any { return "x" }, func() any { return "100%" },
		func() any { return "50%" }, func() any { return "-5%" }, func() any { return "101%" }, func() any { return "3" },
		func() any { return "True" }, func() any { return map[string]any{} }, func() any { return []any{} },
		func() any { return []any{"Stalled", 1.0} },
		func() any { return []any{map[string]any{"type": "Stalled", "status": "True"}} },
		func() any { return []any{map[string]any{"type": "Reconciling", "status": "True", "message": 3.0}} },
		func() any {
			return []any{map[string]any{"type": "Progressing", "reason": "ProgressDeadlineExceeded", "message": map[string]any{}}}
		},
	}
	paths := [][]string{
		{"kind"}, {"metadata"}, {"metadata", "generation"}, {"metadata", "annotations"},
		{"metadata", "annotations", "rollouts.kruise.io/in-progressing"}, {"spec"}, {"spec", "replicas"},
		{"spec", "updateStrategy"}, {"spec", "updateStrategy", "partition"}, {"spec", "updateStrategy", "paused"},
		{"spec", "updateStrategy", "rollingUpdate"}, {"spec", "updateStrategy", "rollingUpdate", "partition"},
		{"spec", "updateStrategy", "rollingUpdate", "paused"}, {"spec", "template"},
		{"spec", "template", "metadata"}, {"spec", "template", "metadata", "annotations"},
		{"status"}, {"status", "observedGeneration"}, {"status", "replicas"}, {"status", "readyReplicas"},
		{"status", "availableReplicas"}, {"status", "updatedReplicas"}, {"status", "updatedReadyReplicas"},
		{"status", "updatedAvailableReplicas"}, {"status", "expectedUpdatedReplicas"}, {"status", "conditions"},
	}
	valid := map[string]bool{"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true}
	rng := rand.New(rand.NewPCG(32, 3))
	const rounds = 500
	for _, v := range vms {
		for i := range rounds {
			obj := canonical(t, seeds[rng.IntN(len(seeds))])
			for range 1 + rng.IntN(4) {
				if rng.IntN(3) == 0 {
					mutateCondition(obj, rng, odd)
					continue
				}
				set(obj, paths[rng.IntN(len(paths))], odd[rng.IntN(len(odd))](), rng.IntN(4) == 0)
			}
			health, err := v.vm.ExecuteHealthLua(obj, c.health)
			if err != nil || !valid[health.Status] || health.Message == "" {
				t.Fatalf("%s, round %d: health %+v, error %v for %s", v.name, i, health, err, jsonOf(obj))
			}
			if _, err := v.vm.ExecuteResourceActionDiscovery(obj, []string{c.discovery}); err != nil {
				t.Fatalf("%s, round %d: discovery: %v for %s", v.name, i, err, jsonOf(obj))
			}
			for name, script := range c.actions {
				if _, err := v.vm.ExecuteResourceAction(canonical(t, obj), script, nil); err != nil {
					t.Fatalf("%s, round %d: %s: %v for %s", v.name, i, name, err, jsonOf(obj))
				}
			}
		}
	}
	t.Logf("%d objects, each in both library settings: health, discovery and %d actions without an error", rounds, len(c.actions))
}

// set puts value at path (creating maps on the way), or deletes the field when remove is true.
func set(obj map[string]any, path []string, value any, remove bool) {
	m := obj
	for _, key := range path[:len(path)-1] {
		next, ok := m[key].(map[string]any)
		if !ok {
			if remove {
				return
			}
			next = map[string]any{}
			m[key] = next
		}
		m = next
	}
	if remove {
		delete(m, path[len(path)-1])
	} else {
		m[path[len(path)-1]] = value
	}
}

// mutateCondition changes one field of one status condition.
func mutateCondition(obj map[string]any, rng *rand.Rand, odd []func() any) {
	status, _ := obj["status"].(map[string]any)
	conditions, _ := status["conditions"].([]any)
	if len(conditions) == 0 {
		return
	}
	i := rng.IntN(len(conditions))
	c, ok := conditions[i].(map[string]any)
	if !ok || rng.IntN(5) == 0 {
		conditions[i] = odd[rng.IntN(len(odd))]()
		return
	}
	fields := []string{"type", "status", "reason", "message"}
	field := fields[rng.IntN(len(fields))]
	if rng.IntN(3) == 0 {
		c[field] = []string{"Stalled", "Reconciling", "Progressing", "True", "False", "ProgressDeadlineExceeded"}[rng.IntN(6)]
	} else {
		c[field] = odd[rng.IntN(len(odd))]()
	}
}

// Argo CD's engine as the harness runs it: the same gopher-lua, and lua.go's own lines.
func TestArgoCDEnvironment(t *testing.T) {
	module := argoDir(t)
	t.Run("Lua libraries pinned as Argo CD's go.mod pins them", func(t *testing.T) {
		argo := readFile(t, filepath.Join(module, "go.mod"))
		ours := readFile(t, "go.mod")
		for _, dep := range []string{"github.com/yuin/gopher-lua", "layeh.com/gopher-json"} {
			re := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(dep) + ` (v\S+)`)
			a, o := re.FindStringSubmatch(argo), re.FindStringSubmatch(ours)
			if a == nil || o == nil || a[1] != o[1] {
				t.Errorf("%s: Argo CD requires %v, the harness %v", dep, a, o)
			}
		}
	})
	t.Run("the VM set up as lua.go sets it up", func(t *testing.T) {
		argo := squash(readFile(t, filepath.Join(module, "util/lua/lua.go")))
		ours := squash(readFile(t, "argolua/vm.go"))
		same := []string{
			"l := lua.NewState(lua.Options{ SkipOpenLibs: !vm.UseOpenLibs, }) defer l.Close()",
			"{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, // load our 'safe' version of the OS library {lua.OsLibName, OpenSafeOs}, } {",
			"l.PreloadModule(lua.OsLibName, SafeOsLoader)",
			"ctx, cancel := context.WithTimeout(context.Background(), 1*time.Second) defer cancel() l.SetContext(ctx)",
			`l.SetGlobal("actionParams", actionParams)`,
			`l.SetGlobal("obj", objectValue) err := l.DoString(script)`,
			"if apiErr.Type == lua.ApiErrorRun { apiErr.StackTrace = \"\" err = apiErr }",
			"returnValue := l.Get(-1) if returnValue.Type() == lua.LTTable { jsonBytes, err := luajson.Encode(returnValue)",
			"if noAvailableActions(jsonBytes) { continue }",
			"resourceAction := ResourceAction{Name: key, Disabled: isActionDisabled(value)}",
			"if emptyResourceActionFromLua(value) {",
			"cleanReturnedObj(",
		}
		for _, s := range same {
			s = squash(s)
			if !strings.Contains(argo, strings.ReplaceAll(s, "ResourceAction{", "appv1.ResourceAction{")) {
				t.Errorf("lua.go no longer says %q: update argolua/vm.go", s)
			}
			if !strings.Contains(ours, s) {
				t.Errorf("argolua/vm.go does not say %q", s)
			}
		}
		if !strings.Contains(argo, squash("objectValue := decodeValue(l, obj.Object)")) {
			t.Error("lua.go no longer decodes obj.Object into `obj`")
		}
	})
	// Argo CD's OpenSafeOs registers os.time and os.date under the global `table`, not `os`: a
	// script from argocd-cm reaches them only through require("os"), as the restart action does.
	t.Run("a script from argocd-cm gets no string, math or os global, and require(\"os\").date", func(t *testing.T) {
		probe := `return { status = "Healthy", message = type(string) .. " " .. type(math) .. " " .. type(os) .. " " .. type(require("os").date) }`
		for _, c := range []struct {
			vm   argolua.VM
			want string
		}{{argolua.VM{}, "nil nil nil function"}, {argolua.VM{UseOpenLibs: true}, "table table table function"}} {
			got, err := c.vm.ExecuteHealthLua(map[string]any{}, probe)
			if err != nil || got.Message != c.want {
				t.Errorf("UseOpenLibs %v: %+v %v, want %q", c.vm.UseOpenLibs, got, err, c.want)
			}
		}
	})
	t.Run("the extracted code is the module's", func(t *testing.T) {
		extracted := readFile(t, "argolua/zz_argocd_oslib_safe.go")
		original := readFile(t, filepath.Join(module, "util/lua/oslib_safe.go"))
		if !strings.HasSuffix(extracted, original) {
			t.Error("argolua/zz_argocd_oslib_safe.go is not util/lua/oslib_safe.go: run run.sh")
		}
	})
	t.Run("argocd-cm keys parsed as settings.go parses them", func(t *testing.T) {
		settings := squash(readFile(t, filepath.Join(module, "util/settings/settings.go")))
		for _, s := range []string{`parts := strings.SplitN(k, ".", 4)`, `parts := strings.Split(groupKind, "_")`,
			`case "health": overrideVal.HealthLua = v`, `case "actions": overrideVal.Actions = v`} {
			if !strings.Contains(settings, squash(s)) {
				t.Errorf("settings.go no longer says %q", s)
			}
		}
	})
}

// squash joins a source's lines with one space, indentation removed.
func squash(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
}
