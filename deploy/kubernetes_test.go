package deploy_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/ociimage"
)

// manifestDir is where the Kubernetes manifests live, relative to this
// package.
const manifestDir = "kubernetes"

// configPath is where the Deployment mounts the subscriptions file: the
// path the image's commands read by default.
const configPath = ociimage.DefaultConfig

// drainSlack is what terminationGracePeriodSeconds must leave beyond the
// largest drainTimeout: closing the channels and the listener after the
// drain, before the kubelet's SIGKILL.
const drainSlack = 5 * time.Second

// kustomization is the part of kustomize's Kustomization
// (kustomize.config.k8s.io/v1beta1) the manifests use, decoded strictly so
// that a field this test does not know fails it instead of being ignored.
type kustomization struct {
	metav1.TypeMeta `json:",inline"`
	Resources       []string `json:"resources,omitempty"`
	Patches         []struct {
		Path string `json:"path"`
	} `json:"patches,omitempty"`
	ConfigMapGenerator []struct {
		Name    string   `json:"name"`
		Files   []string `json:"files"`
		Options struct {
			Labels map[string]string `json:"labels,omitempty"`
		} `json:"options"`
	} `json:"configMapGenerator,omitempty"`
}

// generatedFiles returns the files the kustomization's configMapGenerator
// reads (not Kubernetes objects).
func (k *kustomization) generatedFiles() []string {
	var out []string
	for _, g := range k.ConfigMapGenerator {
		out = append(out, g.Files...)
	}
	return out
}

// manifests is one directory's decoded objects, by kind.
type manifests struct {
	dir             string
	kustomization   *kustomization
	deployments     map[string]*appsv1.Deployment // by file
	configMaps      map[string]*corev1.ConfigMap
	serviceAccounts map[string]*corev1.ServiceAccount
	scaledObjects   map[string]*kedav1alpha1.ScaledObject
	triggerAuths    map[string]*kedav1alpha1.TriggerAuthentication
}

// decodeStrict decodes one manifest into the upstream type for its
// apiVersion and kind, rejecting unknown and duplicate fields.
func decodeStrict(t *testing.T, m *manifests, file string, data []byte) {
	t.Helper()
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	strict := func(into any) {
		t.Helper()
		if err := yaml.UnmarshalStrict(data, into); err != nil {
			t.Fatalf("%s: strict decode into %T: %v", file, into, err)
		}
	}
	base := filepath.Base(file)
	switch gvk := tm.APIVersion + "/" + tm.Kind; gvk {
	case "kustomize.config.k8s.io/v1beta1/Kustomization":
		k := &kustomization{}
		strict(k)
		m.kustomization = k
	case "apps/v1/Deployment":
		d := &appsv1.Deployment{}
		strict(d)
		m.deployments[base] = d
	case "v1/ConfigMap":
		c := &corev1.ConfigMap{}
		strict(c)
		m.configMaps[base] = c
	case "v1/ServiceAccount":
		s := &corev1.ServiceAccount{}
		strict(s)
		m.serviceAccounts[base] = s
	case "keda.sh/v1alpha1/ScaledObject":
		s := &kedav1alpha1.ScaledObject{}
		strict(s)
		if err := kedav1alpha1.ValidateTriggers(s.Spec.Triggers); err != nil {
			t.Errorf("%s: KEDA rejects the triggers: %v", file, err)
		}
		if err := kedav1alpha1.CheckReplicaCountBoundsAreValid(s); err != nil {
			t.Errorf("%s: KEDA rejects the replica bounds: %v", file, err)
		}
		m.scaledObjects[base] = s
	case "keda.sh/v1alpha1/TriggerAuthentication":
		a := &kedav1alpha1.TriggerAuthentication{}
		strict(a)
		m.triggerAuths[base] = a
	default:
		t.Fatalf("%s: %s is not a kind this test decodes; add it", file, gvk)
	}
}

// loadDir decodes every YAML file of one kustomization directory and
// checks that the kustomization lists each file once and names only files
// or directories that exist.
func loadDir(t *testing.T, dir string) *manifests {
	t.Helper()
	m := &manifests{dir: dir, deployments: map[string]*appsv1.Deployment{}, configMaps: map[string]*corev1.ConfigMap{},
		serviceAccounts: map[string]*corev1.ServiceAccount{}, scaledObjects: map[string]*kedav1alpha1.ScaledObject{},
		triggerAuths: map[string]*kedav1alpha1.TriggerAuthentication{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	kdata, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatalf("%s: no kustomization.yaml", dir)
	}
	decodeStrict(t, m, filepath.Join(dir, "kustomization.yaml"), kdata)
	generated := m.kustomization.generatedFiles()
	var files []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") || e.Name() == "kustomization.yaml" || slices.Contains(generated, e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("\n---")) {
			t.Fatalf("%s/%s: one object per file, please (the decode checks each file as one object)", dir, e.Name())
		}
		decodeStrict(t, m, filepath.Join(dir, e.Name()), data)
		files = append(files, e.Name())
	}
	listed := map[string]bool{}
	for _, g := range generated {
		if _, err := os.Stat(filepath.Join(dir, g)); err != nil {
			t.Errorf("%s/kustomization.yaml: configMapGenerator file %s: %v", dir, g, err)
		}
	}
	for _, r := range m.kustomization.Resources {
		if _, err := os.Stat(filepath.Join(dir, r)); err != nil {
			t.Errorf("%s/kustomization.yaml: resource %s: %v", dir, r, err)
		}
		listed[r] = true
	}
	for _, p := range m.kustomization.Patches {
		if _, err := os.Stat(filepath.Join(dir, p.Path)); err != nil {
			t.Errorf("%s/kustomization.yaml: patch %s: %v", dir, p.Path, err)
		}
		listed[p.Path] = true
	}
	for _, f := range files {
		if !listed[f] {
			t.Errorf("%s/%s is not listed in kustomization.yaml (resources or patches)", dir, f)
		}
	}
	return m
}

// overlays are the directories a user applies (kubectl apply -k); each
// adds a subscriptions file and a ScaledObject to ../base.
var overlays = []string{"sqs", "gcp", "rocketmq"}

// TestManifestsDecodeStrictly decodes every YAML file under kubernetes/
// into the upstream Kubernetes and KEDA types and checks that every file
// belongs to a kustomization.
func TestManifestsDecodeStrictly(t *testing.T) {
	var dirs []string
	err := filepath.WalkDir(manifestDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var kustomized []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "kustomization.yaml")); err != nil {
			if d != manifestDir {
				t.Errorf("%s has no kustomization.yaml", d)
			}
			continue
		}
		loadDir(t, d)
		kustomized = append(kustomized, filepath.Base(d))
	}
	want := append([]string{"base"}, overlays...)
	slices.Sort(want)
	slices.Sort(kustomized)
	if !slices.Equal(kustomized, want) {
		t.Errorf("kustomization directories %v, want %v (update overlays in this test)", kustomized, want)
	}
}

// baseDeployment returns the one Deployment of base/.
func baseDeployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	m := loadDir(t, filepath.Join(manifestDir, "base"))
	d := m.deployments["deployment.yaml"]
	if d == nil || len(m.deployments) != 1 {
		t.Fatalf("base: want exactly one Deployment in deployment.yaml, got %d", len(m.deployments))
	}
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("base Deployment: want one container, got %d", len(d.Spec.Template.Spec.Containers))
	}
	return d
}

// flagValue returns the value of --name in args ("--name v" or
// "--name=v").
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if a == "--"+name && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// TestDeploymentAgreesWithConsume checks the base Deployment against what
// consume does: --listen inside the pod, the port the probes and the scrape
// annotations use, the paths the observability listener serves, the config
// path the volume mounts, and the pod's hardening.
func TestDeploymentAgreesWithConsume(t *testing.T) {
	d := baseDeployment(t)
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]

	if len(c.Command) != 0 {
		t.Errorf("container command %v: leave it unset so the image's ENTRYPOINT (brighter) runs", c.Command)
	}
	if len(c.Args) == 0 || c.Args[0] != "consume" {
		t.Fatalf("container args %v: want consume first", c.Args)
	}
	// The binary itself accepts these arguments (an unknown flag fails).
	out, err := exec.Command(brighterBinary(t), append(slices.Clone(c.Args), "--help")...).CombinedOutput()
	if err != nil {
		t.Errorf("brighter %v --help: %v\n%s", c.Args, err, out)
	}

	// --listen: every interface inside the pod, one port everywhere.
	listen, ok := flagValue(c.Args, "listen")
	if !ok {
		t.Fatal("container args: no --listen, so no probes and no metrics")
	}
	addr, err := observe.ListenAddr(listen)
	if err != nil {
		t.Fatalf("--listen %s: %v", listen, err)
	}
	host, portText, _ := net.SplitHostPort(addr)
	if host != "0.0.0.0" {
		t.Errorf("--listen %s listens on %s; the kubelet and Prometheus reach the pod IP, so use 0.0.0.0", listen, host)
	}
	port, _ := strconv.Atoi(portText)
	if len(c.Ports) != 1 || int(c.Ports[0].ContainerPort) != port || c.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("container ports %+v, want one TCP port %d (from --listen)", c.Ports, port)
	}
	if a := d.Spec.Template.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != portText || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("pod annotations %v: want prometheus.io/scrape true, port %s, path /metrics", a, portText)
	}

	// The probes use paths the listener serves, on its port.
	srv := httptest.NewServer((&observe.Server{Metrics: observe.NewMetrics(), Health: observe.NewHealth()}).Handler())
	defer srv.Close()
	probe := func(name string, p *corev1.Probe, wantPath string, wantBeforeReady int) {
		t.Helper()
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe: want an httpGet probe", name)
			return
		}
		g := p.HTTPGet
		if g.Path != wantPath {
			t.Errorf("%s probe path %s, want %s", name, g.Path, wantPath)
		}
		if pp := g.Port; !(pp.IntValue() == port || (pp.StrVal != "" && len(c.Ports) == 1 && pp.StrVal == c.Ports[0].Name)) {
			t.Errorf("%s probe port %s is not the --listen port %d", name, pp.String(), port)
		}
		resp, err := http.Get(srv.URL + g.Path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != wantBeforeReady {
			t.Errorf("%s probe: GET %s on a consumer still opening its channels = %d, want %d", name, g.Path, resp.StatusCode, wantBeforeReady)
		}
	}
	probe("liveness", c.LivenessProbe, "/healthz", http.StatusOK)
	probe("readiness", c.ReadinessProbe, "/readyz", http.StatusServiceUnavailable)
	probe("startup", c.StartupProbe, "/healthz", http.StatusOK)
	if resp, err := http.Get(srv.URL + "/metrics"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /metrics: %v %v", resp, err)
	}

	// The subscriptions file: --config is where the ConfigMap is mounted.
	cfg, _ := flagValue(c.Args, "config")
	if cfg != configPath {
		t.Errorf("--config %q, want %s (the image's default)", cfg, configPath)
	}
	var mounted bool
	for _, vm := range c.VolumeMounts {
		if vm.MountPath != path.Dir(configPath) {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == vm.Name && v.ConfigMap != nil && v.ConfigMap.Name == "brighter-config" && vm.ReadOnly {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("no read-only mount of ConfigMap brighter-config at %s", path.Dir(configPath))
	}

	// Hardening and resources.
	sc, psc := c.SecurityContext, pod.SecurityContext
	switch {
	case sc == nil || psc == nil:
		t.Fatal("want pod and container securityContext")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("readOnlyRootFilesystem: want true")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("allowPrivilegeEscalation: want false")
	case psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != ociimage.UID ||
		psc.RunAsGroup == nil || *psc.RunAsGroup != ociimage.GID:
		t.Errorf("pod: want runAsNonRoot and the image's user %d:%d", ociimage.UID, ociimage.GID)
	case sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL"):
		t.Error("capabilities: want drop ALL")
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("resources.requests %v: want cpu and memory", c.Resources.Requests)
	}
	checkGoMemLimit(t, c)
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep == nil {
		t.Errorf("preStop %+v: the image has no shell; use a sleep action or none", c.Lifecycle.PreStop)
	}
}

// inFlightQuery matches the prometheus trigger's query: one of brighter's
// metrics, for one subscription.
var inFlightQuery = regexp.MustCompile(`^sum\((brighter_[a-z_]+)\{subscription="([^"]+)"\}\)$`)

// TestOverlaysAgreeWithConsume checks each overlay: its subscriptions file
// loads and passes `brighter lint --fail-on warning`, the grace period
// covers every subscription's drainTimeout, and the ScaledObject scales the
// Deployment on that subscription's queue (SQS) or brighter's own metrics
// for it (Pub/Sub, RocketMQ).
func TestOverlaysAgreeWithConsume(t *testing.T) {
	d := baseDeployment(t)
	for _, o := range overlays {
		t.Run(o, func(t *testing.T) {
			m := loadDir(t, filepath.Join(manifestDir, o))
			if !slices.Contains(m.kustomization.Resources, "../base") {
				t.Errorf("%s/kustomization.yaml: resources %v do not include ../base", o, m.kustomization.Resources)
			}
			for f, p := range m.deployments { // patches of the base Deployment
				if p.Name != d.Name || len(p.Spec.Template.Spec.Containers) != 1 || p.Spec.Template.Spec.Containers[0].Name != d.Spec.Template.Spec.Containers[0].Name {
					t.Errorf("%s/%s patches %s container %v, not the base Deployment's", o, f, p.Name, p.Spec.Template.Spec.Containers)
				}
			}

			// The subscriptions file: the one ConfigMap kustomize renders,
			// under the name the Deployment mounts (TestConfigChangeRollsTheDeployment).
			if len(m.configMaps) != 0 || !slices.Equal(m.kustomization.generatedFiles(), []string{path.Base(configPath)}) {
				t.Fatalf("%s: want the subscriptions file only from a configMapGenerator of %s, got ConfigMap files %v and generated files %v",
					o, path.Base(configPath), keys(m.configMaps), m.kustomization.generatedFiles())
			}
			r := render(t, filesys.MakeFsOnDisk(), filepath.Join(manifestDir, o))
			cm := r.configMap(t)
			if got := r.mountedConfigMap(t); cm.Name != got {
				t.Errorf("%s: ConfigMap %s, but the Deployment mounts %s", o, cm.Name, got)
			}
			data, ok := cm.Data[path.Base(configPath)]
			if !ok || len(cm.Data) != 1 {
				t.Fatalf("%s: ConfigMap keys %v, want only %s", o, keys(cm.Data), path.Base(configPath))
			}
			file := filepath.Join(t.TempDir(), path.Base(configPath))
			if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(brighterBinary(t), "lint", "--fail-on", "warning", file).CombinedOutput(); err != nil {
				t.Errorf("%s: brighter lint --fail-on warning on the ConfigMap's file: %v\n%s", o, err, out)
			}
			f, err := config.Load(file, func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatalf("%s: %v", o, err)
			}

			// The grace period covers the longest drain plus the close.
			var drain time.Duration
			for _, s := range f.Subscriptions {
				drain = max(drain, s.DrainTimeout)
			}
			grace := time.Duration(*d.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
			if c := d.Spec.Template.Spec.Containers[0]; c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
				grace -= time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
			}
			if grace < drain+drainSlack {
				t.Errorf("%s: terminationGracePeriodSeconds (less any preStop sleep) %v < drainTimeout %v + %v to close: the kubelet kills in-flight handlers", o, grace, drain, drainSlack)
			}

			so := m.scaledObjects["scaledobject.yaml"]
			if so == nil || len(m.scaledObjects) != 1 {
				t.Fatalf("%s: want one ScaledObject in scaledobject.yaml", o)
			}
			if ref := so.Spec.ScaleTargetRef; ref.Name != d.Name || (ref.Kind != "" && ref.Kind != "Deployment") {
				t.Errorf("%s: ScaledObject targets %+v, want Deployment %s", o, ref, d.Name)
			}
			if len(so.Spec.Triggers) != 1 {
				t.Fatalf("%s: want one trigger, got %d", o, len(so.Spec.Triggers))
			}
			if len(f.Subscriptions) != 1 {
				t.Fatalf("%s: the example file should hold one subscription (the trigger scales on it), got %d", o, len(f.Subscriptions))
			}
			sub := f.Subscriptions[0]
			tr := so.Spec.Triggers[0]
			switch sub.Transport {
			case config.TransportSQS:
				checkSQSTrigger(t, m, f, sub, tr)
			default:
				checkPrometheusTrigger(t, sub, tr)
				if so.Spec.MinReplicaCount == nil || *so.Spec.MinReplicaCount < 1 {
					t.Errorf("%s: a prometheus trigger on brighter's own metrics needs minReplicaCount >= 1 (no replica, no metrics)", o)
				}
			}
		})
	}
}

// checkSQSTrigger checks an aws-sqs-queue trigger reads the subscription's
// source queue in the file's region, authenticated by a TriggerAuthentication
// of the overlay.
func checkSQSTrigger(t *testing.T, m *manifests, f *config.File, sub *config.Subscription, tr kedav1alpha1.ScaleTriggers) {
	t.Helper()
	if tr.Type != "aws-sqs-queue" {
		t.Fatalf("trigger type %s, want aws-sqs-queue for an SQS subscription", tr.Type)
	}
	u, err := url.Parse(tr.Metadata["queueURL"])
	if err != nil || u.Scheme != "https" {
		t.Fatalf("queueURL %q: want an https SQS queue URL (%v)", tr.Metadata["queueURL"], err)
	}
	if q := path.Base(u.Path); q != sub.ChannelName {
		t.Errorf("queueURL names queue %s, but subscription %s reads %s", q, sub.Name, sub.ChannelName)
	}
	region := tr.Metadata["awsRegion"]
	if f.Connections.AWS.Region != region || !strings.Contains(u.Host, "."+region+".") {
		t.Errorf("trigger region %s / queue host %s disagree with the file's region %v", region, u.Host, f.Connections.AWS)
	}
	if n, err := strconv.Atoi(tr.Metadata["queueLength"]); err != nil || n < 1 {
		t.Errorf("queueLength %q: want a positive integer", tr.Metadata["queueLength"])
	}
	if tr.AuthenticationRef == nil {
		t.Fatal("want an authenticationRef (KEDA's operator needs sqs:GetQueueAttributes)")
	}
	var found bool
	for _, a := range m.triggerAuths {
		found = found || a.Name == tr.AuthenticationRef.Name
	}
	if !found {
		t.Errorf("authenticationRef %s: no such TriggerAuthentication in the overlay", tr.AuthenticationRef.Name)
	}
}

// checkPrometheusTrigger checks a prometheus trigger queries one of
// brighter's metrics for the subscription, with a numeric threshold.
func checkPrometheusTrigger(t *testing.T, sub *config.Subscription, tr kedav1alpha1.ScaleTriggers) {
	t.Helper()
	if tr.Type != "prometheus" {
		t.Fatalf("trigger type %s, want prometheus for a %s subscription", tr.Type, sub.Transport)
	}
	mm := inFlightQuery.FindStringSubmatch(tr.Metadata["query"])
	if mm == nil {
		t.Fatalf("query %q: want sum(<brighter metric>{subscription=\"...\"})", tr.Metadata["query"])
	}
	if mm[1] != observe.MetricInFlight {
		t.Errorf("query metric %s, want %s", mm[1], observe.MetricInFlight)
	}
	if mm[2] != sub.Name {
		t.Errorf("query subscription %s, want %s", mm[2], sub.Name)
	}
	// The metric exists under that name and label once the subscription is
	// registered, as consume --listen does.
	metrics := observe.NewMetrics()
	metrics.Subscription(sub.Name)
	fams, err := metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var exposed bool
	for _, fam := range fams {
		if fam.GetName() != mm[1] {
			continue
		}
		for _, mt := range fam.GetMetric() {
			for _, l := range mt.GetLabel() {
				exposed = exposed || (l.GetName() == "subscription" && l.GetValue() == sub.Name)
			}
		}
	}
	if !exposed {
		t.Errorf("%s{subscription=%q} is not exposed by consume --listen", mm[1], sub.Name)
	}
	threshold, err := strconv.ParseFloat(tr.Metadata["threshold"], 64)
	if err != nil || threshold <= 0 {
		t.Errorf("threshold %q: want a positive number", tr.Metadata["threshold"])
	}
	if capacity := float64(sub.NoOfPerformers * sub.BufferSize); threshold > capacity {
		t.Errorf("threshold %v above what a replica can hold in flight (noOfPerformers x bufferSize = %v): it never scales out", threshold, capacity)
	}
	if u, err := url.Parse(tr.Metadata["serverAddress"]); err != nil || u.Scheme == "" || u.Host == "" {
		t.Errorf("serverAddress %q: want a URL", tr.Metadata["serverAddress"])
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// goMemLimit matches a GOMEMLIMIT value as the Go runtime reads it: a
// number of bytes with an optional unit (runtime/debug.SetMemoryLimit).
var goMemLimit = regexp.MustCompile(`^([0-9]+)(B|KiB|MiB|GiB|TiB)?$`)

// checkGoMemLimit checks the container's GOMEMLIMIT is a fixed value
// between 80% and 90% of its memory limit: the runtime collects
// before the kernel kills, with room for memory it does not count (exec
// handlers' processes share the container's cgroup).
func checkGoMemLimit(t *testing.T, c corev1.Container) {
	t.Helper()
	limit := c.Resources.Limits.Memory()
	if limit.IsZero() {
		t.Fatal("resources.limits.memory: want a memory limit (GOMEMLIMIT is a share of it)")
	}
	var value string
	for _, e := range c.Env {
		if e.Name == "GOMEMLIMIT" {
			if e.ValueFrom != nil {
				t.Fatalf("GOMEMLIMIT from %+v: a resourceFieldRef gives 100%% of the limit; set a value of 80-90%%", e.ValueFrom)
			}
			value = e.Value
		}
	}
	m := goMemLimit.FindStringSubmatch(value)
	if m == nil {
		t.Fatalf("GOMEMLIMIT %q: want a number with an optional unit B, KiB, MiB, GiB or TiB", value)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	n <<= map[string]int{"": 0, "B": 0, "KiB": 10, "MiB": 20, "GiB": 30, "TiB": 40}[m[2]]
	share := float64(n) / float64(limit.Value())
	if share < 0.80 || share > 0.90 {
		t.Errorf("GOMEMLIMIT %s is %.0f%% of the memory limit %s, want 80-90%%", value, share*100, limit)
	}
}

// visibleOnly returns why a ScaledObject's trigger would scale on visible
// messages only, or "" when it counts messages in flight: an aws-sqs-queue
// trigger with scaleOnInFlight "false" (KEDA's default is true), or a
// prometheus trigger on a brighter metric other than the in-flight one.
func visibleOnly(tr kedav1alpha1.ScaleTriggers) string {
	switch tr.Type {
	case "aws-sqs-queue":
		if v, ok := tr.Metadata["scaleOnInFlight"]; ok {
			if b, err := strconv.ParseBool(v); err != nil || !b {
				return fmt.Sprintf("aws-sqs-queue trigger with scaleOnInFlight %q counts visible messages only", v)
			}
		}
	case "prometheus":
		if mm := inFlightQuery.FindStringSubmatch(tr.Metadata["query"]); mm == nil || mm[1] != observe.MetricInFlight {
			return fmt.Sprintf("prometheus trigger query %q is not %s: it does not count the messages replicas hold", tr.Metadata["query"], observe.MetricInFlight)
		}
	}
	return ""
}

// TestScaledObjectsCountMessagesInFlight: every ScaledObject of
// the overlays counts the messages in flight, so KEDA does not scale down
// (or to zero) under messages still being handled, or waiting out a
// requeueDelay (on SQS brighter requeues with ChangeMessageVisibility, so
// such a message is in flight, not visible); and the check flags the broken
// example testdata/scaledobject-visible-only.yaml.
func TestScaledObjectsCountMessagesInFlight(t *testing.T) {
	for _, o := range overlays {
		m := loadDir(t, filepath.Join(manifestDir, o))
		for file, so := range m.scaledObjects {
			for _, tr := range so.Spec.Triggers {
				if why := visibleOnly(tr); why != "" {
					t.Errorf("%s/%s: %s: KEDA would scale down under messages in flight", o, file, why)
				}
			}
		}
	}
	data, err := os.ReadFile(filepath.Join("testdata", "scaledobject-visible-only.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	broken := &kedav1alpha1.ScaledObject{}
	if err := yaml.UnmarshalStrict(data, broken); err != nil {
		t.Fatal(err)
	}
	if len(broken.Spec.Triggers) != 1 || visibleOnly(broken.Spec.Triggers[0]) == "" {
		t.Error("the visible-only example is not flagged")
	}
}
