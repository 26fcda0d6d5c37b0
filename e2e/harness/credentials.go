package harness

import (
	"context"
	"path/filepath"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ServiceAccountToken creates the service account ns/name unless it exists, and returns a token of it from
// the TokenRequest API (the API server's audiences, valid an hour): the bearer token a pod of that service
// account presents. No controller runs here, so nothing else makes one.
func (c *Cluster) ServiceAccountToken(ctx context.Context, ns, name string) (string, error) {
	sa := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if _, err := c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	tr, err := c.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}

// Kubeconfig writes a kubeconfig file that reaches the API server as the bearer of token (the admin's
// credentials when token is empty) into t's temporary directory and returns its path: for a component
// that reads its credentials from a file, as weave-scheduler's --authentication-kubeconfig.
func (c *Cluster) Kubeconfig(t testing.TB, token string) string {
	t.Helper()
	if token == "" {
		token = c.Config.BearerToken
	}
	tls := c.Config.TLSClientConfig
	kc := clientcmdapi.NewConfig()
	kc.Clusters["harness"] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthority: tls.CAFile,
		CertificateAuthorityData: tls.CAData, TLSServerName: tls.ServerName, InsecureSkipTLSVerify: tls.Insecure}
	kc.AuthInfos["harness"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["harness"] = &clientcmdapi.Context{Cluster: "harness", AuthInfo: "harness"}
	kc.CurrentContext = "harness"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}
