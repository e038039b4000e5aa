// The CSI services of tailor-csi-hostdir (main.go): identity, controller (create, delete and
// expand a volume directory) and node (bind-mount it where the kubelet asks), and the kubelet's
// plugin registration. Must not: act outside --root and the kubelet's target paths.
package main

import (
	"context"
	"errors"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// volumes are directories under root, each with its recorded capacity in <id>.size beside it.
type volumes struct{ root string }

// A volume id is the name external-provisioner gives (pvc-<uid>): nothing that leaves root.
var validID = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,252}$`)

func (v *volumes) dir(id string) (string, error) {
	if !validID.MatchString(id) {
		return "", status.Errorf(codes.InvalidArgument, "volume id %q is not a plain name", id)
	}
	return filepath.Join(v.root, id), nil
}

func (v *volumes) setSize(id string, bytes int64) error {
	dir, err := v.dir(id)
	if err != nil {
		return err
	}
	return os.WriteFile(dir+".size", []byte(strconv.FormatInt(bytes, 10)), 0o644)
}

func (v *volumes) size(id string) (int64, error) {
	dir, err := v.dir(id)
	if err != nil {
		return 0, err
	}
	text, err := os.ReadFile(dir + ".size")
	if err != nil {
		return 0, status.Errorf(codes.NotFound, "volume %s: %v", id, err)
	}
	return strconv.ParseInt(strings.TrimSpace(string(text)), 10, 64)
}

// ---- identity

type identity struct {
	csi.UnimplementedIdentityServer
}

func (identity) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: driverName, VendorVersion: "0.1.0"}, nil
}

func (identity) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	service := func(t csi.PluginCapability_Service_Type) *csi.PluginCapability {
		return &csi.PluginCapability{Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{Type: t}}}
	}
	online := &csi.PluginCapability{Type: &csi.PluginCapability_VolumeExpansion_{
		VolumeExpansion: &csi.PluginCapability_VolumeExpansion{Type: csi.PluginCapability_VolumeExpansion_ONLINE},
	}}
	return &csi.GetPluginCapabilitiesResponse{
		Capabilities: []*csi.PluginCapability{service(csi.PluginCapability_Service_CONTROLLER_SERVICE), online},
	}, nil
}

func (identity) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

// ---- controller

type controller struct {
	csi.UnimplementedControllerServer
	vols *volumes
}

func (c *controller) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	dir, err := c.vols.dir(req.GetName())
	if err != nil {
		return nil, err
	}
	bytes := req.GetCapacityRange().GetRequiredBytes()
	// Writable by any pod user, as the default class's directories are (the umask would narrow it).
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, status.Errorf(codes.Internal, "creating %s: %v", dir, err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		return nil, status.Errorf(codes.Internal, "opening %s to every user: %v", dir, err)
	}
	// A retried create keeps the size already recorded.
	if recorded, err := c.vols.size(req.GetName()); err == nil {
		bytes = recorded
	} else if err := c.vols.setSize(req.GetName(), bytes); err != nil {
		return nil, status.Errorf(codes.Internal, "recording the size of %s: %v", dir, err)
	}
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: req.GetName(), CapacityBytes: bytes}}, nil
}

func (c *controller) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	dir, err := c.vols.dir(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, status.Errorf(codes.Internal, "removing %s: %v", dir, err)
	}
	_ = os.Remove(dir + ".size")
	return &csi.DeleteVolumeResponse{}, nil
}

func (c *controller) ControllerExpandVolume(_ context.Context, req *csi.ControllerExpandVolumeRequest) (*csi.ControllerExpandVolumeResponse, error) {
	current, err := c.vols.size(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	bytes := max(current, req.GetCapacityRange().GetRequiredBytes())
	if err := c.vols.setSize(req.GetVolumeId(), bytes); err != nil {
		return nil, status.Errorf(codes.Internal, "recording the size of %s: %v", req.GetVolumeId(), err)
	}
	// A directory needs nothing on the node to grow.
	return &csi.ControllerExpandVolumeResponse{CapacityBytes: bytes, NodeExpansionRequired: false}, nil
}

func (c *controller) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if _, err := c.vols.size(req.GetVolumeId()); err != nil {
		return nil, err
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeCapabilities: req.GetVolumeCapabilities(),
	}}, nil
}

func (c *controller) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	rpc := func(t csi.ControllerServiceCapability_RPC_Type) *csi.ControllerServiceCapability {
		return &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{
			Rpc: &csi.ControllerServiceCapability_RPC{Type: t},
		}}
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: []*csi.ControllerServiceCapability{
		rpc(csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME),
		rpc(csi.ControllerServiceCapability_RPC_EXPAND_VOLUME),
	}}, nil
}

// ---- node

type node struct {
	csi.UnimplementedNodeServer
	vols   *volumes
	nodeID string
}

func (n *node) NodePublishVolume(_ context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	source, err := n.vols.dir(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	target := req.GetTargetPath()
	if target == "" {
		return nil, status.Error(codes.InvalidArgument, "no target path")
	}
	if mounted(target) {
		return &csi.NodePublishVolumeResponse{}, nil
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return nil, status.Errorf(codes.Internal, "creating %s: %v", target, err)
	}
	if err := syscall.Mount(source, target, "", syscall.MS_BIND, ""); err != nil {
		return nil, status.Errorf(codes.Internal, "bind-mounting %s on %s: %v", source, target, err)
	}
	if req.GetReadonly() {
		flags := uintptr(syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_RDONLY)
		if err := syscall.Mount("", target, "", flags, ""); err != nil {
			_ = syscall.Unmount(target, 0)
			return nil, status.Errorf(codes.Internal, "remounting %s read-only: %v", target, err)
		}
	}
	return &csi.NodePublishVolumeResponse{}, nil
}

func (n *node) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	target := req.GetTargetPath()
	if mounted(target) {
		if err := syscall.Unmount(target, 0); err != nil {
			return nil, status.Errorf(codes.Internal, "unmounting %s: %v", target, err)
		}
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, status.Errorf(codes.Internal, "removing %s: %v", target, err)
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

func (n *node) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: n.nodeID}, nil
}

func (n *node) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{}, nil
}

// mounted says whether path is a mount point: its device differs from its parent's (a bind mount
// of a directory of the same filesystem keeps the device, so /proc/self/mountinfo decides then).
func mounted(path string) bool {
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	clean := filepath.Clean(path)
	for _, line := range strings.Split(string(info), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 4 && fields[4] == clean {
			return true
		}
	}
	return false
}

// ---- the kubelet's plugin registration (what node-driver-registrar serves)

type registrar struct {
	registration.UnimplementedRegistrationServer
	endpoint string
}

func registrationServer(csiSocket string) *grpc.Server {
	s := grpc.NewServer()
	registration.RegisterRegistrationServer(s, &registrar{endpoint: csiSocket})
	return s
}

func (r *registrar) GetInfo(context.Context, *registration.InfoRequest) (*registration.PluginInfo, error) {
	return &registration.PluginInfo{
		Type:              registration.CSIPlugin,
		Name:              driverName,
		Endpoint:          r.endpoint,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

func (r *registrar) NotifyRegistrationStatus(_ context.Context, s *registration.RegistrationStatus) (*registration.RegistrationStatusResponse, error) {
	if !s.GetPluginRegistered() {
		// The kubelet refused the plugin: nothing of this node can mount its volumes; say so and stop.
		log.Fatalf("the kubelet refused the registration: %s", s.GetError())
	}
	log.Print("registered with the kubelet")
	return &registration.RegistrationStatusResponse{}, nil
}
