package workerproc

import (
	"testing"

	"tilegen/internal/testutil"
)

// fakeWorker is the test-double worker binary (testdata/fakeworker), built once for the package's
// tests.
var fakeWorker string

func TestMain(m *testing.M) { testutil.MainWithFakeWorker(m.Run, &fakeWorker) }
