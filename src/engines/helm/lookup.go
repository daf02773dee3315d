package main

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// LookupKey is one `lookup` call as the template made it (helm's pkg/engine/lookup_func.go):
// an object by name, or a list when Name is "". Namespace is what the template passed, for
// cluster-scoped kinds too (the host knows the scope; the engine does not).
type LookupKey struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

// LookupAnswer is the host's answer to one lookup: the object (or the list, with items), or
// no object when there is none or the App may not read it (lookup then returns an empty map,
// as Helm's does for a NotFound).
type LookupAnswer struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Namespace  string         `json:"namespace"`
	Name       string         `json:"name"`
	Object     map[string]any `json:"object,omitempty"`
}

// lookups answers `lookup` from the host's answers and records the calls it could not answer.
// The render stays a pure function of its request: the host fetches what was missing and
// renders again with it (see docs/design.md, "Render engines").
type lookups struct {
	answers map[LookupKey]map[string]any
	seen    map[LookupKey]bool
	missing []LookupKey
}

func newLookups(answers []LookupAnswer) *lookups {
	l := &lookups{answers: map[LookupKey]map[string]any{}, seen: map[LookupKey]bool{}}
	for _, a := range answers {
		l.answers[LookupKey{a.APIVersion, a.Kind, a.Namespace, a.Name}] = a.Object
	}
	return l
}

// answer is the host's object for key; a key it was not asked yet is recorded as missing.
func (l *lookups) answer(key LookupKey) map[string]any {
	obj, ok := l.answers[key]
	if !ok && !l.seen[key] {
		l.seen[key] = true
		l.missing = append(l.missing, key)
	}
	return obj
}

// GetClientFor is engine.ClientProvider: every kind counts as namespaced, so the namespace
// the template gave reaches the host, which applies the kind's real scope.
func (l *lookups) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	return &lookupClient{l: l, key: LookupKey{APIVersion: apiVersion, Kind: kind}}, true, nil
}

// lookupClient is the part of a dynamic client that Helm's lookup calls: Namespace, Get and
// List. The embedded interface is nil: any other method would panic, and lookup calls none.
type lookupClient struct {
	dynamic.NamespaceableResourceInterface
	l   *lookups
	key LookupKey
}

func (c *lookupClient) Namespace(ns string) dynamic.ResourceInterface {
	key := c.key
	key.Namespace = ns
	return &lookupClient{l: c.l, key: key}
}

func (c *lookupClient) notFound(name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: c.key.Kind}, name)
}

func (c *lookupClient) Get(_ context.Context, name string, _ metav1.GetOptions, _ ...string) (*unstructured.Unstructured, error) {
	key := c.key
	key.Name = name
	obj := c.l.answer(key)
	if len(obj) == 0 {
		return nil, c.notFound(name)
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

func (c *lookupClient) List(_ context.Context, _ metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	obj := c.l.answer(c.key)
	if len(obj) == 0 {
		return nil, c.notFound("")
	}
	list := &unstructured.UnstructuredList{}
	list.SetUnstructuredContent(obj)
	return list, nil
}
