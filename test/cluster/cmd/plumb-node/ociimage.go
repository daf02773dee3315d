package main

// oci-image: writes an OCI image layout archive (the tar `ctr images import`
// reads) whose one layer is a statically linked busybox and its applet links,
// so the real node runs containers of images built on this machine and never
// pulls from a registry. Every --image NAME=ENTRYPOINT adds one manifest over
// the same layer; ENTRYPOINT is a JSON array (empty: none, use the Pod's
// command). Output is deterministic: same busybox, same bytes.
//
// Layout: https://github.com/opencontainers/image-spec/blob/v1.1.1/image-layout.md
// containerd names imported images by the io.containerd.image.name annotation.

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

type imageFlag []string

func (f *imageFlag) String() string     { return strings.Join(*f, ",") }
func (f *imageFlag) Set(v string) error { *f = append(*f, v); return nil }

func runOCIImage(args []string) int {
	fs := flag.NewFlagSet("oci-image", flag.ExitOnError)
	busybox := fs.String("busybox", "/bin/busybox", "statically linked busybox (Debian: busybox-static)")
	out := fs.String("out", "", "archive to write")
	var images imageFlag
	fs.Var(&images, "image", `NAME=ENTRYPOINT, e.g. plumb.local/pause:1=["/bin/sh","-c","..."] (repeatable)`)
	_ = fs.Parse(args)
	if *out == "" || len(images) == 0 {
		fmt.Fprintln(os.Stderr, "oci-image: need --out and at least one --image")
		return 2
	}
	if err := writeOCIImage(*busybox, *out, images); err != nil {
		fmt.Fprintln(os.Stderr, "oci-image:", err)
		return 1
	}
	return 0
}

// blob is one content-addressed file of the layout.
type blob struct {
	digest digest.Digest
	data   []byte
}

func newBlob(data []byte) blob { return blob{digest.FromBytes(data), data} }

func writeOCIImage(busybox, out string, images []string) error {
	layer, err := busyboxLayer(busybox)
	if err != nil {
		return err
	}
	layerBlob := newBlob(layer)
	blobs := []blob{layerBlob}
	index := ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex}
	platform := ocispec.Platform{OS: "linux", Architecture: runtime.GOARCH}
	for _, spec := range images {
		name, entry, ok := strings.Cut(spec, "=")
		if !ok || name == "" {
			return fmt.Errorf("--image %q: want NAME=ENTRYPOINT", spec)
		}
		var entrypoint []string
		if entry != "" {
			if err := json.Unmarshal([]byte(entry), &entrypoint); err != nil {
				return fmt.Errorf("--image %q: entrypoint is not a JSON array of strings: %v", spec, err)
			}
		}
		epoch := time.Unix(0, 0).UTC()
		cfg, _ := json.Marshal(ocispec.Image{
			Created:  &epoch,
			Platform: platform,
			Config: ocispec.ImageConfig{
				Env:        []string{"PATH=/bin"},
				Entrypoint: entrypoint,
				Cmd:        cmdFor(entrypoint),
				WorkingDir: "/",
			},
			RootFS: ocispec.RootFS{Type: "layers", DiffIDs: []digest.Digest{layerBlob.digest}},
		})
		cfgBlob := newBlob(cfg)
		manifest, _ := json.Marshal(ocispec.Manifest{
			Versioned: specs.Versioned{SchemaVersion: 2},
			MediaType: ocispec.MediaTypeImageManifest,
			Config:    ocispec.Descriptor{MediaType: ocispec.MediaTypeImageConfig, Digest: cfgBlob.digest, Size: int64(len(cfg))},
			Layers: []ocispec.Descriptor{
				{MediaType: ocispec.MediaTypeImageLayer, Digest: layerBlob.digest, Size: int64(len(layer))},
			},
		})
		manifestBlob := newBlob(manifest)
		blobs = append(blobs, cfgBlob, manifestBlob)
		tag := name[strings.LastIndex(name, ":")+1:]
		index.Manifests = append(index.Manifests, ocispec.Descriptor{
			MediaType: ocispec.MediaTypeImageManifest,
			Digest:    manifestBlob.digest,
			Size:      int64(len(manifest)),
			Platform:  &platform,
			Annotations: map[string]string{
				"io.containerd.image.name": name,
				ocispec.AnnotationRefName:  tag,
			},
		})
	}
	indexJSON, _ := json.Marshal(index)
	layoutJSON, _ := json.Marshal(ocispec.ImageLayout{Version: ocispec.ImageLayoutVersion})

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	seen := map[digest.Digest]bool{}
	files := []struct {
		name string
		data []byte
	}{{ocispec.ImageLayoutFile, layoutJSON}, {"index.json", indexJSON}}
	for _, b := range blobs {
		if !seen[b.digest] {
			seen[b.digest] = true
			files = append(files, struct {
				name string
				data []byte
			}{path.Join("blobs", b.digest.Algorithm().String(), b.digest.Encoded()), b.data})
		}
	}
	for _, f := range files {
		if err := tarFile(tw, f.name, 0o644, f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// cmdFor: with no entrypoint the image still runs something (a shell), as
// busybox images do; with one, the Pod's args replace an empty Cmd.
func cmdFor(entrypoint []string) []string {
	if len(entrypoint) == 0 {
		return []string{"/bin/sh"}
	}
	return nil
}

// busyboxLayer is an uncompressed layer tar: bin/busybox, a link per applet
// (as `busybox --list` names them), a root and nobody user, /tmp.
func busyboxLayer(busybox string) ([]byte, error) {
	bin, err := os.ReadFile(busybox)
	if err != nil {
		return nil, err
	}
	listing, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list: %v", busybox, err)
	}
	applets := strings.Fields(string(listing))
	sort.Strings(applets)

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range []struct {
		name string
		mode int64
	}{{"bin/", 0o755}, {"etc/", 0o755}, {"root/", 0o700}, {"tmp/", 0o1777}} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d.name, Mode: d.mode, ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
	}
	if err := tarFile(tw, "bin/busybox", 0o755, bin); err != nil {
		return nil, err
	}
	for _, a := range applets {
		if a == "busybox" {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + a, Linkname: "busybox", Mode: 0o777, ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
	}
	etc := map[string]string{
		"etc/passwd": "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
		"etc/group":  "root:x:0:\nnogroup:x:65534:\n",
	}
	for _, name := range []string{"etc/group", "etc/passwd"} {
		if err := tarFile(tw, name, 0o644, []byte(etc[name])); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func tarFile(tw *tar.Writer, name string, mode int64, data []byte) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}
