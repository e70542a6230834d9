package plural_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/regionsched/regionsched/internal/plural"
)

func TestCounts(t *testing.T) {
	assert.Equal(t, "0 slots", plural.Count(0, "slot"))
	assert.Equal(t, "1 slot", plural.Count(1, "slot"))
	assert.Equal(t, "3 slots", plural.Count(3, "slot"))
	assert.Equal(t, "1 execution vertex", plural.CountOf(1, "execution vertex", "execution vertices"))
	assert.Equal(t, "12 execution vertices", plural.CountOf(12, "execution vertex", "execution vertices"))
	assert.Equal(t, "holds", plural.Of(1, "holds", "hold"))
	assert.Equal(t, "hold", plural.Of(2, "holds", "hold"))
	assert.Equal(t, "the only job", plural.All(1, "job"))
	assert.Equal(t, "all 4 jobs", plural.All(4, "job"))
}
