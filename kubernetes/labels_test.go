package kubernetes

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJobLabel(t *testing.T) {
	assert.Equal(t, "etl", JobLabel("etl"))
	assert.Equal(t, "flip119-example", JobLabel("flip119-example"))
	l := JobLabel("Spark Job #1 (daily)")
	assert.Regexp(t, `^spark-job-1-daily-[0-9a-f]{8}$`, l)
	assert.NotEqual(t, l, JobLabel("Spark Job #1 (Daily)"), "names differing in case differ in label")
	long := JobLabel(strings.Repeat("a", 100))
	assert.LessOrEqual(t, len(long), 40)
	assert.True(t, isDNSLabel(long))
	assert.Regexp(t, `^job-[0-9a-f]{8}$`, JobLabel("###"))
}

func TestCheckRun(t *testing.T) {
	require.NoError(t, CheckRun("host-123-abc"))
	for _, bad := range []string{"", "Host", "-x", "x-", "a_b", strings.Repeat("a", 41)} {
		var re *RunError
		require.ErrorAs(t, CheckRun(bad), &re, bad)
		assert.ErrorIs(t, re, ErrBadRun)
	}
}

func TestRefOfRoundTrip(t *testing.T) {
	tmpl := PodTemplate{}
	ref := TaskRef{Run: "r1", Job: "Spark Job #1", Task: 7, Attempt: 2, Region: 3}
	pod := tmpl.Pod(Placement{Ref: ref, TaskName: "map#3", Slot: 12, Node: "n1", CompleteAfter: 1500 * time.Millisecond})
	got, err := RefOf(pod)
	require.NoError(t, err)
	assert.Equal(t, ref, got)
	slot, err := SlotOf(pod)
	require.NoError(t, err)
	assert.EqualValues(t, 12, slot)
	assert.Equal(t, "1500ms", pod.Annotations[AnnotationCompleteAfter])
	assert.Equal(t, "r1/Spark Job #1/7@2", ref.String())
}

func TestRefOfRefusesStrangers(t *testing.T) {
	pods := loadPods(t, "pods.json")
	_, err := RefOf(podNamed(t, pods, "web-1"))
	var le *LabelError
	require.ErrorAs(t, err, &le)
	assert.ErrorIs(t, err, ErrNotOurs)
	assert.Equal(t, LabelRun, le.Label)

	ours := podNamed(t, pods, "rs-r1-etl-t0-a0").DeepCopy()
	ref, err := RefOf(ours)
	require.NoError(t, err)
	assert.Equal(t, TaskRef{Run: "r1", Job: "etl"}, ref)

	ours.Labels[LabelAttempt] = "-1"
	_, err = RefOf(ours)
	require.ErrorAs(t, err, &le)
	assert.ErrorIs(t, err, ErrBadLabel)
	assert.Equal(t, LabelAttempt, le.Label)

	ours.Labels[LabelAttempt] = "0"
	ours.Annotations[AnnotationJob] = "other"
	_, err = RefOf(ours)
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LabelJob, le.Label)
}

func TestCompleteAfter(t *testing.T) {
	assert.Equal(t, "5000ms", CompleteAfter(5*time.Second))
	assert.Equal(t, "1ms", CompleteAfter(time.Microsecond))
}
