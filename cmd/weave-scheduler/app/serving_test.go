package app

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
)

func TestParseFlagsServing(t *testing.T) {
	cfg, err := ParseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Serving
	if o.SecureServing.BindPort != 10259 || !o.SecureServing.BindAddress.Equal(net.IPv4zero) {
		t.Errorf("default serving %v port %d, want 0.0.0.0 port 10259", o.SecureServing.BindAddress, o.SecureServing.BindPort)
	}
	if want := []string{"/healthz", "/readyz", "/livez"}; !reflect.DeepEqual(o.Authorization.AlwaysAllowPaths, want) {
		t.Errorf("always-allowed paths %v, want %v", o.Authorization.AlwaysAllowPaths, want)
	}
	if c := o.SecureServing.ServerCert; c.CertKey.CertFile != "" || c.CertDirectory != "" {
		t.Errorf("default certificate %+v, want one generated in memory", c)
	}

	cfg, err = ParseFlags([]string{"--secure-port", "8443", "--bind-address=127.0.0.1", "--tls-cert-file", "/tls/crt", "--tls-private-key-file", "/tls/key",
		"--authentication-kubeconfig", "/kc/authn", "--authorization-kubeconfig", "/kc/authz", "--authorization-always-allow-paths", "/healthz,/readyz"})
	if err != nil {
		t.Fatal(err)
	}
	o = cfg.Serving
	got := []any{o.SecureServing.BindPort, o.SecureServing.BindAddress.String(), o.SecureServing.ServerCert.CertKey.CertFile, o.SecureServing.ServerCert.CertKey.KeyFile,
		o.Authentication.RemoteKubeConfigFile, o.Authorization.RemoteKubeConfigFile, o.Authorization.AlwaysAllowPaths}
	want := []any{8443, "127.0.0.1", "/tls/crt", "/tls/key", "/kc/authn", "/kc/authz", []string{"/healthz", "/readyz"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("flags set %v, want %v", got, want)
	}

	for _, bad := range [][]string{{"--bind-address", ":10351"}, {"--secure-port", "70000"}} {
		if _, err := ParseFlags(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	f := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(f, []byte("batchSize: 50\nbindAddress: \":10351\"\n"), 0o644)
	if _, err := ParseFlags([]string{"--config", f}); !errors.Is(err, errRemovedBindAddress) {
		t.Errorf("a file with the plain-HTTP bindAddress: %v, want %v", err, errRemovedBindAddress)
	}
}

// fakeDelegation plays the API server's TokenReview and SubjectAccessReview for the replica's delegated
// authentication and authorization: the token "scraper-token" is the user scraper, allowed get on /metrics;
// "explainer-token" the user explainer, allowed get on /explain/*; "nobody-token" is the user nobody, allowed
// nothing; any other token is invalid. It answers only the
// replica's own credentials (the kubeconfig's token).
type fakeDelegation struct {
	mu   sync.Mutex
	sars []string // user verb path of each SubjectAccessReview
}

const delegationToken = "weave-scheduler-token"

func (d *fakeDelegation) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+delegationToken {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/apis/authentication.k8s.io/v1/tokenreviews":
		var tr authenticationv1.TokenReview
		if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		name, _, ok := strings.Cut(tr.Spec.Token, "-token")
		tr.Status = authenticationv1.TokenReviewStatus{Authenticated: ok && (name == "scraper" || name == "nobody" || name == "explainer"), User: authenticationv1.UserInfo{Username: name}}
		tr.APIVersion, tr.Kind = "authentication.k8s.io/v1", "TokenReview"
		json.NewEncoder(w).Encode(tr)
	case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
		var sar authorizationv1.SubjectAccessReview
		if err := json.NewDecoder(r.Body).Decode(&sar); err != nil || sar.Spec.NonResourceAttributes == nil {
			http.Error(w, "want a non-resource SubjectAccessReview", http.StatusBadRequest)
			return
		}
		nr := sar.Spec.NonResourceAttributes
		d.mu.Lock()
		d.sars = append(d.sars, sar.Spec.User+" "+nr.Verb+" "+nr.Path)
		d.mu.Unlock()
		sar.Status.Allowed = nr.Verb == "get" && (sar.Spec.User == "scraper" && nr.Path == "/metrics" ||
			sar.Spec.User == "explainer" && strings.HasPrefix(nr.Path, "/explain/"))
		sar.APIVersion, sar.Kind = "authorization.k8s.io/v1", "SubjectAccessReview"
		json.NewEncoder(w).Encode(sar)
	default:
		http.NotFound(w, r)
	}
}

// writeKubeconfig writes a kubeconfig for server with the bearer token token.
func writeKubeconfig(t *testing.T, server, token string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "kubeconfig")
	kc := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: "` + token + `"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(f, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSecureServing: the replica serves HTTPS (a generated certificate for localhost when none is given);
// /healthz, /livez and /readyz answer anyone; /metrics answers 401 without credentials or with a token the
// TokenReview rejects, 403 to a user the SubjectAccessReview denies, and the weave_scheduler_* series to
// one it allows; /explain/w/big (why the pending pod w/big waits) likewise; plain HTTP gets nothing.
func TestSecureServing(t *testing.T) {
	d := &fakeDelegation{}
	api := httptest.NewTLSServer(d) // clientcmd sends a kubeconfig's credentials over TLS only
	defer api.Close()
	kc := writeKubeconfig(t, api.URL, delegationToken)
	ln, _, err := apiserveroptions.CreateListener("tcp", "127.0.0.1:0", net.ListenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	startFake(t, newFakeAPI(t, testNode("n1", "4", ""), testPod("big", "8", 0, "")), func(c *Config) {
		c.Serving = NewServingOptions()
		c.Serving.SecureServing.Listener = ln
		c.Serving.Authentication.RemoteKubeConfigFile = kc
		c.Serving.Authorization.RemoteKubeConfigFile = kc
		c.Serving.Authentication.SkipInClusterLookup = true // no extension-apiserver-authentication here
	})
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	base := "https://" + ln.Addr().String()
	get := func(path, token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if err := resp.TLS.PeerCertificates[0].VerifyHostname("localhost"); err != nil {
			t.Errorf("generated certificate: %v", err)
		}
		return resp.StatusCode, string(body)
	}
	for _, tc := range []struct {
		name, path, token string
		code              int
	}{
		{"health checks need no token", "/healthz", "", 200},
		{"liveness needs no token", "/livez", "", 200},
		{"readiness needs no token", "/readyz", "", 200},
		{"a single readiness check is not an always-allowed path", "/readyz/informer-sync", "", 401},
		{"metrics without a token are unauthenticated", "/metrics", "", 401},
		{"metrics with a token the TokenReview rejects are unauthenticated", "/metrics", "forged-token", 401},
		{"metrics for a user the SubjectAccessReview denies are forbidden", "/metrics", "nobody-token", 403},
		{"metrics for a user allowed get on /metrics", "/metrics", "scraper-token", 200},
		{"an allowed user is not allowed every path", "/debug/pprof/", "scraper-token", 403},
		{"explain without a token is unauthenticated", "/explain/w/big", "", 401},
		{"explain for a user the SubjectAccessReview denies is forbidden", "/explain/w/big", "nobody-token", 403},
		{"explain for a user allowed get on /explain/*", "/explain/w/big", "explainer-token", 200},
	} {
		code, body := get(tc.path, tc.token)
		if code != tc.code {
			t.Errorf("%s: GET %s: %d %q, want %d", tc.name, tc.path, code, body, tc.code)
		}
		if tc.path == "/metrics" && code == 200 && !strings.Contains(body, "weave_scheduler_pods_scheduled_total") {
			t.Errorf("%s: no weave_scheduler_pods_scheduled_total in\n%s", tc.name, body)
		}
		if want := "node n1: Insufficient cpu\n"; strings.HasPrefix(tc.path, "/explain/") && code == 200 && !strings.Contains(body, want) {
			t.Errorf("%s: no %q in\n%s", tc.name, want, body)
		}
	}
	d.mu.Lock()
	sars := strings.Join(d.sars, "; ")
	d.mu.Unlock()
	if !strings.Contains(sars, "nobody get /metrics") || !strings.Contains(sars, "scraper get /metrics") || strings.Contains(sars, "/healthz") {
		t.Errorf("SubjectAccessReviews: %s; want nobody's and scraper's get /metrics, none for /healthz", sars)
	}
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 || strings.Contains(string(body), "weave_scheduler_") {
			t.Errorf("plain HTTP: %d %q", resp.StatusCode, body)
		}
	}
}
