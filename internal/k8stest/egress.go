package k8stest

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// EgressAllows reports whether the network policies selecting podLabels
// let those pods open a TCP connection to ip (outside the cluster) on
// port, by the NetworkPolicy rules: a rule allows when one of its ports
// matches (or it lists none) and one of its peers is an ipBlock holding ip
// outside its exceptions (or it lists no peers); namespace and pod
// selectors never match an address outside the cluster. A selector or
// CIDR that does not parse fails the test.
func EgressAllows(t testing.TB, pols []*networkingv1.NetworkPolicy, podLabels map[string]string, ip string, port int32) bool {
	t.Helper()
	addr := netip.MustParseAddr(ip)
	contains := func(cidr string) bool {
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			t.Fatalf("ipBlock %q: %v", cidr, err)
		}
		return p.Contains(addr)
	}
	for _, p := range pols {
		sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if !sel.Matches(labels.Set(podLabels)) {
			continue
		}
		for _, r := range p.Spec.Egress {
			portOK := len(r.Ports) == 0
			for _, rp := range r.Ports {
				proto := corev1.ProtocolTCP
				if rp.Protocol != nil {
					proto = *rp.Protocol
				}
				portOK = portOK || (proto == corev1.ProtocolTCP && (rp.Port == nil || rp.Port.IntVal == port))
			}
			if !portOK {
				continue
			}
			if len(r.To) == 0 {
				return true
			}
			for _, peer := range r.To {
				if peer.IPBlock != nil && contains(peer.IPBlock.CIDR) && !slices.ContainsFunc(peer.IPBlock.Except, contains) {
					return true
				}
			}
		}
	}
	return false
}
