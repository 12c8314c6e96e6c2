package deploy_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// rendered is what `kubectl apply -k` would apply for one overlay, as
// kustomize's own library builds it.
type rendered struct {
	deployment *appsv1.Deployment
	configMaps []*corev1.ConfigMap
}

// configMap returns the one ConfigMap of the render.
func (r *rendered) configMap(t *testing.T) *corev1.ConfigMap {
	t.Helper()
	if len(r.configMaps) != 1 {
		t.Fatalf("rendered %d ConfigMaps, want 1", len(r.configMaps))
	}
	return r.configMaps[0]
}

// mountedConfigMap returns the name of the ConfigMap the Deployment mounts.
func (r *rendered) mountedConfigMap(t *testing.T) string {
	t.Helper()
	for _, v := range r.deployment.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil {
			return v.ConfigMap.Name
		}
	}
	t.Fatal("the rendered Deployment mounts no ConfigMap")
	return ""
}

// render runs kustomize (krusty, the library kubectl apply -k uses) on dir
// of fsys and decodes the Deployment and the ConfigMaps.
func render(t *testing.T, fsys filesys.FileSystem, dir string) *rendered {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out := &rendered{}
	for _, res := range m.Resources() {
		data, err := res.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		switch res.GetKind() {
		case "Deployment":
			if out.deployment != nil {
				t.Fatalf("%s renders two Deployments", dir)
			}
			out.deployment = &appsv1.Deployment{}
			if err := yaml.UnmarshalStrict(data, out.deployment); err != nil {
				t.Fatalf("%s: rendered Deployment: %v", dir, err)
			}
		case "ConfigMap":
			cm := &corev1.ConfigMap{}
			if err := yaml.UnmarshalStrict(data, cm); err != nil {
				t.Fatalf("%s: rendered ConfigMap: %v", dir, err)
			}
			out.configMaps = append(out.configMaps, cm)
		}
	}
	if out.deployment == nil {
		t.Fatalf("%s renders no Deployment", dir)
	}
	return out
}

// inMemoryCopy copies manifestDir into an in-memory file system at the
// same paths, so a test can edit a file without touching the repository.
func inMemoryCopy(t *testing.T) filesys.FileSystem {
	t.Helper()
	mem := filesys.MakeFsInMemory()
	err := filepath.WalkDir(manifestDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return mem.WriteFile(p, data)
	})
	if err != nil {
		t.Fatal(err)
	}
	return mem
}

// TestConfigChangeRollsTheDeployment renders each overlay with
// kustomize and checks that the subscriptions file reaches the pods by a
// rollout: the ConfigMap's name carries a hash of the file, the Deployment
// mounts that name, the same file renders the same name (re-applying an
// unchanged overlay restarts nothing), and an edited file renders a new name
// and so a new pod template, which the Deployment rolls out (consume reads
// the file once, at start; docs/deploy.md).
func TestConfigChangeRollsTheDeployment(t *testing.T) {
	for _, o := range overlays {
		t.Run(o, func(t *testing.T) {
			dir := filepath.Join(manifestDir, o)
			before := render(t, filesys.MakeFsOnDisk(), dir)
			cm := before.configMap(t)
			suffix, ok := strings.CutPrefix(cm.Name, "brighter-config-")
			if !ok || suffix == "" {
				t.Fatalf("ConfigMap %q: want brighter-config-<hash> (a configMapGenerator), so that a changed file changes the name", cm.Name)
			}
			if got := before.mountedConfigMap(t); got != cm.Name {
				t.Errorf("the Deployment mounts %q, not the generated %q", got, cm.Name)
			}
			file, err := os.ReadFile(filepath.Join(dir, "brighter.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if cm.Data["brighter.yaml"] != string(file) || len(cm.Data) != 1 {
				t.Errorf("ConfigMap data keys %v: want only brighter.yaml, the overlay's file", keys(cm.Data))
			}
			if again := render(t, filesys.MakeFsOnDisk(), dir); again.configMap(t).Name != cm.Name {
				t.Errorf("the same file renders %q then %q: every apply would restart the pods", cm.Name, again.configMap(t).Name)
			}

			mem := inMemoryCopy(t)
			edited := bytes.Replace(file, []byte("requeueCount: 3"), []byte("requeueCount: 4"), 1)
			if bytes.Equal(edited, file) {
				t.Fatal("the example file has no requeueCount: 3 to edit")
			}
			if err := mem.WriteFile(filepath.Join(dir, "brighter.yaml"), edited); err != nil {
				t.Fatal(err)
			}
			after := render(t, mem, dir)
			if after.configMap(t).Name == cm.Name {
				t.Fatalf("an edited file renders the same ConfigMap name %q: the pods would keep the old file", cm.Name)
			}
			if after.mountedConfigMap(t) != after.configMap(t).Name {
				t.Errorf("after the edit the Deployment mounts %q, not %q", after.mountedConfigMap(t), after.configMap(t).Name)
			}
			bt, _ := yaml.Marshal(before.deployment.Spec.Template)
			at, _ := yaml.Marshal(after.deployment.Spec.Template)
			if bytes.Equal(bt, at) {
				t.Error("the pod template is unchanged after the edit: the Deployment would not roll out")
			}
		})
	}
}
