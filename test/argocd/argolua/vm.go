// Package lua runs Lua scripts as Argo CD's util/lua does (github.com/argoproj/argo-cd/v3). The
// zz_argocd_*.go files are Argo CD's own code, extracted from its released module by
// ../cmd/extract (run.sh does it before the build); this file mirrors the parts of lua.go that
// import Argo CD's API types: the VM and how it opens libraries, sets `obj` and `actionParams`,
// bounds a run to one second, and turns the returned table into a health status, a list of
// actions or a patched object. TestArgoCDEnvironment compares these lines with lua.go's, so a
// release that changes them fails the harness instead of testing in a different engine.
package lua

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	lua "github.com/yuin/gopher-lua"
	luajson "layeh.com/gopher-json"
)

// HealthStatus is gitops-engine's health.HealthStatus as the script fills it.
type HealthStatus struct {
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
}

// ResourceAction is appv1.ResourceAction's JSON form.
type ResourceAction struct {
	Name        string           `json:"name,omitempty"`
	Params      []map[string]any `json:"params,omitempty"`
	Disabled    bool             `json:"disabled,omitempty"`
	IconClass   string           `json:"iconClass,omitempty"`
	DisplayName string           `json:"displayName,omitempty"`
}

// VM is Argo CD's lua.VM. UseOpenLibs is false for a script from argocd-cm unless
// resource.customizations.useOpenLibs.<group_kind> says true, and always false for actions (the
// API server's VM); Argo CD's built-in health scripts run with it true.
type VM struct {
	UseOpenLibs bool
}

// runLua is lua.go's runLuaWithResourceActionParameters.
func (vm VM) runLua(obj map[string]any, script string, params map[string]string) (*lua.LState, error) {
	l := lua.NewState(lua.Options{
		SkipOpenLibs: !vm.UseOpenLibs,
	})
	defer l.Close()
	// Opens table library to allow access to functions to manipulate tables
	for _, pair := range []struct {
		n string
		f lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		// load our 'safe' version of the OS library
		{lua.OsLibName, OpenSafeOs},
	} {
		if err := l.CallByParam(lua.P{
			Fn:      l.NewFunction(pair.f),
			NRet:    0,
			Protect: true,
		}, lua.LString(pair.n)); err != nil {
			panic(err)
		}
	}
	// preload our 'safe' version of the OS library. Allows the 'local os = require("os")' to work
	l.PreloadModule(lua.OsLibName, SafeOsLoader)

	ctx, cancel := context.WithTimeout(context.Background(), 1*time.Second)
	defer cancel()
	l.SetContext(ctx)

	// Inject action parameters as a hash table global variable
	actionParams := l.CreateTable(0, len(params))
	for name, value := range params {
		actionParams.RawSetH(lua.LString(name), decodeValue(l, value))
	}
	l.SetGlobal("actionParams", actionParams) // Set the actionParams table as a global variable

	objectValue := decodeValue(l, obj)
	l.SetGlobal("obj", objectValue)
	err := l.DoString(script)

	// Remove the default lua stack trace from execution errors since these
	// errors will make it back to the user
	var apiErr *lua.ApiError
	if errors.As(err, &apiErr) {
		if apiErr.Type == lua.ApiErrorRun {
			apiErr.StackTrace = ""
			err = apiErr
		}
	}

	return l, err
}

var validHealth = map[string]bool{
	"Unknown": true, "Progressing": true, "Suspended": true, "Healthy": true, "Degraded": true, "Missing": true,
}

// ExecuteHealthLua is lua.go's ExecuteHealthLua.
func (vm VM) ExecuteHealthLua(obj map[string]any, script string) (*HealthStatus, error) {
	l, err := vm.runLua(obj, script, nil)
	if err != nil {
		return nil, err
	}
	returnValue := l.Get(-1)
	if returnValue.Type() == lua.LTTable {
		jsonBytes, err := luajson.Encode(returnValue)
		if err != nil {
			return nil, err
		}
		healthStatus := &HealthStatus{}
		err = json.Unmarshal(jsonBytes, healthStatus)
		if err != nil {
			// As lua.go: errors.As matches any *json.UnmarshalTypeError (an empty table is
			// encoded as an array, and a field of the wrong type lands here too).
			typeError := &json.UnmarshalTypeError{Value: "array"}
			if errors.As(err, &typeError) {
				return &HealthStatus{}, nil
			}
			return nil, err
		}
		if !validHealth[healthStatus.Status] {
			return &HealthStatus{Status: "Unknown", Message: "Lua returned an invalid health status"}, nil
		}
		return healthStatus, nil
	} else if returnValue.Type() == lua.LTNil {
		return &HealthStatus{}, nil
	}
	return nil, fmt.Errorf("expect %s output from Lua script, not %s", "table", returnValue.Type().String())
}

// ExecuteResourceActionDiscovery is lua.go's ExecuteResourceActionDiscovery.
func (vm VM) ExecuteResourceActionDiscovery(obj map[string]any, scripts []string) ([]ResourceAction, error) {
	if len(scripts) == 0 {
		return nil, errors.New("no action discovery script provided")
	}
	availableActionsMap := make(map[string]ResourceAction)
	for _, script := range scripts {
		l, err := vm.runLua(obj, script, nil)
		if err != nil {
			return nil, err
		}
		returnValue := l.Get(-1)
		if returnValue.Type() != lua.LTTable {
			return nil, fmt.Errorf("expect %s output from Lua script, not %s", "table", returnValue.Type().String())
		}
		jsonBytes, err := luajson.Encode(returnValue)
		if err != nil {
			return nil, fmt.Errorf("error in converting to lua table: %w", err)
		}
		if noAvailableActions(jsonBytes) {
			continue
		}
		actionsMap := make(map[string]any)
		if err := json.Unmarshal(jsonBytes, &actionsMap); err != nil {
			return nil, fmt.Errorf("error unmarshaling action table: %w", err)
		}
		for key, value := range actionsMap {
			resourceAction := ResourceAction{Name: key, Disabled: isActionDisabled(value)}
			if _, exist := availableActionsMap[key]; exist {
				continue
			}
			if emptyResourceActionFromLua(value) {
				availableActionsMap[key] = resourceAction
				continue
			}
			resourceActionBytes, err := json.Marshal(value)
			if err != nil {
				return nil, fmt.Errorf("error marshaling resource action: %w", err)
			}
			if err := json.Unmarshal(resourceActionBytes, &resourceAction); err != nil {
				return nil, fmt.Errorf("error unmarshaling resource action: %w", err)
			}
			availableActionsMap[key] = resourceAction
		}
	}
	availableActions := make([]ResourceAction, 0, len(availableActionsMap))
	for _, action := range availableActionsMap {
		availableActions = append(availableActions, action)
	}
	return availableActions, nil
}

// ExecuteResourceAction is lua.go's ExecuteResourceAction for an action that returns the object
// it patched (the old-style output, as Argo CD's Deployment actions and Tailor's do): the patched
// object, cleaned with Argo CD's cleanReturnedObj.
func (vm VM) ExecuteResourceAction(obj map[string]any, script string, params map[string]string) (map[string]any, error) {
	l, err := vm.runLua(obj, script, params)
	if err != nil {
		return nil, err
	}
	returnValue := l.Get(-1)
	if returnValue.Type() != lua.LTTable {
		return nil, fmt.Errorf("expect %s output from Lua script, not %s", "table", returnValue.Type().String())
	}
	jsonBytes, err := luajson.Encode(returnValue)
	if err != nil {
		return nil, err
	}
	jsonString := bytes.NewBuffer(jsonBytes).String()
	if len(jsonString) < 2 {
		return nil, errors.New("Lua output was not a valid json object or array")
	}
	if jsonString[0] == '[' && jsonString[len(jsonString)-1] == ']' {
		return nil, errors.New("the harness handles old-style action output (the patched object) only")
	}
	newObj := map[string]any{}
	if err := json.Unmarshal(jsonBytes, &newObj); err != nil {
		return nil, err
	}
	return cleanReturnedObj(newObj, obj), nil
}
