package shapes

import "testing"

func TestNearest(t *testing.T) {
	squared := Rule{Metric: SquaredLog}
	cands := [][3]int{{1024, 1024, 1024}, {4096, 4096, 4096}, {2048, 2048, 2048}, {2048, 2048, 2048}}
	at := func(i int) (int, int, int) { return cands[i][0], cands[i][1], cands[i][2] }
	for _, tc := range []struct {
		name    string
		r       Rule
		m, n, k int
		better  func(i, best int) bool
		want    int
	}{
		{"exact", squared, 4096, 4096, 4096, nil, 1},
		{"log scale: 1536 is nearer 2048 than 1024", squared, 1536, 1536, 1536, nil, 2},
		{"ties go to the first", squared, 2048, 2048, 2048, nil, 2},
		{"ties go to the better", Best, 2048, 2048, 2048, func(i, best int) bool { return i > best }, 3},
		{"better only breaks ties", Best, 1024, 1024, 1024, func(i, best int) bool { return true }, 0},
		// The metrics disagree on 8192×1024×1024: AbsLog puts 1024³ nearer (3·ln 2 against 4·ln 2),
		// SquaredLog 2048³ (6·ln²2 against 9·ln²2).
		{"AbsLog prefers one long side", Best, 8192, 1024, 1024, nil, 0},
		{"SquaredLog prefers the balanced", squared, 8192, 1024, 1024, nil, 2},
	} {
		if got := Nearest(tc.r, tc.m, tc.n, tc.k, len(cands), at, tc.better); got != tc.want {
			t.Errorf("%s: Nearest = %d, want %d", tc.name, got, tc.want)
		}
	}
	if got := Nearest(squared, 1, 1, 1, 0, at, nil); got != -1 {
		t.Errorf("no candidates: %d, want -1", got)
	}
}
