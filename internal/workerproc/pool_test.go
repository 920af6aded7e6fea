package workerproc

import "testing"

func TestParseDevices(t *testing.T) {
	if d, err := ParseDevices("0,1,1"); err != nil || len(d) != 2 {
		t.Errorf("ParseDevices: %v %v", d, err)
	}
	if d, err := ParseDevices("all"); err != nil || d != nil {
		t.Errorf("ParseDevices(all): %v %v", d, err)
	}
}

// TestPickAffinity: a slot takes unkeyed tasks and its own or unclaimed keys in queue order,
// claiming keys as it goes; with only other slots' keys left it takes the first task.
func TestPickAffinity(t *testing.T) {
	q := func(keys ...string) []Task {
		out := make([]Task, len(keys))
		for i, k := range keys {
			out[i] = Task{Key: k}
		}
		return out
	}
	owner := map[string]int{}
	// Shape-major: variants a, b, c on two shapes. Slot 0 claims a, slot 1 skips a and claims b.
	queue := q("a", "b", "c", "a", "b", "c")
	if i := pick(queue, owner, 0); i != 0 || owner["a"] != 0 {
		t.Fatalf("slot 0 took %d, owner %v", i, owner)
	}
	queue = queue[1:]
	if i := pick(queue, owner, 1); i != 0 || owner["b"] != 1 {
		t.Fatalf("slot 1 took %d, owner %v", i, owner)
	}
	queue = queue[1:] // c a b c
	if i := pick(queue, owner, 1); i != 0 || owner["c"] != 1 {
		t.Fatalf("slot 1 took %d (want c), owner %v", i, owner)
	}
	queue = queue[1:] // a b c
	if i := pick(queue, owner, 1); i != 1 {
		t.Fatalf("slot 1 took %d, want its own b past slot 0's a", i)
	}
	if i := pick(q("a", "", "b"), owner, 0); i != 0 {
		t.Fatalf("slot 0 took %d, want its a", i)
	}
	if i := pick(q("b", "", "a"), owner, 0); i != 1 {
		t.Fatalf("slot 0 took %d, want the unkeyed task before its own", i)
	}
	// Only slot 1's keys left: slot 0 steals the first, claiming nothing.
	if i := pick(q("c", "b"), owner, 0); i != 0 || owner["c"] != 1 || owner["b"] != 1 {
		t.Fatalf("slot 0 took %d, owner %v", i, owner)
	}
	if len(owner) != 3 {
		t.Fatalf("owner %v", owner)
	}
}
