// tailor-csi-hostdir: the test bed's expandable storage (docs/decisions/0098-claims-expand-in-place.md).
// A CSI driver whose volumes are directories under --root on the host, bind-mounted into pods by
// the node plugin, so Kubernetes' own expansion path runs for real: the API server's resize
// admission, external-resizer and ControllerExpandVolume, the PV's and the claim's capacity.
// It exists because the usual test driver (csi-driver-host-path) and node-driver-registrar are not
// served by the Go module proxy the bed builds from; the node plugin registers itself with its
// kubelet the way node-driver-registrar does.
// Owns: the volume directories under --root and the sockets it serves. Must not: enforce a size
// (a directory has none; the recorded capacity is what Kubernetes asked for), or touch a path
// outside --root and the target paths the kubelet names.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
)

const driverName = "hostdir.csi.tailor.dev"

func main() {
	mode := flag.String("mode", "", "controller or node")
	endpoint := flag.String("endpoint", "", "the CSI socket, unix:///path")
	root := flag.String("root", "", "the directory that holds the volumes")
	nodeID := flag.String("node-id", "", "node mode: the node's name")
	registrationDir := flag.String("registration-dir", "", "node mode: the kubelet's plugins_registry directory")
	flag.Parse()
	if *endpoint == "" || *root == "" || (*mode != "controller" && *mode != "node") {
		log.Fatal("usage: tailor-csi-hostdir --mode=controller|node --endpoint=unix:///path --root=DIR [--node-id=NAME --registration-dir=DIR]")
	}
	if *mode == "node" && (*nodeID == "" || *registrationDir == "") {
		log.Fatal("node mode needs --node-id and --registration-dir")
	}
	if err := os.MkdirAll(*root, 0o755); err != nil {
		log.Fatalf("creating %s: %v", *root, err)
	}
	socket := strings.TrimPrefix(*endpoint, "unix://")
	server := grpc.NewServer(grpc.UnaryInterceptor(logCalls))
	vols := &volumes{root: *root}
	csi.RegisterIdentityServer(server, &identity{})
	sockets := []string{socket}
	if *mode == "controller" {
		csi.RegisterControllerServer(server, &controller{vols: vols})
	} else {
		csi.RegisterNodeServer(server, &node{vols: vols, nodeID: *nodeID})
	}
	listeners := []net.Listener{listen(socket)}
	var registrar *grpc.Server
	if *mode == "node" {
		// Short: a unix socket path has 107 bytes at most, and the kubelet reads the name from GetInfo.
		regSocket := filepath.Join(*registrationDir, "hostdir-reg.sock")
		registrar = registrationServer(socket)
		listeners = append(listeners, listen(regSocket))
		sockets = append(sockets, regSocket)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() { serve(server, listeners[0]) }()
	if registrar != nil {
		go func() { serve(registrar, listeners[1]) }()
	}
	log.Printf("%s %s serving on %s", driverName, *mode, strings.Join(sockets, ", "))
	<-stop
	server.GracefulStop()
	if registrar != nil {
		registrar.GracefulStop()
	}
	for _, s := range sockets {
		_ = os.Remove(s)
	}
}

// listen opens a unix socket, replacing one a previous run left.
func listen(socket string) net.Listener {
	if err := os.MkdirAll(filepath.Dir(socket), 0o755); err != nil {
		log.Fatalf("creating the directory of %s: %v", socket, err)
	}
	_ = os.Remove(socket)
	l, err := net.Listen("unix", socket)
	if err != nil {
		log.Fatalf("listening on %s: %v", socket, err)
	}
	return l
}

func serve(s *grpc.Server, l net.Listener) {
	if err := s.Serve(l); err != nil {
		log.Fatalf("serving %s: %v", l.Addr(), err)
	}
}

// logCalls writes one line per RPC: its method, the volume it names, and its error, if any.
func logCalls(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	line := info.FullMethod
	if r, ok := req.(interface{ GetVolumeId() string }); ok && r.GetVolumeId() != "" {
		line += " " + r.GetVolumeId()
	} else if r, ok := req.(interface{ GetName() string }); ok && r.GetName() != "" {
		line += " " + r.GetName()
	}
	if r, ok := req.(interface{ GetCapacityRange() *csi.CapacityRange }); ok && r.GetCapacityRange() != nil {
		line += fmt.Sprintf(" %d bytes", r.GetCapacityRange().GetRequiredBytes())
	}
	if err != nil {
		line += ": " + err.Error()
	}
	log.Print(line)
	return resp, err
}
