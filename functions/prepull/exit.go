package prepull

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pre-pull container must start from an image that may hold nothing but
// its own program (distroless, scratch, a static binary): no shell, no
// /bin/true. It runs instead a program of its own that exits 0 at once,
// from a ConfigMap volume (exitConfigMap): a static ELF executable of a
// few dozen bytes per architecture, made here. So no command the pulled
// image may lack is ever run, and no other image (an init container's)
// has to be pulled on every node first.

// exitMount is where a pre-pull container mounts the exit program's
// volume; exitPath is the program.
const (
	exitMount  = "/inplace-prepull"
	exitPath   = exitMount + "/exit"
	exitVolume = "exit"
)

// exitCode is, per GOARCH, the machine code of exit_group(0).
var exitCode = map[string]struct {
	machine elf.Machine
	code    []byte
}{
	// mov $231, %eax; xor %edi, %edi; syscall
	"amd64": {elf.EM_X86_64, []byte{0xb8, 0xe7, 0x00, 0x00, 0x00, 0x31, 0xff, 0x0f, 0x05}},
	// movz x8, #94; movz x0, #0; svc #0
	"arm64": {elf.EM_AARCH64, []byte{0xc8, 0x0b, 0x80, 0xd2, 0x00, 0x00, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4}},
}

// exitProgram is the static ELF executable for arch (a GOARCH, as a
// node's status.nodeInfo.architecture says) that exits 0: an ELF header,
// one loadable segment (the whole file, read and execute) and the code.
func exitProgram(arch string) ([]byte, bool) {
	m, ok := exitCode[arch]
	if !ok {
		return nil, false
	}
	const base = 0x400000
	hdr, prog := binary.Size(elf.Header64{}), binary.Size(elf.Prog64{})
	size := uint64(hdr + prog + len(m.code))
	var b bytes.Buffer
	ident := [elf.EI_NIDENT]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)}
	// Writes to a bytes.Buffer of fixed-size values cannot fail.
	_ = binary.Write(&b, binary.LittleEndian, elf.Header64{
		Ident: ident, Type: uint16(elf.ET_EXEC), Machine: uint16(m.machine), Version: uint32(elf.EV_CURRENT),
		Entry: base + uint64(hdr+prog), Phoff: uint64(hdr), Ehsize: uint16(hdr), Phentsize: uint16(prog), Phnum: 1,
	})
	_ = binary.Write(&b, binary.LittleEndian, elf.Prog64{
		Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Vaddr: base, Paddr: base,
		Filesz: size, Memsz: size, Align: 0x1000,
	})
	b.Write(m.code)
	return b.Bytes(), true
}

// exitKey is the ConfigMap key of arch's exit program.
func exitKey(arch string) string { return "exit-" + arch }

// exitData is the exit program of every architecture known, by key.
func exitData() map[string][]byte {
	out := map[string][]byte{}
	for arch := range exitCode {
		b, _ := exitProgram(arch)
		out[exitKey(arch)] = b
	}
	return out
}

// exitConfigMap is the immutable ConfigMap holding the exit programs in
// namespace, named for its content: a change of the programs makes a new
// one, and one of that name holding anything else is refused (ensureExit).
func exitConfigMap(namespace string) *corev1.ConfigMap {
	data := exitData()
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(data)) {
		parts = append(parts, k, string(data[k]))
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "inplace-prepull-exit-" + hashOf(parts...)[:10], Namespace: namespace,
			Labels: map[string]string{LabelManagedBy: ManagedBy, LabelComponent: Component}},
		BinaryData: data,
		Immutable:  new(true),
	}
}

// ensureExitFor is ensureExit where a pod for arch mounts the exit
// programs (podFor).
func (f *Function) ensureExitFor(ctx context.Context, namespace, arch string) error {
	if _, ok := exitProgram(arch); !ok {
		return nil
	}
	return f.ensureExit(ctx, namespace)
}

// ensureExit makes sure namespace holds the exit programs' ConfigMap, as
// pre-pull makes it, before a pre-pull pod mounts it (a pod whose volume
// is missing would wait in ContainerCreating until the pre-pull timeout).
func (f *Function) ensureExit(ctx context.Context, namespace string) error {
	want := exitConfigMap(namespace)
	cms := f.d.Client.CoreV1().ConfigMaps(namespace)
	got, err := cms.Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		got, err = cms.Create(ctx, want, metav1.CreateOptions{FieldManager: "inplace-" + Name})
		if apierrors.IsAlreadyExists(err) {
			got, err = cms.Get(ctx, want.Name, metav1.GetOptions{})
		}
	}
	switch {
	case err != nil:
		return fmt.Errorf("pre-pull: configmap %s/%s: %w", namespace, want.Name, err)
	case !maps.EqualFunc(got.BinaryData, want.BinaryData, bytes.Equal) || len(got.Data) != 0:
		return fmt.Errorf("pre-pull: configmap %s/%s holds something else than the exit programs pre-pull runs; delete it",
			namespace, want.Name)
	}
	return nil
}
