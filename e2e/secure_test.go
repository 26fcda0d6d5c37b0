package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/weavesql/weave/cmd/weave-scheduler/app"
	"github.com/weavesql/weave/e2e/harness"
)

// TestSecurePort: weave-scheduler's HTTPS port against a real API server authorizing with RBAC, set up as
// deploy/rbac.yaml sets it up. The replica runs as its service account (the ClusterRole it schedules with,
// system:auth-delegator for its TokenReviews and SubjectAccessReviews, the extension-apiserver-authentication
// reader, the lookup of which must succeed here); a scraper's service account is bound to
// weave-scheduler-metrics-reader, another service account to nothing. /healthz, /livez and /readyz answer
// without a token; /metrics answers 401 without one or with a forged one, 403 to the unbound account and the
// weave_scheduler_* series to the scraper.
func TestSecurePort(t *testing.T) {
	ctx := context.Background()
	c := harness.StartWith(t, harness.Options{AuthorizationModes: []string{"RBAC"}})
	applyManifests(t, c, "../deploy/rbac.yaml")
	if err := c.CreateNamespace(ctx, "monitoring"); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "scraper-weave-scheduler-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "weave-scheduler-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "monitoring", Name: "scraper"}},
	}
	if _, err := c.Client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := map[string]string{}
	for _, sa := range []string{"kube-system/weave-scheduler", "monitoring/scraper", "monitoring/nobody"} {
		ns, name, _ := strings.Cut(sa, "/")
		tok, err := c.ServiceAccountToken(ctx, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		token[name] = tok
	}
	// RBAC's authorizer reads roles and bindings through informers: wait until it has the new ones, so
	// that the replica's start and the scraper's first request do not race them.
	waitAllowed(t, c, "system:serviceaccount:kube-system:weave-scheduler",
		&authorizationv1.ResourceAttributes{Group: "authentication.k8s.io", Resource: "tokenreviews", Verb: "create"},
		&authorizationv1.ResourceAttributes{Group: "authorization.k8s.io", Resource: "subjectaccessreviews", Verb: "create"},
		&authorizationv1.ResourceAttributes{Namespace: "kube-system", Resource: "configmaps", Name: "extension-apiserver-authentication", Verb: "get"},
		&authorizationv1.ResourceAttributes{Resource: "pods", Verb: "watch"},
		&authorizationv1.ResourceAttributes{Resource: "pods", Subresource: "binding", Verb: "create"})
	waitAllowed(t, c, "system:serviceaccount:monitoring:scraper", &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"})

	if err := c.CreateNode(ctx, "node-0", harness.NodeSpec{CPU: "2", Memory: "8Gi"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNamespace(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	ln, _, err := apiserveroptions.CreateListener("tcp", "127.0.0.1:0", net.ListenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := c.Kubeconfig(t, token["weave-scheduler"])
	cfg := weaveConfig("secure")
	cfg.Serving = app.NewServingOptions()
	cfg.Serving.SecureServing.Listener = ln
	cfg.Serving.Authentication.RemoteKubeConfigFile = kubeconfig
	cfg.Serving.Authorization.RemoteKubeConfigFile = kubeconfig
	cfg.Serving.Authentication.TolerateInClusterLookupFailure = false
	asScheduler := *c
	asScheduler.Config = rest.AnonymousClientConfig(c.Config)
	asScheduler.Config.BearerToken = token["weave-scheduler"]
	startWeave(t, &asScheduler, cfg, nil)
	if err := c.CreatePod(ctx, "w", "p", harness.PodSpec{SchedulerName: "weave-scheduler", CPU: "100m", Memory: "128Mi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitBound(ctx, "w", 1, time.Minute); err != nil {
		t.Fatal(err)
	}

	// The certificate is generated in memory, self-signed: nothing to verify it against.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(path, token string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("GET", "https://"+ln.Addr().String()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, tc := range []struct {
		name, path, token string
		code              int
	}{
		{"/healthz needs no token", "/healthz", "", 200},
		{"/livez needs no token", "/livez", "", 200},
		{"/readyz needs no token", "/readyz", "", 200},
		{"metrics without a token are unauthenticated", "/metrics", "", 401},
		{"metrics with a forged token are unauthenticated", "/metrics", "forged", 401},
		{"metrics to a service account without get on /metrics are forbidden", "/metrics", token["nobody"], 403},
		{"metrics to the scraper's service account", "/metrics", token["scraper"], 200},
		{"the scraper may get /metrics only", "/debug/pprof/", token["scraper"], 403},
	} {
		code, body := get(tc.path, tc.token)
		if code != tc.code {
			t.Errorf("%s: GET %s: %d %.300q, want %d", tc.name, tc.path, code, body, tc.code)
			continue
		}
		if tc.path == "/metrics" && code == 200 && !strings.Contains(body, "\nweave_scheduler_pods_scheduled_total 1\n") {
			t.Errorf("%s: no weave_scheduler_pods_scheduled_total 1 (the pod bound) in\n%s", tc.name, body)
		}
	}
}

// applyManifests creates the objects of a multi-document YAML file of deploy/ with the admin client.
func applyManifests(t *testing.T, c *harness.Cluster, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opts := metav1.CreateOptions{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch o := obj.(type) {
		case *v1.ServiceAccount:
			_, err = c.Client.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, opts)
		case *rbacv1.ClusterRole:
			_, err = c.Client.RbacV1().ClusterRoles().Create(ctx, o, opts)
		case *rbacv1.ClusterRoleBinding:
			_, err = c.Client.RbacV1().ClusterRoleBindings().Create(ctx, o, opts)
		case *rbacv1.Role:
			_, err = c.Client.RbacV1().Roles(o.Namespace).Create(ctx, o, opts)
		case *rbacv1.RoleBinding:
			_, err = c.Client.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, opts)
		default:
			err = fmt.Errorf("a %T, which applyManifests does not create", obj)
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
}

// waitAllowed waits until the API server's authorizer allows user each of attrs (*ResourceAttributes or
// *NonResourceAttributes), for 30 s.
func waitAllowed(t *testing.T, c *harness.Cluster, user string, attrs ...any) {
	t.Helper()
	for _, a := range attrs {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user}}
		switch a := a.(type) {
		case *authorizationv1.ResourceAttributes:
			sar.Spec.ResourceAttributes = a
		case *authorizationv1.NonResourceAttributes:
			sar.Spec.NonResourceAttributes = a
		}
		err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			r, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
			return err == nil && r.Status.Allowed, err
		})
		if err != nil {
			t.Fatalf("%s is not allowed %+v: %v", user, a, err)
		}
	}
}
