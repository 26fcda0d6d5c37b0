package app

// The replica's HTTPS server, wired as kube-scheduler v1.37.2 wires its own (cmd/kube-scheduler/app:
// options.NewOptions, Options.Config and ApplyTo, server.go's Run, buildHandlerChain and newEndpointsHandler):
// k8s.io/apiserver's SecureServingOptions (a self-signed certificate in memory unless --tls-cert-file is
// given), DelegatingAuthenticationOptions (bearer tokens checked by a TokenReview, client certificates against
// the CA of kube-system/extension-apiserver-authentication) and DelegatingAuthorizationOptions (a
// SubjectAccessReview per caller and path, except the always-allowed /healthz, /readyz and /livez).

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/path"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/server/mux"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes/scheme"
)

// DefaultSecurePort is kube-scheduler's port (kubeschedulerconfig.DefaultKubeSchedulerPort): weave-scheduler
// replacing kube-scheduler is scraped and probed where kube-scheduler was.
const DefaultSecurePort = 10259

// ServingOptions configure the HTTPS server of /healthz, /readyz, /livez and /metrics: kube-scheduler's own
// options, with its defaults and its flags (AddFlags).
type ServingOptions struct {
	SecureServing  *apiserveroptions.SecureServingOptions
	Authentication *apiserveroptions.DelegatingAuthenticationOptions
	Authorization  *apiserveroptions.DelegatingAuthorizationOptions
}

// NewServingOptions returns kube-scheduler's defaults (options.NewOptionsWithComponentGlobalsRegistry): port
// 10259 on every interface, a self-signed certificate generated in memory, delegation through the in-cluster
// configuration when no --authentication-kubeconfig/--authorization-kubeconfig is given (outside a cluster,
// without them, every request but the always-allowed paths is refused), /healthz, /readyz and /livez
// always allowed, and system:masters allowed everything.
func NewServingOptions() *ServingOptions {
	o := &ServingOptions{
		SecureServing:  apiserveroptions.NewSecureServingOptions(),
		Authentication: apiserveroptions.NewDelegatingAuthenticationOptions(),
		Authorization:  apiserveroptions.NewDelegatingAuthorizationOptions(),
	}
	o.Authentication.TolerateInClusterLookupFailure = true
	o.Authentication.RemoteKubeConfigFileOptional = true
	o.Authorization.RemoteKubeConfigFileOptional = true
	o.SecureServing.ServerCert.CertDirectory = ""
	o.SecureServing.ServerCert.PairName = "weave-scheduler"
	o.SecureServing.BindPort = DefaultSecurePort
	return o
}

// AddFlags adds kube-scheduler's "secure serving", "authentication" and "authorization" flags: --secure-port,
// --bind-address, --tls-cert-file, --tls-private-key-file, --authentication-kubeconfig,
// --authorization-kubeconfig, --authorization-always-allow-paths and the rest of k8s.io/apiserver's.
func (o *ServingOptions) AddFlags(fs *pflag.FlagSet) {
	o.SecureServing.AddFlags(fs)
	o.Authentication.AddFlags(fs)
	o.Authorization.AddFlags(fs)
}

// Validate reports the options' errors (a port out of range, inconsistent request-header flags).
func (o *ServingOptions) Validate() error {
	if o == nil {
		return nil
	}
	var errs []error
	errs = append(errs, o.SecureServing.Validate()...)
	errs = append(errs, o.Authentication.Validate()...)
	errs = append(errs, o.Authorization.Validate()...)
	return errors.Join(errs...)
}

// serve starts the HTTPS server, unless s.cfg.Serving is nil or its port 0; stop shuts it down and waits
// for it. As kube-scheduler, the server runs on every replica, leader or not, from before the informers sync.
func (s *Server) serve(ctx context.Context) (stop func(), err error) {
	o := s.cfg.Serving
	if o == nil {
		return func() {}, nil
	}
	// A copy: ApplyTo keeps the listener it opens in the options, and a Config may start another replica.
	ss := *o.SecureServing
	if err := ss.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.IPv4(127, 0, 0, 1)}); err != nil {
		return nil, fmt.Errorf("self-signed certificate: %w", err)
	}
	var info *server.SecureServingInfo
	if err := ss.ApplyTo(&info); err != nil {
		return nil, err
	}
	if info == nil {
		return func() {}, nil // --secure-port=0
	}
	handler, err := s.securedHandler(ctx, o, info)
	if err != nil {
		info.Listener.Close()
		return nil, err
	}
	stopCh := make(chan struct{})
	stopped, listenerStopped, err := info.Serve(handler, 5*time.Second, stopCh)
	if err != nil {
		close(stopCh)
		info.Listener.Close()
		return nil, err
	}
	s.log.Info("serving HTTPS", "address", info.Listener.Addr().String())
	return func() {
		close(stopCh)
		<-listenerStopped
		<-stopped
	}, nil
}

// securedHandler is the endpoints behind the delegated authentication and authorization.
func (s *Server) securedHandler(ctx context.Context, o *ServingOptions, info *server.SecureServingInfo) (http.Handler, error) {
	var authn server.AuthenticationInfo
	if err := o.Authentication.ApplyTo(&authn, info, nil); err != nil {
		return nil, err
	}
	var authz server.AuthorizationInfo
	if err := o.Authorization.ApplyTo(&authz); err != nil {
		return nil, err
	}
	anonymous, err := anonymousOnly(authn.Authenticator, o.Authorization.AlwaysAllowPaths)
	if err != nil {
		return nil, err
	}
	return buildHandlerChain(s.endpoints(ctx), anonymous, authz.Authorizer), nil
}

// buildHandlerChain is kube-scheduler's (cmd/kube-scheduler/app/server.go): the endpoints behind
// authorization, authentication, request info, no caching, request logging and panic recovery.
func buildHandlerChain(handler http.Handler, authn authenticator.Request, authz authorizer.UnconditionalAuthorizer) http.Handler {
	requestInfoResolver := &apirequest.RequestInfoFactory{}
	failedHandler := genericapifilters.Unauthorized(scheme.Codecs)

	handler = genericapifilters.WithAuthorization(handler, authz, scheme.Codecs)
	handler = genericapifilters.WithAuthentication(handler, authn, failedHandler, nil, nil)
	handler = genericapifilters.WithRequestInfo(handler, requestInfoResolver)
	handler = genericapifilters.WithCacheControl(handler)
	handler = genericfilters.WithHTTPLogging(handler)
	handler = genericfilters.WithPanicRecovery(handler, requestInfoResolver)
	return handler
}

// anonymousOnly keeps the anonymous user to the always-allowed paths: elsewhere a request without
// credentials is unauthenticated, 401. Here weave-scheduler departs from kube-scheduler, whose delegating
// authenticator makes such a request system:anonymous on every path (DelegatingAuthenticationOptions.ApplyTo
// enables anonymous authentication unconditionally) and answers 403 once the SubjectAccessReview denies it,
// or 200 in a cluster that grants system:anonymous more than it should. kube-apiserver's own structured
// authentication configuration limits anonymous requests to paths the same way (anonymous.conditions).
func anonymousOnly(authn authenticator.Request, allowedPaths []string) (authenticator.Request, error) {
	allowed, err := path.NewAuthorizer(allowedPaths)
	if err != nil {
		return nil, err
	}
	return authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		resp, ok, err := authn.AuthenticateRequest(req)
		if ok && resp.User.GetName() == user.Anonymous {
			d, _, _ := allowed.Authorize(req.Context(), authorizer.AttributesRecord{Path: req.URL.Path})
			if d != authorizer.DecisionAllow {
				return nil, false, nil
			}
		}
		return resp, ok, err
	}), nil
}

// endpoints serves /healthz, /livez and /readyz (apiserver's health handlers, as kube-scheduler's
// newEndpointsHandler installs them; /readyz checks that the informers have synced and that the replica is
// not shutting down), /metrics (the weave_scheduler_* series and Go's and the process's) and
// /explain/NAMESPACE/POD (why a pending pod waits: Explain, why.go).
func (s *Server) endpoints(ctx context.Context) http.Handler {
	m := mux.NewPathRecorderMux("weave-scheduler")
	healthz.InstallHandler(m)
	healthz.InstallLivezHandler(m)
	healthz.InstallReadyzHandler(m,
		healthz.NewShutdownHealthz(ctx.Done()),
		healthz.NamedCheck("informer-sync", func(*http.Request) error {
			if !s.synced.Load() {
				return errors.New("informers not synced")
			}
			return nil
		}))
	m.Handle("/metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	m.HandlePrefix("/explain/", http.HandlerFunc(s.serveExplain))
	return m
}
