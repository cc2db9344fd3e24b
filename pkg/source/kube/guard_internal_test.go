package kube

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckRequest(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		direct, ok   bool
	}{
		{"GET", "/api/v1/namespaces/a/pods", false, true},
		{"GET", "/apis/nvidia.com/v1alpha1/dynamoworkermetadatas", false, true},
		{"POST", "/api/v1/namespaces/a/services/fe:8000/proxy/tokenize", false, true},
		{"POST", "/api/v1/namespaces/a/services/fe/proxy/query", false, true},
		{"POST", "/k8s/clusters/c-1/api/v1/namespaces/a/services/fe:8000/proxy/tokenize", false, true}, // a server URL with a prefix
		{"POST", "/api/v1/namespaces/a/services/fe:8000/proxy/busy_threshold", false, false},
		{"POST", "/api/v1/namespaces/a/services/fe:8000/proxy/tokenize/x", false, false},
		{"POST", "/api/v1/namespaces/a/serviceaccounts/sa/token", false, false},
		{"POST", "/api/v1/namespaces/a/pods/p/proxy/tokenize", false, false},
		{"POST", "/apis/authentication.k8s.io/v1/tokenreviews", false, false},
		{"DELETE", "/api/v1/namespaces/a/pods/p", false, false},
		{"PUT", "/api/v1/namespaces/a/services/fe:8000/proxy/tokenize", false, false},
		{"PATCH", "/apis/nvidia.com/v1beta1/namespaces/a/dynamographdeployments/d", false, false},
		{"HEAD", "/api", false, false},
		{"GET", "/metrics", true, true},
		{"POST", "/tokenize", true, true},
		{"POST", "/v1/query", true, true},
		{"POST", "/busy_threshold", true, false},
		{"POST", "/v1/chat/completions", true, false},
		{"DELETE", "/tokenize", true, false},
	} {
		allow := apiProxyPOST
		if tc.direct {
			allow = directPOST
		}
		err := checkRequest(tc.method, tc.path, allow, "x")
		if (err == nil) != tc.ok {
			t.Errorf("%s %s (direct %v): %v, want allowed=%v", tc.method, tc.path, tc.direct, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, ErrRequestRefused) || !strings.Contains(err.Error(), tc.method+" "+tc.path)) {
			t.Errorf("%s %s: error %q does not wrap ErrRequestRefused or name the request", tc.method, tc.path, err)
		}
	}
}
