package gen

// key names a source among all of a run's sources, compiled modules included: "variant/NAME" or
// "support/NAME". Variants and support kernels have separate namespaces (ptx/ and support/), so a
// bare name would let a variant named like a support kernel take its PTX.
func (s Source) key() string {
	if s.Support {
		return "support/" + s.Name
	}
	return "variant/" + s.Name
}
