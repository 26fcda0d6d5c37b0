package app

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func testPV(name, claim string, f func(*v1.PersistentVolume)) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/data"}}}}
	if claim != "" {
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "w", Name: claim}
	}
	if f != nil {
		f(pv)
	}
	return pv
}

func testPVC(name, volume, class string) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "w", Name: name}, Spec: v1.PersistentVolumeClaimSpec{VolumeName: volume}}
	if class != "" {
		c.Spec.StorageClassName = &class
	}
	return c
}

func withClaim(p *v1.Pod, claim string) *v1.Pod {
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	return p
}

func nodeAffinity(key string, vals ...string) *v1.VolumeNodeAffinity {
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: vals}}}}}}
}

// The volume plugins as kube-scheduler v1.37.2 reads them: a bound volume's zone label (VolumeZone) and node
// affinity (VolumeBinding) place the pod; a local volume pins it; an unbound or missing claim holds it until
// the claim binds or appears; delayed binding, CSI volumes and ReadWriteOncePod claims are refused by name.
func TestVolumePlugins(t *testing.T) {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	objs := []runtime.Object{
		testNode("big-a", "64", "a"), testNode("small-b", "4", "b"), testNode("small-c", "4", "c"), testNode("small-c2", "4", "c"),
		testPV("pv-b", "data-b", func(pv *v1.PersistentVolume) { pv.Labels[v1.LabelTopologyZone] = "b" }), testPVC("data-b", "pv-b", ""),
		testPV("pv-c", "data-c", func(pv *v1.PersistentVolume) { pv.Spec.NodeAffinity = nodeAffinity(v1.LabelTopologyZone, "c") }), testPVC("data-c", "pv-c", ""),
		testPV("pv-local", "data-local", func(pv *v1.PersistentVolume) { pv.Spec.NodeAffinity = nodeAffinity(v1.LabelHostname, "small-c2") }), testPVC("data-local", "pv-local", ""),
		testPV("pv-multi", "data-multi", func(pv *v1.PersistentVolume) { pv.Labels[v1.LabelFailureDomainBetaZone] = "x__b" }), testPVC("data-multi", "pv-multi", ""),
		testPV("pv-csi", "data-csi", func(pv *v1.PersistentVolume) {
			pv.Spec.Local = nil
			pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: "ebs.csi.example.com", VolumeHandle: "vol-1"}
		}), testPVC("data-csi", "pv-csi", ""),
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "late"}, Provisioner: "example.com/p", VolumeBindingMode: &wffc},
		testPVC("data-late", "", "late"), testPVC("unbound", "", ""),
		withClaim(testPod("b", "500m", 0, ""), "data-b"), withClaim(testPod("c", "500m", 0, ""), "data-c"),
		withClaim(testPod("local", "500m", 0, ""), "data-local"), withClaim(testPod("multi", "500m", 0, ""), "data-multi"),
		withClaim(testPod("csi", "500m", 0, ""), "data-csi"), withClaim(testPod("wffc", "500m", 0, ""), "data-late"),
		withClaim(testPod("unbound", "500m", 0, ""), "unbound"), withClaim(testPod("missing", "500m", 0, ""), "later"),
	}
	rwop := testPVC("data-rwop", "pv-rwop", "")
	rwop.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
	objs = append(objs, rwop, testPV("pv-rwop", "data-rwop", nil), withClaim(testPod("rwop", "500m", 0, ""), "data-rwop"))
	f := newFakeAPI(t, objs...)
	startFake(t, f, nil)
	node := func(name string) string {
		if p := f.pod(t, "w", name); p != nil {
			return p.Spec.NodeName
		}
		return ""
	}
	eventually(t, "the placeable pods bound", 20*time.Second, func() bool {
		return node("b") != "" && node("c") != "" && node("local") != "" && node("multi") != ""
	})
	for pod, want := range map[string][]string{"b": {"small-b"}, "c": {"small-c", "small-c2"}, "local": {"small-c2"}, "multi": {"small-b"}} {
		if got := node(pod); !contains(want, got) {
			t.Errorf("%s on %s, want one of %v", pod, got, want)
		}
	}
	for pod, field := range map[string]string{"csi": "spec.volumes[data].persistentVolumeClaim", "wffc": "WaitForFirstConsumer", "rwop": "ReadWriteOncePod"} {
		eventually(t, pod+" refused", 5*time.Second, func() bool { return hasEvent(f.events("w", pod), "FailedScheduling") })
		if evs := f.events("w", pod); !strings.Contains(strings.Join(evs, " "), field) {
			t.Errorf("%s: events %v, want one naming %s", pod, evs, field)
		}
	}
	for pod, why := range map[string]string{"unbound": "unbound immediate PersistentVolumeClaims", "missing": `persistentvolumeclaim "later" not found`} {
		eventually(t, pod+" held", 5*time.Second, func() bool { return hasEvent(f.events("w", pod), "FailedScheduling") })
		if evs := f.events("w", pod); !strings.Contains(strings.Join(evs, " "), why) || node(pod) != "" {
			t.Errorf("%s: events %v bound to %q, want held: %s", pod, evs, node(pod), why)
		}
	}
	// The unbound claim binds to a volume of zone b, the missing claim appears bound to a local volume: both
	// pods are read again and placed accordingly.
	ctx := context.Background()
	if _, err := f.CoreV1().PersistentVolumes().Create(ctx, testPV("pv-late", "unbound", func(pv *v1.PersistentVolume) { pv.Labels[v1.LabelTopologyZone] = "b" }), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CoreV1().PersistentVolumeClaims("w").Update(ctx, testPVC("unbound", "pv-late", ""), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CoreV1().PersistentVolumes().Create(ctx, testPV("pv-later", "later", func(pv *v1.PersistentVolume) { pv.Spec.NodeAffinity = nodeAffinity(v1.LabelHostname, "big-a") }), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CoreV1().PersistentVolumeClaims("w").Create(ctx, testPVC("later", "pv-later", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the held pods bound", 10*time.Second, func() bool { return node("unbound") != "" && node("missing") != "" })
	if node("unbound") != "small-b" || node("missing") != "big-a" {
		t.Errorf("unbound on %s (want small-b), missing on %s (want big-a)", node("unbound"), node("missing"))
	}
	for _, pod := range []string{"csi", "wffc", "rwop"} {
		if n := node(pod); n != "" {
			t.Errorf("refused pod %s bound to %s", pod, n)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}
