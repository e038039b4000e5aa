// Command ocibuild writes a single-layer OCI image archive (oci-layout + index.json) that
// `ctr images import` accepts, without a container engine. It only packs files it is given.
//
//	ocibuild -ref tailor.local/busybox:v1 -out v1.tar -entrypoint /bin/sh \
//	    -file /bin/busybox=/usr/bin/busybox -link /bin/sh=busybox -text /etc/release=v1
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int               `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    map[string]string `json:"platform,omitempty"`
}

var epoch = time.Unix(0, 0)

func main() {
	var files, links, texts, env multi
	ref := flag.String("ref", "", "image reference, e.g. tailor.local/busybox:v1")
	out := flag.String("out", "", "archive to write")
	entrypoint := flag.String("entrypoint", "", "entrypoint, space separated")
	cmd := flag.String("cmd", "", "cmd, space separated")
	user := flag.String("user", "", "user to run as")
	workdir := flag.String("workdir", "/", "working directory")
	flag.Var(&files, "file", "IMAGEPATH=HOSTPATH (a file, or a directory copied recursively)")
	flag.Var(&links, "link", "IMAGEPATH=TARGET symlink")
	flag.Var(&texts, "text", "IMAGEPATH=CONTENT small text file")
	flag.Var(&env, "env", "KEY=VALUE")
	flag.Parse()
	if *ref == "" || *out == "" {
		fail(fmt.Errorf("-ref and -out are required"))
	}

	layer, diffID, err := buildLayer(files, links, texts)
	if err != nil {
		fail(err)
	}
	blobs := map[string][]byte{}
	put := func(b []byte) string {
		d := digest(b)
		blobs[d] = b
		return d
	}
	layerDigest := put(layer)
	config := map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"created":      epoch.UTC().Format(time.RFC3339),
		"config": map[string]any{
			"Entrypoint": fields(*entrypoint),
			"Cmd":        fields(*cmd),
			"Env":        append([]string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"}, env...),
			"User":       *user,
			"WorkingDir": *workdir,
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID}},
	}
	configJSON := mustJSON(config)
	manifest := map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        descriptor{MediaType: "application/vnd.oci.image.config.v1+json", Digest: put(configJSON), Size: len(configJSON)},
		"layers":        []descriptor{{MediaType: "application/vnd.oci.image.layer.v1.tar+gzip", Digest: layerDigest, Size: len(layer)}},
	}
	manifestJSON := mustJSON(manifest)
	tag := (*ref)[strings.LastIndex(*ref, ":")+1:]
	index := map[string]any{
		"schemaVersion": 2,
		"manifests": []descriptor{{
			MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: put(manifestJSON), Size: len(manifestJSON),
			Annotations: map[string]string{"io.containerd.image.name": *ref, "org.opencontainers.image.ref.name": tag},
			Platform:    map[string]string{"architecture": "amd64", "os": "linux"},
		}},
	}

	var archive bytes.Buffer
	tw := tar.NewWriter(&archive)
	write := func(name string, b []byte) {
		must(tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: epoch, Typeflag: tar.TypeReg}))
		_, err := tw.Write(b)
		must(err)
	}
	write("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`))
	write("index.json", mustJSON(index))
	digests := make([]string, 0, len(blobs))
	for d := range blobs {
		digests = append(digests, d)
	}
	sort.Strings(digests)
	for _, d := range digests {
		write("blobs/sha256/"+strings.TrimPrefix(d, "sha256:"), blobs[d])
	}
	must(tw.Close())
	must(os.WriteFile(*out, archive.Bytes(), 0o644))
}

// buildLayer returns the gzipped layer and the digest of its uncompressed tar (the diff ID).
func buildLayer(files, links, texts multi) ([]byte, string, error) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	dirs := map[string]bool{}
	mkdirs := func(p string) error {
		var parents []string
		for d := path.Dir(p); d != "/" && d != "."; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			if !dirs[d] {
				dirs[d] = true
				if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755, ModTime: epoch, Typeflag: tar.TypeDir}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	addFile := func(imagePath string, content []byte, mode int64) error {
		if err := mkdirs(imagePath); err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(imagePath, "/"), Mode: mode, Size: int64(len(content)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(content)
		return err
	}
	var addTree func(imagePath, hostPath string) error
	addTree = func(imagePath, hostPath string) error {
		info, err := os.Lstat(hostPath)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(hostPath)
			if err != nil {
				return err
			}
			if err := mkdirs(imagePath); err != nil {
				return err
			}
			return tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(imagePath, "/"), Linkname: target, Mode: 0o777, ModTime: epoch, Typeflag: tar.TypeSymlink})
		case info.IsDir():
			if err := mkdirs(imagePath + "/x"); err != nil {
				return err
			}
			entries, err := os.ReadDir(hostPath)
			if err != nil {
				return err
			}
			for _, e := range entries {
				if err := addTree(imagePath+"/"+e.Name(), hostPath+"/"+e.Name()); err != nil {
					return err
				}
			}
			return nil
		default:
			content, err := os.ReadFile(hostPath)
			if err != nil {
				return err
			}
			return addFile(imagePath, content, int64(info.Mode().Perm()))
		}
	}
	for _, f := range files {
		imagePath, hostPath, _ := strings.Cut(f, "=")
		if err := addTree(imagePath, hostPath); err != nil {
			return nil, "", fmt.Errorf("adding %s: %w", f, err)
		}
	}
	for _, t := range texts {
		imagePath, content, _ := strings.Cut(t, "=")
		if err := addFile(imagePath, []byte(content+"\n"), 0o644); err != nil {
			return nil, "", err
		}
	}
	for _, l := range links {
		imagePath, target, _ := strings.Cut(l, "=")
		if err := mkdirs(imagePath); err != nil {
			return nil, "", err
		}
		if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(imagePath, "/"), Linkname: target, Mode: 0o777, ModTime: epoch, Typeflag: tar.TypeSymlink}); err != nil {
			return nil, "", err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return gz.Bytes(), digest(raw.Bytes()), nil
}

func digest(b []byte) string { s := sha256.Sum256(b); return "sha256:" + hex.EncodeToString(s[:]) }

func fields(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Fields(s)
}

func mustJSON(v any) []byte { b, err := json.Marshal(v); must(err); return b }

func must(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) { fmt.Fprintln(os.Stderr, "ocibuild:", err); os.Exit(1) }
